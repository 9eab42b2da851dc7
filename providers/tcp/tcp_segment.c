/* SPDX-License-Identifier: BSD-2-Clause */
/* Transfer arithmetic; see tcp_segment.h. */
#include "tcp_segment.h"

#include <errno.h>

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

void tcp_unsol_plan(bool immediate_data, bool initial_r2t, uint32_t fbl,
		    uint32_t send_dsl, uint32_t edtl, uint32_t out_len,
		    struct tcp_unsol_plan *p)
{
	uint32_t total = min32(edtl, out_len);
	uint32_t burst = min32(fbl, total);

	p->imm = immediate_data ? min32(burst, send_dsl) : 0;
	/* With InitialR2T=No the initiator sends the whole first burst
	 * (immediate data counts against it), as Linux and LIO expect. */
	p->unsol_end = initial_r2t ? p->imm : burst;
	p->cmd_final = p->unsol_end == p->imm;
}

int tcp_unsol_expect(bool immediate_data, bool initial_r2t, uint32_t fbl,
		     uint32_t edtl, uint32_t imm_len, bool cmd_final,
		     uint32_t *unsol_end, const char **why)
{
	*unsol_end = 0;
	*why = "";
	if (imm_len && !immediate_data) {
		*why = "immediate data with ImmediateData=No";
		return -EPROTO;
	}
	if (imm_len > fbl) {
		*why = "immediate data longer than FirstBurstLength";
		return -EPROTO;
	}
	if (imm_len > edtl) {
		*why = "immediate data longer than the expected transfer "
		       "length";
		return -EPROTO;
	}
	if (cmd_final) {
		*unsol_end = imm_len;
		return 0;
	}
	if (initial_r2t) {
		*why = "SCSI Command with F=0 but InitialR2T=Yes";
		return -EPROTO;
	}
	*unsol_end = min32(fbl, edtl);
	if (*unsol_end <= imm_len) {
		*why = "SCSI Command with F=0 but no unsolicited data left";
		return -EPROTO;
	}
	return 0;
}
