/* SPDX-License-Identifier: BSD-2-Clause */
/* Transfer arithmetic; see tcp_segment.h. */
#include "tcp_segment.h"


static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

uint32_t tcp_seg_next(uint32_t pos, uint32_t end, uint32_t seq_start,
		      uint32_t mbl, uint32_t dsl, bool *final)
{
	uint32_t burst_end = end, len;

	*final = false;
	if (pos >= end || dsl == 0)
		return 0;
	if (mbl) {
		/* bursts are [seq_start + k*mbl, seq_start + (k+1)*mbl) */
		uint32_t k = (pos - seq_start) / mbl;
		uint64_t be = (uint64_t)seq_start + (uint64_t)(k + 1) * mbl;
		if (be < end)
			burst_end = (uint32_t)be;
	}
	len = min32(burst_end - pos, dsl);
	*final = pos + len == burst_end;
	return len;
}

uint32_t tcp_seg_count(uint32_t start, uint32_t end, uint32_t mbl, uint32_t dsl)
{
	uint32_t n = 0, pos = start, len;
	bool f;

	while ((len = tcp_seg_next(pos, end, start, mbl, dsl, &f)) != 0) {
		pos += len;
		n++;
	}
	return n;
}
