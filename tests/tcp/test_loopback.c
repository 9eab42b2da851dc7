/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Loopback integration: a libidm initiator and a libidm target in one
 * process over 127.0.0.1. Login through Send_Control, Notice_Key_Values,
 * Enable_Datamover, then READs (Put_Data) and WRITEs (Get_Data, immediate
 * and unsolicited data) from 1 byte to 16 MiB with every byte checked,
 * across the operational keys that shape the data movement.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

static const uint32_t small_sizes[] = { 1, 511, 512, 4096, 8191, 65537 };

struct burst {
	uint32_t fbl, mbl;
};
static const struct burst bursts[] = {
	{ 512, 512 },      /* smallest legal: every burst one PDU of 512 */
	{ 4096, 16384 },   /* bursts shorter than the data */
	{ 65536, 262144 }, /* RFC 7143 defaults */
};

struct mrdsl {
	uint32_t ini, tgt;
};
static const struct mrdsl mrdsls[] = {
	{ 512, 8192 },     /* Data-In split finely, Data-Out coarse */
	{ 8192, 512 },     /* the other way round */
	{ 262144, 65536 }, /* segments larger than some bursts */
};

struct digest {
	bool hd, dd;
};
static const struct digest digests[] = {
	{ false, false }, { true, true }, { true, false }, { false, true },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Log in with p and run ios; one harness per login. */
static bool use_poll;
static bool use_thread;

static void run_combo(const struct h_params *p, const struct h_io *ios,
		      size_t n, unsigned qd, uint32_t slot_cap,
		      enum h_status_mode sm, bool split)
{
	struct h h;
	char ps[200];
	int rc;

	rc = h_init(&h, slot_cap, qd);
	ck_assert_msg(rc == 0, "h_init: %s", h.err);
	h.status_mode = sm;
	h.split_put = split;
	h.split_get = split;
	h.use_poll = use_poll;
	if (use_thread)
		ck_assert_msg(h_start_thread(&h) == 0, "%s", h.err);
	rc = h_connect_login(&h, p, 5000);
	ck_assert_msg(rc == 0, "login with %s: %s", h_params_str(p, ps, sizeof(ps)),
		      h.err);
	rc = h_run_io(&h, ios, n, qd, 60000);
	ck_assert_msg(rc == 0, "%s: %s", h_params_str(p, ps, sizeof(ps)), h.err);
	ck_assert_msg(h.i.terminate_count == 0 && h.t.terminate_count == 0,
		      "no terminate expected");
	ck_assert_int_eq(h.i.cb_after_terminate + h.t.cb_after_terminate, 0);
	h_fini(&h);
}

/* Run ios over every combination of the keys: 2 x 2 x 3 x 3 x 2 x 4 =
 * 288 logins (bursts from bursts[first_burst] on). Status delivery and
 * splitting Put_Data / Get_Data in two calls rotate with the
 * combination so each meets every key value too. Over a provider
 * without digests (iSER: None whatever the keys say, RFC 7145 6.3) the
 * four digest settings move the same bytes the same way, so they rotate
 * too instead of multiplying: 72 logins, each digest setting offered in
 * 18 of them. */
static unsigned all_combos(const struct h_io *ios, size_t n, unsigned qd,
			   uint32_t slot_cap, size_t first_burst)
{
	unsigned combos = 0;
	/* IDM_TEST_COMBO=N: run only combination N of small_all_combos
	 * and no other test (to debug one; see main()) */
	const char *only = getenv("IDM_TEST_COMBO");
	const bool digested = h_provider_digests();

	for (int imm = 0; imm < 2; imm++)
	for (int ir2t = 0; ir2t < 2; ir2t++)
	for (size_t b = first_burst; b < N(bursts); b++)
	for (size_t m = 0; m < N(mrdsls); m++)
	for (uint32_t r2t = 1; r2t <= 4; r2t += 3)
	for (size_t dd = 0; dd < (digested ? N(digests) : 1); dd++) {
		size_t d = digested ? dd : combos % N(digests);
		struct h_params p;

		h_params_default(&p);
		p.immediate_data = imm;
		p.initial_r2t = ir2t;
		p.first_burst = bursts[b].fbl;
		p.max_burst = bursts[b].mbl;
		p.ini_mrdsl = mrdsls[m].ini;
		p.tgt_mrdsl = mrdsls[m].tgt;
		p.max_r2t = r2t;
		p.header_digest = digests[d].hd;
		p.data_digest = digests[d].dd;
		if (!only || (unsigned)atoi(only) == combos)
			run_combo(&p, ios, n, qd, slot_cap,
				  (enum h_status_mode)(combos % 3),
				  (combos / 3) % 2);
		combos++;
	}
	return combos;
}

/* Every combination, 1 byte to 64 KiB+1, reads and writes, qd 3. */
START_TEST(small_all_combos)
{
	struct h_io ios[2 * N(small_sizes)];
	unsigned combos;
	size_t n = 0;

	for (size_t i = 0; i < N(small_sizes); i++) {
		ios[n++] = (struct h_io){ true, small_sizes[i] };
		ios[n++] = (struct h_io){ false, small_sizes[i] };
	}
	combos = all_combos(ios, n, 3, 65537, 0);
	h_log("small_all_combos: %u logins x %zu ios (1 B..64 KiB+1, read+write, qd 3), all bytes and guards verified",
	      combos, n);
}
END_TEST

/* Every combination again with 1 MiB (and 1 MiB - 1) each way, qd 2,
 * except 512-byte bursts: 2048 R2T round trips per MiB cost time and
 * teach nothing the 64 KiB+1 case above does not. */
START_TEST(one_mib_all_combos)
{
	static const struct h_io ios[] = {
		{ true, 1048576 }, { false, 1048576 },
		{ false, 1048575 }, { true, 1048575 },
	};
	unsigned combos = all_combos(ios, N(ios), 2, 1048576, 1);

	h_log("one_mib_all_combos: %u logins x 4 ios (1 MiB, 1 MiB-1, qd 2, bursts >= 4 KiB), verified",
	      combos);
}
END_TEST

/* 16 MiB each way: default keys, the smallest segments, digests. */
START_TEST(large_16m)
{
	static const struct h_io ios[] = {
		{ true, 16u << 20 }, { false, 16u << 20 },
		{ false, (16u << 20) - 1 }, { true, (16u << 20) - 3 },
	};
	struct h_params p;

	h_params_default(&p);
	p.ini_mrdsl = 262144;
	p.tgt_mrdsl = 262144;
	p.max_r2t = 4;
	p.immediate_data = true;
	p.initial_r2t = false;
	run_combo(&p, ios, N(ios), 2, 16u << 20, H_STATUS_ALTERNATE, false);
	h_log("large_16m: 16 MiB r/w, MRDSL 256K, MaxR2T 4, no digests: ok");

	h_params_default(&p);
	p.header_digest = true;
	p.data_digest = true;
	p.ini_mrdsl = 65536;
	p.tgt_mrdsl = 8192;
	p.first_burst = 4096;
	p.max_burst = 1048576;
	p.max_r2t = 2;
	run_combo(&p, ios, N(ios), 2, 16u << 20, H_STATUS_SEPARATE, true);
	h_log("large_16m: 16 MiB r/w, CRC32C both, MRDSL 64K/8K, split Put_Data and Get_Data: ok");

	/* the smallest segments: 32768 PDUs of 512 bytes each way */
	h_params_default(&p);
	p.header_digest = true;
	p.ini_mrdsl = 512;
	p.tgt_mrdsl = 512;
	p.first_burst = 512;
	p.max_burst = 65536;
	p.max_r2t = 8;
	p.initial_r2t = false;
	run_combo(&p, ios, 2, 2, 16u << 20, H_STATUS_IN_DATA, false);
	h_log("large_16m: 16 MiB r/w in 512-byte PDUs, header digests, MaxR2T 8: ok");
}
END_TEST

/* Many mixed commands with deep queues; both ways of returning status. */
START_TEST(queue_depth)
{
	struct h_io ios[96];
	struct h_params p;
	uint32_t x = 12345;

	for (size_t i = 0; i < N(ios); i++) {
		x = x * 1103515245u + 12345u;
		ios[i].write = (x >> 16) & 1;
		ios[i].len = 1 + (x >> 8) % 200000;
	}
	h_params_default(&p);
	p.immediate_data = true;
	p.initial_r2t = false;
	p.first_burst = 16384;
	p.max_burst = 65536;
	p.ini_mrdsl = 4096;
	p.tgt_mrdsl = 16384;
	p.max_r2t = 3;
	run_combo(&p, ios, N(ios), 16, 200000, H_STATUS_IN_DATA, false);
	p.header_digest = true;
	run_combo(&p, ios, N(ios), 16, 200000, H_STATUS_SEPARATE, true);
	h_log("queue_depth: 96 mixed ios (1..200000 B) at qd 16, twice: verified");
}
END_TEST

/* The same workload driven the way an application with its own loop
 * does it: poll() on idm_ctx_get_fd(), then idm_ctx_progress(ctx, 0).
 * The fd must wake the loop whenever there is work. */
START_TEST(poll_driven)
{
	struct h_io ios[64];
	struct h_params p;
	uint32_t x = 777;

	for (size_t i = 0; i < N(ios); i++) {
		x = x * 1103515245u + 12345u;
		ios[i].write = (x >> 16) & 1;
		ios[i].len = 1 + (x >> 8) % 300000;
	}
	use_poll = true;
	for (int d = 0; d < 2; d++) {
		h_params_default(&p);
		p.immediate_data = d;
		p.initial_r2t = !d;
		p.first_burst = 8192;
		p.max_burst = 32768;
		p.ini_mrdsl = d ? 4096 : 65536;
		p.tgt_mrdsl = d ? 65536 : 4096;
		p.max_r2t = 2;
		p.header_digest = p.data_digest = d;
		run_combo(&p, ios, N(ios), 8, 300000, H_STATUS_ALTERNATE, d);
	}
	use_poll = false;
	h_log("poll_driven: 2 x 64 mixed ios at qd 8 driven by poll(idm_ctx_get_fd()) + idm_ctx_progress(0): no lost wakeup, verified");
}
END_TEST

/* Lengths that are not multiples of 4 or of each other: padding and
 * segment arithmetic at odd boundaries. */
START_TEST(odd_lengths)
{
	static const struct {
		uint32_t fbl, mbl, ini, tgt, r2t;
	} odd[] = {
		{ 1001, 7001, 3001, 2999, 3 },
		{ 513, 513, 515, 517, 1 },
		{ 65535, 65537, 1021, 65539, 2 },
		{ 4097, 100003, 131071, 12345, 5 },
	};
	struct h_io ios[40];
	uint32_t x = 4242;
	unsigned runs = 0;

	for (size_t i = 0; i < N(ios); i++) {
		x = x * 1103515245u + 12345u;
		ios[i].write = i & 1;
		ios[i].len = 1 + (x >> 8) % 150001;
	}
	for (size_t o = 0; o < N(odd); o++)
	for (int imm = 0; imm < 2; imm++)
	for (int d = 0; d < 2; d++) {
		struct h_params p;

		h_params_default(&p);
		p.immediate_data = imm;
		p.initial_r2t = !imm;
		p.first_burst = odd[o].fbl;
		p.max_burst = odd[o].mbl;
		p.ini_mrdsl = odd[o].ini;
		p.tgt_mrdsl = odd[o].tgt;
		p.max_r2t = odd[o].r2t;
		p.header_digest = p.data_digest = d;
		run_combo(&p, ios, N(ios), 4, 150001, H_STATUS_ALTERNATE,
			  (o + (unsigned)d) % 2);
		runs++;
	}
	h_log("odd_lengths: %u logins with FBL/MBL/MRDSL like 513, 1001, 3001, 65537 and 40 ios of odd sizes each: verified",
	      runs);
}
END_TEST

static bool got_nop_in(struct h *h)
{
	return h->i.nop_in_count > 0;
}

/* A NOP-Out ping with a data segment as large as the target accepts,
 * echoed in the NOP-In: control PDUs bigger than the providers' pooled
 * send buffers (on iSER: one-off registered messages, both ways). */
START_TEST(nop_ping_large)
{
	static const uint32_t sizes[] = { 1, 8192, 8193, 65536 };

	for (size_t i = 0; i < N(sizes); i++) {
		struct h_params p;
		struct h h;
		uint8_t bhs[48] = { 0 };
		static uint8_t data[65536];
		int rc;

		for (size_t j = 0; j < sizes[i]; j++)
			data[j] = (uint8_t)(j * 7 + i);
		h_params_default(&p);
		p.ini_mrdsl = p.tgt_mrdsl = 65536;
		ck_assert_msg(h_init(&h, 4096, 1) == 0, "h_init: %s", h.err);
		rc = h_connect_login(&h, &p, 5000);
		ck_assert_msg(rc == 0, "login: %s", h.err);
		h_build_nop_out(bhs, 0x7000 + (uint32_t)i, h.cmdsn);
		idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, h.exp_statsn);
		rc = idm_send_control(h.i.conn, bhs, NULL, 0, data, sizes[i],
				      NULL, 0);
		ck_assert_msg(rc == 0, "NOP-Out of %u bytes: %s", sizes[i],
			      idm_strerror(rc));
		ck_assert_msg(h_progress_until(&h, got_nop_in, 20000) == 0,
			      "no NOP-In for %u bytes: %s", sizes[i], h.err);
		ck_assert_uint_eq(h.i.nop_in_len, sizes[i]);
		ck_assert_uint_eq(h.i.nop_in_sum, h_sum32(data, sizes[i]));
		ck_assert_int_eq(h.i.terminate_count + h.t.terminate_count, 0);
		h_fini(&h);
	}
	h_log("nop_ping_large: NOP-Out/NOP-In echo of 1, 8192, 8193 and 65536 data bytes: verified");
}
END_TEST

