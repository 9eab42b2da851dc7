/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A target task's immediate and unsolicited data (RFC 7145 7.3.4): it
 * arrives in Sends and is copied from the receive buffer (the one
 * unavoidable copy) into the Get_Data range waiting for it, or staged
 * until the caller asks for it. The rules and the stage are the shared
 * datamover layer's (idm_prov_unsol_*); this file only places the bytes
 * of a Send.
 */
#include "iser_unsol.h"
#include "iser_dop.h"
#include "iser_fail.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libidm/iscsi.h>

void iser_tgt_cmd_done(struct iser_conn *ic, struct idm_task *t)
{
	/* Get_Data did not take the immediate data during control_notify:
	 * keep a copy until it does. */
	idm_prov_stats_copy(ic->st, idm_prov_unsol_imm_left(&iser_task(t)->unsol));
	if (idm_prov_unsol_cmd_done(&iser_task(t)->unsol) < 0)
		iser_conn_fail(ic, -ENOMEM, "no memory to stage immediate data");
}

int iser_tgt_data_out(struct iser_conn *ic, const uint8_t *bhs,
		      const uint8_t *data, uint32_t dlen, char *why,
		      size_t whylen)
{
	struct idm_task *t = idm_prov_task_find(ic->conn, idm_iscsi_bhs_itt(bhs));
	uint32_t off = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET);
	uint32_t ttt = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT);
	bool fbit = (bhs[1] & IDM_ISCSI_FLAG_FINAL) != 0;
	uint32_t covered = 0;
	const struct idm_prov_xfer *x = NULL;
	struct iser_task *it;
	int r;

	if (ttt != IDM_ISCSI_RESERVED_TAG) {
		/* solicited Data-Out never exists on iSER */
		snprintf(why, whylen, "solicited Data-Out (TTT %#x)", ttt);
		return -EPROTO;
	}
	if (!t) {
		/* task already ended (aborted): drop its data */
		if (ic->st)
			ic->st->late_pdus_dropped++;
		return 0;
	}
	it = iser_task(t);
	/* in order, inside the unsolicited burst, the DataSN expected */
	r = idm_prov_unsol_dataout(&it->unsol, off, dlen,
				   idm_iscsi_get32(bhs + IDM_ISCSI_BHS_DATASN), why, whylen);
	if (r < 0)
		return r;
	ic->stat_unsol_sends++;
	/* Place into every Get_Data range waiting for these bytes first,
	 * stage what none of them wanted, and only then tell the caller:
	 * a Get_Data it issues from Data_Completion_Notify (the next range
	 * of a split transfer) must find the rest of this PDU staged. */
	while ((x = idm_prov_task_xfer_next(t, x))) {
		struct iser_dop *d = idm_prov_xfer_priv(x);
		uint32_t a, b;

		if (x->dir != IDM_DATA_OUT)
			continue;
		a = off > x->offset ? off : x->offset;
		b = off + dlen < x->offset + x->length ? off + dlen
						       : x->offset + x->length;
		if (a >= b)
			continue;
		idm_prov_xfer_copy_in(x, a, data + (a - off), b - a);
		idm_prov_stats_copy(ic->st, b - a);
		covered += b - a;
		d->remaining = b - a > d->remaining ? 0 : d->remaining - (b - a);
		if (d->remaining == 0)
			d->placed = true;
	}
	/* The stage holds one run of bytes up to what arrived: once it
	 * started, every later PDU goes there too, whole. */
	if (covered < dlen || it->unsol.stage) {
		uint8_t *st = idm_prov_unsol_stage(&it->unsol, off);

		if (!st) {
			snprintf(why, whylen, "no memory to stage unsolicited data");
			r = -ENOMEM;
		} else {
			memcpy(st, data, dlen);
			idm_prov_stats_copy(ic->st, dlen);
		}
	}
	if (r == 0)
		r = idm_prov_unsol_arrived(&it->unsol, dlen, fbit, why, whylen);
	/* Finish what this PDU completed; each completion recycles its
	 * record (and may issue new ones), so walk again after each. */
	x = NULL;
	while (ic->state == ISER_UP && idm_prov_task_active(t) &&
	       (x = idm_prov_task_xfer_next(t, x))) {
		struct iser_dop *d = idm_prov_xfer_priv(x);

		if (x->dir != IDM_DATA_OUT || !d->placed)
			continue;
		iser_dop_finish(ic, d);
		x = NULL;
	}
	return r;
}
