/* SPDX-License-Identifier: BSD-2-Clause */
/* CRC32C: every implementation compiled in (those this CPU runs) against
 * the RFC 3720 B.4 / RFC 7143 vectors and against the portable
 * slicing-by-8 reference on every length up to 4 KiB from every
 * misalignment, on large random buffers, and split anywhere as the
 * receive path feeds it; the zero shift; choosing an implementation. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"

static const struct tcp_crc32c_impl *impl(int i)
{
	size_t n;
	const struct tcp_crc32c_impl *t = tcp_crc32c_impls(&n);

	ck_assert_uint_lt((size_t)i, n);
	return &t[i];
}

static int n_impls(void)
{
	size_t n;

	tcp_crc32c_impls(&n);
	return (int)n;
}

/* the implementation under test, or NULL (and a note) if this CPU lacks
 * it: the test then checks nothing */
static const struct tcp_crc32c_impl *usable(int i)
{
	const struct tcp_crc32c_impl *t = impl(i);

	if (t->usable())
		return t;
	fprintf(stderr, "crc32c %s: not on this CPU, not tested\n", t->name);
	return NULL;
}

static uint32_t digest(tcp_crc32c_fn f, const void *p, size_t n)
{
	return tcp_crc32c_final(f(TCP_CRC32C_INIT, p, n));
}

static uint32_t seed = 12345;

static void fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

static uint8_t *random_buf(size_t n)
{
	uint8_t *p = malloc(n ? n : 1);

	ck_assert_ptr_nonnull(p);
	fill(p, n);
	return p;
}

