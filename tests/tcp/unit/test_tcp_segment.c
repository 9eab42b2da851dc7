/* SPDX-License-Identifier: BSD-2-Clause */
/* Transfer arithmetic: Data-In/Data-Out segmentation with F bits and
 * DataSNs, and R2T planning (immediate/unsolicited lengths: the core's,
 * tests/unit/test_dm.c). */
#include <check.h>
#include "check_suite.h"
#include <errno.h>
#include <stdlib.h>

#include "tcp_segment.h"

/* Cut [start,end) as the provider does and check every rule. Returns the
 * number of PDUs (= DataSNs used). Plain checks in the loop: Check's
 * assertions cost too much per PDU under the sanitizers. */
static uint32_t walk(uint32_t start, uint32_t end, uint32_t mbl, uint32_t dsl)
{
	uint32_t pos = start, n = 0, burst = 0, len;
	bool f;

	while ((len = tcp_seg_next(pos, end, start, mbl, dsl, &f)) != 0) {
		uint32_t be =
			mbl ? start + ((pos - start) / mbl + 1) * mbl : end;
		if (be > end)
			be = end;
		if (len > dsl)
			ck_abort_msg("PDU of %u > dsl %u", len, dsl);
		if (pos + len > be)
			ck_abort_msg("PDU [%u,+%u) crosses burst end %u", pos,
				     len, be);
		if (f != (pos + len == be))
			ck_abort_msg("F at %u+%u, burst end %u", pos, len, be);
		burst += len;
		if (mbl && burst > mbl)
			ck_abort_msg("burst of %u > MaxBurstLength %u", burst,
				     mbl);
		if (f)
			burst = 0;
		pos += len;
		n++;
	}
	ck_assert_uint_eq(pos, end > start ? end : start);
	ck_assert_uint_eq(burst, 0); /* the last PDU carries F */
	ck_assert_uint_eq(n, tcp_seg_count(start, end, mbl, dsl));
	return n;
}

START_TEST(datain_example)
{
	/* 20000 bytes, MaxBurstLength 8192, MRDSL 3000 */
	static const uint32_t lens[] = { 3000, 3000, 2192, 3000,
					 3000, 2192, 3000, 616 };
	static const bool fs[] = { 0, 0, 1, 0, 0, 1, 0, 1 };
	uint32_t pos = 0, len;
	bool f;

	for (unsigned i = 0; i < 8; i++) {
		len = tcp_seg_next(pos, 20000, 0, 8192, 3000, &f);
		ck_assert_uint_eq(len, lens[i]);
		ck_assert_int_eq(f, fs[i]);
		pos += len;
	}
	ck_assert_uint_eq(tcp_seg_next(pos, 20000, 0, 8192, 3000, &f), 0);
	ck_assert_uint_eq(tcp_seg_count(0, 20000, 8192, 3000), 8);
}
END_TEST

START_TEST(datain_boundaries)
{
	static const uint32_t sizes[] = { 1,	  2,	  511,	   512,
					  513,	  4095,	  4096,	   4097,
					  8192,	  65535,  65536,   65537,
					  262144, 262145, 1000000, 4u << 20 };
	static const uint32_t dsls[] = { 512, 1000, 4096, 8192, 65536, 262144 };
	static const uint32_t mbls[] = {
		0, 512, 4096, 65536, 262144, 1u << 24
	};

	for (unsigned a = 0; a < sizeof(sizes) / sizeof(*sizes); a++)
		for (unsigned b = 0; b < sizeof(dsls) / sizeof(*dsls); b++)
			for (unsigned c = 0; c < sizeof(mbls) / sizeof(*mbls);
			     c++)
				walk(0, sizes[a], mbls[c], dsls[b]);
}
END_TEST

/* when the burst is a multiple of the segment, no runt PDUs appear */
START_TEST(datain_exact)
{
	ck_assert_uint_eq(walk(0, 1u << 20, 262144, 8192), 128);
	ck_assert_uint_eq(walk(0, 1u << 20, 8192, 262144), 128);
	ck_assert_uint_eq(walk(0, 1, 262144, 8192), 1);
	ck_assert_uint_eq(walk(0, 16u << 20, 262144, 8192), 2048);
	ck_assert_uint_eq(walk(5, 5, 262144, 8192), 0);
}
END_TEST