/* I/O, then a NOP ping while no task is open (the TCP provider gives
 * its send ring, stage and large rx buffer back then), then I/O again:
 * what was given back must come back, several times, on both sides. */
START_TEST(io_after_idle_nop)
{
	static const struct h_io ios[] = {
		{ true, 4096 },	   { false, 4096 },   { true, 1 << 20 },
		{ false, 1 << 20 }, { true, 65536 },   { false, 512 },
		{ true, 131072 },  { false, 131072 },
	};
	static uint8_t data[8193];
	struct h_params p;
	struct h h;
	int rc;

	h_params_default(&p);
	ck_assert_msg(h_init(&h, 1 << 20, 8) == 0, "h_init: %s", h.err);
	rc = h_connect_login(&h, &p, 5000);
	ck_assert_msg(rc == 0, "login: %s", h.err);
	for (int round = 0; round < 3; round++) {
		uint8_t bhs[48] = { 0 };

		rc = h_run_io(&h, ios, N(ios), 4, 60000);
		ck_assert_msg(rc == 0, "round %d, I/O: %s", round, h.err);
		for (size_t j = 0; j < sizeof(data); j++)
			data[j] = (uint8_t)(j * 3 + (size_t)round);
		h.i.nop_in_count = 0;
		h_build_nop_out(bhs, 0x7100 + (uint32_t)round, h.cmdsn);
		idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, h.exp_statsn);
		rc = idm_send_control(h.i.conn, bhs, NULL, 0, data,
				      p.tgt_mrdsl < sizeof(data) ? p.tgt_mrdsl
								 : sizeof(data),
				      NULL, 0);
		ck_assert_msg(rc == 0, "NOP-Out: %s", idm_strerror(rc));
		ck_assert_msg(h_progress_until(&h, got_nop_in, 20000) == 0,
			      "round %d: no NOP-In: %s", round, h.err);
	}
	rc = h_run_io(&h, ios, N(ios), 4, 60000);
	ck_assert_msg(rc == 0, "last I/O: %s", h.err);
	ck_assert_int_eq(h.i.terminate_count + h.t.terminate_count, 0);
	h_fini(&h);
	h_log("io_after_idle_nop: 3 x (8 mixed ios at qd 4, then a NOP ping with no task open), then ios again: verified");
}
END_TEST

