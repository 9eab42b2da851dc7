/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Scatter-gather buffers over TCP: the target's disk and the initiator's
 * buffers are idm_buf_create_iov() buffers on both sides (harness_sg.c:
 * segments scattered in memory, in reverse order, with guarded gaps), and
 * READs (Put_Data), WRITEs (Get_Data, immediate and unsolicited data) move
 * through them with every byte, guard and gap checked. Segment sizes cut
 * the PDUs anywhere (1, 511, 4097, 8193 bytes against
 * MaxRecvDataSegmentLength 8192), with and without digests (the data
 * digest runs across segments), and 1000 segments of 512 bytes.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const uint32_t odd_segs[] = { 1, 511, 4097, 8193 };
static const uint32_t io_sizes[] = { 1, 511, 4097, 8192, 8193, 65537 };

static void run(const struct h_params *p, const uint32_t *segs, size_t nsegs,
		const struct h_io *ios, size_t n, unsigned qd, uint32_t cap,
		int min_segments)
{
	struct h h;
	char ps[200];

	ck_assert_msg(h_init(&h, cap, qd) == 0, "h_init: %s", h.err);
	ck_assert_msg(h_sg_enable(&h, segs, nsegs) == 0, "h_sg_enable: %s", h.err);
	ck_assert_int_ge(h_sg_segments(&h), min_segments);
	ck_assert_msg(h_connect_login(&h, p, 5000) == 0, "login with %s: %s",
		      h_params_str(p, ps, sizeof(ps)), h.err);
	ck_assert_msg(h_run_io(&h, ios, n, qd, 60000) == 0, "%s, %d segments: %s",
		      h_params_str(p, ps, sizeof(ps)), h_sg_segments(&h), h.err);
	ck_assert_int_eq(h.i.terminate_count + h.t.terminate_count, 0);
	h_fini(&h);
}

/* Segments of 1, 511, 4097, 8193 bytes: PDUs of 8192 start and end
 * inside segments, one-byte segments sit inside PDUs, and a range may
 * lie in one segment (the address path) or span many. Immediate data
 * and unsolicited Data-Out on and off, digests off and on, both
 * directions of MaxRecvDataSegmentLength 8192 / 512. */
START_TEST(odd_segments)
{
	struct h_io ios[2 * N(io_sizes)];
	size_t n = 0;
	unsigned logins = 0;

	for (size_t i = 0; i < N(io_sizes); i++) {
		ios[n++] = (struct h_io){ true, io_sizes[i] };
		ios[n++] = (struct h_io){ false, io_sizes[i] };
	}
	for (int imm = 0; imm < 2; imm++)
	for (int dig = 0; dig < 2; dig++)
	for (int m = 0; m < 2; m++) {
		struct h_params p;

		h_params_default(&p);
		p.immediate_data = imm;
		p.initial_r2t = !imm;
		p.first_burst = 16384;
		p.max_burst = 32768;
		p.ini_mrdsl = m ? 512 : 8192;
		p.tgt_mrdsl = 8192;
		p.max_r2t = 2;
		p.header_digest = dig;
		p.data_digest = dig;
		run(&p, odd_segs, N(odd_segs), ios, n, 3, 65537, 16);
		logins++;
	}
	h_log("odd_segments: %u logins x %zu ios through segments of 1/511/4097/8193 B",
	      logins, n);
}
END_TEST

/* 1000 segments of 512 bytes on each side: a PDU of 8192 spans 16 of
 * them; data digests on. */
START_TEST(many_small_segments)
{
	static const uint32_t seg512[] = { 512 };
	static const struct h_io ios[] = {
		{ true, 256000 }, { false, 256000 }, { true, 4096 }, { false, 513 },
	};
	struct h_params p;

	h_params_default(&p);
	p.immediate_data = true;
	p.initial_r2t = false;
	p.ini_mrdsl = 8192;
	p.tgt_mrdsl = 8192;
	p.header_digest = true;
	p.data_digest = true;
	run(&p, seg512, 1, ios, N(ios), 2, 256000, 1000);
	h_log("many_small_segments: 1000+ segments of 512 B, digests on");
}
END_TEST

int main(int argc, char **argv)
{
	const TTest *const tests[] = { odd_segments, many_small_segments,
				       NULL };

	(void)argc;
	return h_main(argv[0], 300, "sg", "sg", 120, tests);
}