/* DataSN continues across two Put_Data of one task: the second starts
 * at the count of the first */
START_TEST(datasn_across_puts)
{
	uint32_t first = tcp_seg_count(0, 100000, 65536, 8192);
	uint32_t second = tcp_seg_count(0, 50000, 65536, 8192);

	ck_assert_uint_eq(
		first, 8 + 5); /* 65536 = 8 x 8192; 34464 = 4 x 8192 + 1696 */
	ck_assert_uint_eq(second, 7); /* 50000 = 6 x 8192 + 848 */
}
END_TEST

/* Data-Out answering an R2T: one sequence from the R2T's offset */
START_TEST(dataout_sequence)
{
	uint32_t pos = 262144, end = 262144 + 20000, len, n = 0;
	bool f;

	while ((len = tcp_seg_next(pos, end, 262144, 0, 8192, &f)) != 0) {
		n++;
		pos += len;
		ck_assert_int_eq(f, pos == end);
	}
	ck_assert_uint_eq(n, 3);
	walk(262144, 262144 + 20000, 0, 8192);
}
END_TEST

/* The target's R2T loop: solicited part of a Get_Data range in bursts,
 * at most `win` outstanding. */
static void r2t_plan(uint32_t off, uint32_t len, uint32_t unsol_end,
		     uint32_t mbl, uint32_t maxr2t)
{
	uint32_t win = tcp_r2t_window(maxr2t, 16);
	uint32_t next = tcp_r2t_start(off, unsol_end), end = off + len;
	uint32_t outstanding = 0, issued = 0, covered = 0;

	if (next > end)
		next = end;
	ck_assert_uint_le(win, 16);
	ck_assert_uint_ge(win, 1);
	while (next < end || outstanding) {
		while (outstanding < win && next < end) {
			uint32_t l = tcp_r2t_len(next, end, mbl);
			ck_assert_uint_gt(l, 0);
			ck_assert_uint_le(l, mbl);
			ck_assert_uint_ge(next,
					  unsol_end); /* unsolicited skipped */
			next += l;
			covered += l;
			outstanding++;
			issued++;
		}
		ck_assert_uint_le(outstanding, win);
		ck_assert_uint_le(outstanding, maxr2t ? maxr2t : 1);
		outstanding--; /* one R2T's data arrived */
	}
	{
		uint32_t s = off > unsol_end ? off : unsol_end;
		uint32_t want = s < end ? end - s : 0;
		ck_assert_uint_eq(covered, want);
		ck_assert_uint_eq(issued, want ? (want + mbl - 1) / mbl : 0);
	}
}

START_TEST(r2t_arith)
{
	ck_assert_uint_eq(tcp_r2t_start(0, 65536), 65536);
	ck_assert_uint_eq(tcp_r2t_start(131072, 65536), 131072);
	ck_assert_uint_eq(tcp_r2t_len(0, 1000000, 262144), 262144);
	ck_assert_uint_eq(tcp_r2t_len(786432, 1000000, 262144), 213568);
	ck_assert_uint_eq(tcp_r2t_len(10, 5, 262144), 0);
	ck_assert_uint_eq(tcp_r2t_window(1, 16), 1);
	ck_assert_uint_eq(tcp_r2t_window(4, 16), 4);
	ck_assert_uint_eq(tcp_r2t_window(65535, 16), 16);
	ck_assert_uint_eq(tcp_r2t_window(0, 16), 1);

	r2t_plan(0, 1u << 20, 0, 262144, 1);
	r2t_plan(0, 1u << 20, 65536, 262144, 4);
	r2t_plan(0, 16u << 20, 65536, 65536, 65535);
	r2t_plan(0, 65536, 65536, 262144, 1); /* all unsolicited: no R2T */
	r2t_plan(0, 100, 100, 512, 2);
	r2t_plan(4096, 8192, 65536, 512, 2); /* range inside unsolicited */
	r2t_plan(100000, 300000, 65536, 262144, 2);
	r2t_plan(0, 1, 0, 512, 1);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { datain_example,
				       datain_boundaries,
				       datain_exact,
				       datasn_across_puts,
				       dataout_sequence,
				       r2t_arith,
				       NULL };

	return test_suite_run_case("tcp_segment", "segment", 60, tests);
}