/* the SCSI Read(10) command PDU of RFC 3720 B.4 */
static const uint8_t read10[48] = {
	0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
	0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

START_TEST(vectors)
{
	const struct tcp_crc32c_impl *t = usable(_i);
	uint8_t buf[32];

	if (!t)
		return;
	memset(buf, 0, sizeof(buf));
	ck_assert_msg(digest(t->fn, buf, 32) == 0x8a9136aau, "%s zeros",
		      t->name);
	memset(buf, 0xff, sizeof(buf));
	ck_assert_msg(digest(t->fn, buf, 32) == 0x62a8ab43u, "%s ones",
		      t->name);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	ck_assert_msg(digest(t->fn, buf, 32) == 0x46dd794eu, "%s incrementing",
		      t->name);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	ck_assert_msg(digest(t->fn, buf, 32) == 0x113fdb5cu, "%s decrementing",
		      t->name);
	ck_assert_msg(digest(t->fn, read10, 48) == 0xd9963a56u, "%s read10",
		      t->name);
	ck_assert_msg(digest(t->fn, "123456789", 9) == 0xe3069283u,
		      "%s check value", t->name);
	ck_assert_msg(digest(t->fn, "", 0) == 0, "%s empty", t->name);
}
END_TEST

/* a megabyte of zeros, long enough for every wide path's main loop, has
 * the CRC the reference gives and that the zero shift predicts */
START_TEST(long_zeros)
{
	const struct tcp_crc32c_impl *t = usable(_i);
	size_t n = 1u << 20;
	uint8_t *z = calloc(1, n);

	ck_assert_ptr_nonnull(z);
	if (t) {
		uint32_t want = tcp_crc32c_shift(TCP_CRC32C_INIT, n);
		ck_assert_uint_eq(t->fn(TCP_CRC32C_INIT, z, n), want);
		ck_assert_uint_eq(tcp_crc32c_sw(TCP_CRC32C_INIT, z, n), want);
	}
	free(z);
}
END_TEST

/* the wire carries the digest least significant byte first (B.4 lists
 * 32 zero bytes' CRC as aa 36 91 8a) */
START_TEST(wire_order)
{
	uint8_t b[4];

	tcp_crc32c_put(b, 0x8a9136aau);
	ck_assert(b[0] == 0xaa && b[1] == 0x36 && b[2] == 0x91 && b[3] == 0x8a);
	ck_assert_uint_eq(tcp_crc32c_get(b), 0x8a9136aau);
}
END_TEST

/* every length 0..4096 from 16 misalignments, any starting CRC */
START_TEST(every_length)
{
	enum { N = 4096, OFFS = 16 };
	const struct tcp_crc32c_impl *t = usable(_i);
	uint8_t *buf = random_buf(N + OFFS);

	for (size_t off = 0; t && off < OFFS; off++) {
		const uint8_t *p = buf + off;
		for (size_t len = 0; len <= N; len++) {
			uint32_t init = (uint32_t)(len * 2654435761u + off);
			uint32_t want = tcp_crc32c_sw(init, p, len);
			uint32_t got = t->fn(init, p, len);
			if (got != want)
				ck_abort_msg("%s: offset %zu length %zu: "
					     "0x%08x, want 0x%08x",
					     t->name, off, len, got, want);
		}
	}
	free(buf);
}
END_TEST

/* random lengths up to 4 MiB, random starts, and the lengths where the
 * code changes strategy (3-stream rounds of 3 x 8192 and 3 x 256 bytes,
 * 64/256-byte folding rounds), each side of them */
START_TEST(large_random)
{
	enum { MAX = 4 << 20 };
	static const size_t edges[] = { 127,	128,   511,   512,   767,
					768,	769,   1023,  1024,  4095,
					4096,	24575, 24576, 24577, 24576 + 768,
					65536,	65537, 262144, 1048576 + 13 };
	const struct tcp_crc32c_impl *t = usable(_i);
	uint8_t *buf = random_buf(MAX + 64);

	for (size_t i = 0; t && i < sizeof(edges) / sizeof(edges[0]); i++)
		for (size_t off = 0; off < 64; off += 9)
			ck_assert_msg(t->fn(0, buf + off, edges[i]) ==
					      tcp_crc32c_sw(0, buf + off,
							    edges[i]),
				      "%s length %zu offset %zu", t->name,
				      edges[i], off);
	for (int r = 0; t && r < 40; r++) {
		size_t len, off;
		seed = seed * 1103515245u + 12345u;
		len = (seed >> 4) % MAX;
		if (r < 20)
			len %= 70000; /* more of the sizes PDUs have */
		off = seed % 64;
		ck_assert_msg(digest(t->fn, buf + off, len) ==
				      digest(tcp_crc32c_sw, buf + off, len),
			      "%s length %zu offset %zu", t->name, len, off);
	}
	free(buf);
}
END_TEST

/* split anywhere (as the receive path feeds whatever recv returned), the
 * pieces chain to the CRC of the whole */
START_TEST(incremental)
{
	enum { N = 70000 };
	const struct tcp_crc32c_impl *t = usable(_i);
	uint8_t *buf = random_buf(N);
	uint32_t whole = digest(tcp_crc32c_sw, buf, N);

	for (size_t cut = 0; t && cut <= N; cut += 997) {
		for (size_t cut2 = cut; cut2 <= N; cut2 += 9973) {
			uint32_t c = t->fn(TCP_CRC32C_INIT, buf, cut);
			c = t->fn(c, buf + cut, cut2 - cut);
			c = t->fn(c, buf + cut2, N - cut2);
			ck_assert_uint_eq(tcp_crc32c_final(c), whole);
		}
	}
	free(buf);
}
END_TEST

/* CRC(A then B) = shift(CRC(A), |B|) ^ CRC from 0 over B */
START_TEST(shift)
{
	enum { N = 20000 };
	uint8_t *buf = random_buf(N);
	uint8_t zeros[1000] = { 0 };

	for (size_t cut = 0; cut <= N; cut += 1234) {
		uint32_t a = tcp_crc32c(TCP_CRC32C_INIT, buf, cut);
		uint32_t b = tcp_crc32c(0, buf + cut, N - cut);
		ck_assert_uint_eq(tcp_crc32c_shift(a, N - cut) ^ b,
				  tcp_crc32c(TCP_CRC32C_INIT, buf, N));
	}
	for (size_t n = 0; n <= sizeof(zeros); n += 7)
		ck_assert_uint_eq(tcp_crc32c_shift(0x12345678u, n),
				  tcp_crc32c_sw(0x12345678u, zeros, n));
	ck_assert_uint_eq(tcp_crc32c_shift(0, 1000), 0);
	free(buf);
}
END_TEST

/* tcp_crc32c runs what it is told to, refuses what cannot run here */
START_TEST(force)
{
	uint8_t *buf = random_buf(5000);
	uint32_t want = tcp_crc32c_sw(TCP_CRC32C_INIT, buf, 5000);
	const char *best;

	ck_assert_int_eq(tcp_crc32c_force(NULL), 0);
	best = tcp_crc32c_name();
	for (int i = 0; i < n_impls(); i++) {
		const struct tcp_crc32c_impl *t = impl(i);
		int rc = tcp_crc32c_force(t->name);
		if (!t->usable()) {
			ck_assert_int_eq(rc, -ENOTSUP);
			continue;
		}
		ck_assert_int_eq(rc, 0);
		ck_assert_str_eq(tcp_crc32c_name(), t->name);
		ck_assert_uint_eq(tcp_crc32c(TCP_CRC32C_INIT, buf, 5000), want);
	}
	ck_assert_int_eq(tcp_crc32c_force("no-such-crc"), -ENOENT);
	ck_assert_str_eq(tcp_crc32c_name(), "sw");
	ck_assert_int_eq(tcp_crc32c_force(NULL), 0);
	ck_assert_str_eq(tcp_crc32c_name(), best);
	free(buf);
}
END_TEST

/* IDM_TCP_CRC32C chooses at first use (run in a fresh child only);
 * a name this CPU cannot run, or no name, leaves the best */
START_TEST(env_choice)
{
	setenv("IDM_TCP_CRC32C", "sw", 1);
	ck_assert_str_eq(tcp_crc32c_name(), "sw");
	ck_assert_uint_eq(digest(tcp_crc32c, read10, 48), 0xd9963a56u);
}
END_TEST

START_TEST(env_unknown)
{
	const char *best = NULL;

	for (int i = 0; i < n_impls() && !best; i++)
		if (impl(i)->usable())
			best = impl(i)->name;
	setenv("IDM_TCP_CRC32C", "no-such-crc", 1);
	ck_assert_str_eq(tcp_crc32c_name(), best);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tcp_crc32c");
	TCase *tc = tcase_create("crc32c");
	int n = n_impls();
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, vectors, 0, n);
	tcase_add_loop_test(tc, long_zeros, 0, n);
	tcase_add_test(tc, wire_order);
	tcase_add_loop_test(tc, every_length, 0, n);
	tcase_add_loop_test(tc, large_random, 0, n);
	tcase_add_loop_test(tc, incremental, 0, n);
	tcase_add_test(tc, shift);
	tcase_add_test(tc, force);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	/* the environment is read once per process: only in forked tests */
	if (srunner_fork_status(sr) == CK_FORK) {
		TCase *te = tcase_create("environment");
		tcase_add_test(te, env_choice);
		tcase_add_test(te, env_unknown);
		suite_add_tcase(s, te);
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