/* The same with libidm's opt-in progress thread: callbacks on that
 * thread, commands submitted from the test's thread meanwhile. */
START_TEST(progress_thread)
{
	struct h_io ios[64];
	struct h_params p;
	uint32_t x = 999;

	for (size_t i = 0; i < N(ios); i++) {
		x = x * 1103515245u + 12345u;
		ios[i].write = (x >> 16) & 1;
		ios[i].len = 1 + (x >> 8) % 300000;
	}
	use_thread = true;
	for (int d = 0; d < 2; d++) {
		h_params_default(&p);
		p.immediate_data = !d;
		p.initial_r2t = d;
		p.first_burst = 16384;
		p.max_burst = 65536;
		p.ini_mrdsl = d ? 8192 : 65536;
		p.tgt_mrdsl = d ? 65536 : 8192;
		p.max_r2t = 3;
		p.header_digest = p.data_digest = d;
		run_combo(&p, ios, N(ios), 8, 300000, H_STATUS_ALTERNATE, !d);
	}
	use_thread = false;
	h_log("progress_thread: 2 x 64 mixed ios at qd 8 with idm_ctx_start_progress_thread(), commands from another thread: verified");
}
END_TEST

/* Built with ThreadSanitizer? (gcc says so with a macro, clang through
 * __has_feature.) */
