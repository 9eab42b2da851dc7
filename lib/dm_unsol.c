/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unsolicited and immediate data of a write command (RFC 7143 sections
 * 13.10-13.14: ImmediateData, InitialR2T, FirstBurstLength), for every
 * transport: what an initiator sends without an R2T, what a target
 * expects and checks in each unsolicited Data-Out, and the target's slow
 * path that stages bytes no Get_Data asked for yet (the fast path places
 * them straight into the Get_Data range covering them, see
 * idm_prov_task_xfer_cover()). Pure arithmetic plus one staging buffer.
 */
#include "core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

void idm_prov_unsol_plan(const struct idm_conn_params *p, uint32_t send_dsl,
			 uint32_t edtl, uint32_t out_len, struct idm_prov_unsol_plan *plan)
{
	uint32_t total = min32(edtl, out_len);
	uint32_t burst = min32(p->first_burst_length, total);

	plan->imm = p->immediate_data ? min32(burst, send_dsl) : 0;
	/* With InitialR2T=No the initiator sends the whole first burst
	 * (immediate data counts against it), as Linux and LIO expect. */
	plan->unsol_end = p->initial_r2t ? plan->imm : burst;
	plan->cmd_final = plan->unsol_end == plan->imm;
}

int idm_prov_unsol_cmd(struct idm_prov_unsol *u, const struct idm_conn_params *p,
		       bool write, uint32_t edtl, uint32_t imm_len, bool cmd_final,
		       const char **why)
{
	memset(u, 0, sizeof(*u));
	*why = "";
	if (imm_len && !write) {
		*why = "data with a command that is not a write";
		return -EPROTO;
	}
	if (!write)
		return 0;
	if (imm_len && !p->immediate_data) {
		*why = "immediate data with ImmediateData=No";
		return -EPROTO;
	}
	if (imm_len > p->first_burst_length) {
		*why = "immediate data longer than FirstBurstLength";
		return -EPROTO;
	}
	if (imm_len > edtl) {
		*why = "immediate data longer than the expected transfer length";
		return -EPROTO;
	}
	u->imm_len = imm_len;
	u->rcvd = imm_len;
	if (cmd_final) {
		u->end = imm_len;
		return 0;
	}
	if (p->initial_r2t) {
		*why = "SCSI Command with F=0 but InitialR2T=Yes";
		return -EPROTO;
	}
	u->end = min32(p->first_burst_length, edtl);
	if (u->end <= imm_len) {
		*why = "SCSI Command with F=0 but no unsolicited data left";
		return -EPROTO;
	}
	return 0;
}

int idm_prov_unsol_dataout(const struct idm_prov_unsol *u, uint32_t offset,
			   uint32_t length, uint32_t datasn, char *why, size_t whylen)
{
	if (offset != u->rcvd || (uint64_t)offset + length > u->end) {
		snprintf(why, whylen,
			 "unsolicited Data-Out [%u, +%u): expected offset %u, "
			 "unsolicited data allowed below offset %u",
			 offset, length, u->rcvd, u->end);
		return -EPROTO;
	}
	if (datasn != u->datasn) {
		snprintf(why, whylen, "unsolicited Data-Out DataSN %u, expected %u",
			 datasn, u->datasn);
		return -EPROTO;
	}
	return 0;
}

int idm_prov_unsol_arrived(struct idm_prov_unsol *u, uint32_t length, bool fbit,
			   char *why, size_t whylen)
{
	u->rcvd += length;
	u->datasn++;
	if (fbit && u->rcvd != u->end) {
		snprintf(why, whylen, "unsolicited data ended at %u, expected %u",
			 u->rcvd, u->end);
		return -EPROTO;
	}
	return 0;
}

/* The slow path: no Get_Data took these bytes when they arrived. */
static int stage_alloc(struct idm_prov_unsol *u)
{
	if (u->stage)
		return 0;
	u->stage = malloc(u->end ? u->end : 1);
	if (!u->stage)
		return -ENOMEM;
	u->st_lo = u->rcvd;
	return 0;
}

uint8_t *idm_prov_unsol_stage(struct idm_prov_unsol *u, uint32_t offset)
{
	if (stage_alloc(u) < 0)
		return NULL;
	return u->stage + offset;
}

uint32_t idm_prov_unsol_take(struct idm_prov_unsol *u, uint32_t offset,
			     uint32_t length, uint8_t *dst)
{
	uint32_t end = offset + length, lo, hi, n = 0;

	/* the immediate data, while the command's notify runs */
	lo = offset;
	hi = min32(end, u->imm_len);
	if (u->imm && lo < hi) {
		memcpy(dst, u->imm + lo, hi - lo);
		u->imm_taken += hi - lo;
		n += hi - lo;
	}
	/* what was staged: [st_lo, rcvd) */
	lo = offset > u->st_lo ? offset : u->st_lo;
	hi = min32(end, u->rcvd);
	if (u->stage && lo < hi) {
		memcpy(dst + (lo - offset), u->stage + lo, hi - lo);
		n += hi - lo;
	}
	return n;
}

uint32_t idm_prov_unsol_take_buf(struct idm_prov_unsol *u, uint32_t offset,
				 uint32_t length, struct idm_buf *buf, size_t buf_off)
{
	struct iovec v[16];
	uint32_t got = 0, at = 0;
	size_t covered;
	int n;

	if (buf->addr) /* one segment: no walk */
		return idm_prov_unsol_take(u, offset, length,
					   (uint8_t *)buf->addr + buf_off);
	/* segment by segment: each piece takes its own command offsets */
	while (at < length &&
	       (n = idm_prov_buf_iov(buf, buf_off + at, length - at, v, 16,
				     &covered)) > 0) {
		for (int i = 0; i < n; i++) {
			got += idm_prov_unsol_take(u, offset + at, (uint32_t)v[i].iov_len,
						   v[i].iov_base);
			at += (uint32_t)v[i].iov_len;
		}
	}
	return got;
}

int idm_prov_unsol_cmd_done(struct idm_prov_unsol *u)
{
	const uint8_t *imm = u->imm;

	u->imm = NULL;
	if (!imm || u->imm_taken >= u->imm_len)
		return 0;
	/* Get_Data did not take all of it (yet): keep a copy */
	u->rcvd = 0;
	if (stage_alloc(u) < 0) {
		u->rcvd = u->imm_len;
		return -ENOMEM;
	}
	memcpy(u->stage, imm, u->imm_len);
	u->rcvd = u->imm_len;
	return 0;
}

void idm_prov_unsol_free(struct idm_prov_unsol *u)
{
	free(u->stage);
	u->stage = NULL;
	u->imm = NULL;
}
