/* SPDX-License-Identifier: BSD-2-Clause */
/* CRC32C against the RFC 3720 B.4 / RFC 7143 test vectors, both
 * implementations, and incremental use as the receive path does it. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

static const crc_fn impls[] = { tcp_crc32c_sw, tcp_crc32c_hw, tcp_crc32c };
static const char *const names[] = { "slicing-by-8", "sse4.2", "dispatch" };

static uint32_t digest(crc_fn f, const void *p, size_t n)
{
	return tcp_crc32c_final(f(TCP_CRC32C_INIT, p, n));
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
	crc_fn f = impls[_i];
	uint8_t buf[32];

	memset(buf, 0, sizeof(buf));
	ck_assert_msg(digest(f, buf, 32) == 0x8a9136aau, "%s zeros", names[_i]);
	memset(buf, 0xff, sizeof(buf));
	ck_assert_msg(digest(f, buf, 32) == 0x62a8ab43u, "%s ones", names[_i]);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	ck_assert_msg(digest(f, buf, 32) == 0x46dd794eu, "%s incrementing",
		      names[_i]);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	ck_assert_msg(digest(f, buf, 32) == 0x113fdb5cu, "%s decrementing",
		      names[_i]);
	ck_assert_msg(digest(f, read10, 48) == 0xd9963a56u, "%s read10",
		      names[_i]);
	ck_assert_msg(digest(f, "", 0) == 0, "%s empty", names[_i]);
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

/* every split point and misalignment gives the same digest, and the
 * implementations agree on odd lengths */
START_TEST(incremental_and_agree)
{
	enum { N = 1000 };
	uint8_t *buf = malloc(N + 8);
	uint32_t seed = 12345;

	ck_assert_ptr_nonnull(buf);
	for (int i = 0; i < N + 8; i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (uint8_t)(seed >> 16);
	}
	for (size_t off = 0; off < 8; off++) {
		for (size_t len = 0; len <= 300; len += 7) {
			uint32_t a = digest(tcp_crc32c_sw, buf + off, len);
			ck_assert_uint_eq(
				a, digest(tcp_crc32c_hw, buf + off, len));
			ck_assert_uint_eq(a,
					  digest(tcp_crc32c, buf + off, len));
			for (size_t cut = 0; cut <= len; cut += 13) {
				uint32_t c = tcp_crc32c(TCP_CRC32C_INIT,
							buf + off, cut);
				c = tcp_crc32c(c, buf + off + cut, len - cut);
				ck_assert_uint_eq(tcp_crc32c_final(c), a);
			}
		}
	}
	ck_assert_uint_eq(digest(tcp_crc32c_sw, buf, N),
			  digest(tcp_crc32c_hw, buf, N));
	free(buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tcp_crc32c");
	TCase *tc = tcase_create("crc32c");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, vectors, 0, 3);
	tcase_add_test(tc, wire_order);
	tcase_add_test(tc, incremental_and_agree);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