#if defined(__SANITIZE_THREAD__)
#define LOOPBACK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LOOPBACK_TSAN 1
#endif
#endif
#ifndef LOOPBACK_TSAN
#define LOOPBACK_TSAN 0
#endif

int main(void)
{
	const TTest *const first[] = { small_all_combos, NULL };
	const TTest *const rest[] = {
		one_mib_all_combos, large_16m,	     queue_depth,
		poll_driven,	    odd_lengths,     nop_ping_large,
		io_after_idle_nop,  progress_thread, NULL
	};
	/* Every case but progress_thread runs on one thread (the harness
	 * drives both ends from the test's own), where ThreadSanitizer has
	 * nothing to check and only multiplies the time by ten: under it,
	 * the threaded case alone. The others run in the plain and the
	 * ASan+UBSan builds. */
	const TTest *const threaded[] = { progress_thread, NULL };
	Suite *s;

	if (!h_main_prologue("test_loopback", 110))
		return 77;
	s = suite_create("tcp_loopback");
	if (LOOPBACK_TSAN) {
		test_case_add(s, "loopback", 110, threaded);
	} else {
		TCase *tc = test_case_add(s, "loopback", 110, first);

		if (!getenv("IDM_TEST_COMBO")) /* else: debugging one combination */
			test_case_add_tests(tc, rest);
	}
	return test_suite_run(s);
}
