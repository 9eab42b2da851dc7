/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Target side receive: a SCSI Command becomes a task and is notified
 * before its immediate data is read; that data and unsolicited Data-Out
 * go into the Get_Data range covering them (or a staging copy until
 * Get_Data is called); each Data-Out is checked
 * against its R2T (tag, offset, length, DataSN) and placed straight into
 * the caller's buffer. Get_Data/R2Ts are in tcp_r2t.c, Put_Data in
 * tcp_datain.c.
 */
#include "tcp.h"
#include "tcp_target.h"
#include "tcp_state.h"
#include "tcp_tx.h"
#include "tcp_rx.h"
#include "tcp_r2t.h"
#include "tcp_datain.h"
#include "tcp_segment.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- SCSI Command ---------------------------------------------------- */

static int tgt_cmd_header(struct tcp_conn *tc)
{
	const uint8_t *bhs = tc->rhdr;
	uint32_t itt = idm_iscsi_bhs_itt(bhs);
	struct idm_task *t;
	struct tcp_task *tt;
	const char *why;
	int r;

	if (itt == IDM_ISCSI_RESERVED_TAG) {
		tcp_conn_fail(tc, -EPROTO,
			      "SCSI Command with the reserved ITT");
		return -1;
	}
	r = idm_prov_task_new(tc->conn, itt, &t);
	if (r == -EEXIST) {
		tcp_conn_fail(tc, -EPROTO,
			      "SCSI Command with ITT 0x%08x already in use",
			      itt);
		return -1;
	}
	if (r < 0) {
		tcp_conn_fail(tc, r, "cannot create the task of ITT 0x%08x",
			      itt);
		return -1;
	}
	tt = tcp_task(t);
	memset(tt, 0, sizeof(*tt));
	tt->task = t;
	tt->write = (bhs[1] & IDM_ISCSI_CMD_WRITE) != 0;
	tt->edtl = idm_iscsi_get32(bhs + IDM_ISCSI_CMD_EDTL);
	tc->rtask = t;
	if (idm_prov_unsol_cmd(&tt->unsol, tc->params, tt->write, tt->edtl,
			       tc->rl.dsl, bhs[1] & IDM_ISCSI_FLAG_FINAL, &why) < 0) {
		tcp_conn_fail(tc, -EPROTO, "ITT 0x%08x: %s", itt, why);
		return -1;
	}
	/* immediate data: the notify comes before it is read */
	if (tc->rl.dsl)
		tc->rdst = DST_EARLY;
	return 0;
}

/* Staged bytes [off, off+len) just arrived: copy them into the Get_Data
 * ranges that overlap them (ranges asked for while they were on the way;
 * the ranges asked for later take them in tcp_get_data). */
static void take_staged(struct tcp_conn *tc, struct idm_task *t, uint32_t off,
			uint32_t len)
{
	struct tcp_task *tt = tcp_task(t);
	const struct idm_prov_xfer *x = NULL;
	uint32_t lo, hi;

	while ((x = idm_prov_task_xfer_next(t, x))) {
		if (x->dir == IDM_DATA_OUT &&
		    tcp_overlap(off, off + len, x->offset, x->offset + x->length,
				&lo, &hi)) {
			idm_prov_xfer_copy_in(x, lo, tt->unsol.stage + lo, hi - lo);
			idm_prov_stats_copy(tc->st, hi - lo);
			tcp_get_of(x)->got += hi - lo;
			idm_prov_task_add_received(t, hi - lo);
		}
	}
}

/* The SCSI Command's header is in, its immediate data still on the wire:
 * notify the caller first, so that a Get_Data from the callback gets the
 * data read straight into its buffer (no copy in user space). Otherwise
 * the data goes to the staging copy. The callback never waits for the
 * data: a peer that sends a header and holds back its data would stall
 * every connection of the context. So the PDU shows no data
 * (idm_pdu_data() gives NULL, 0); Get_Data is the only way to it. */
static void tgt_cmd_early(struct tcp_conn *tc)
{
	struct idm_task *t = tc->rtask;
	struct tcp_task *tt = tcp_task(t);
	uint32_t len = tc->rl.dsl;
	struct idm_pdu p = {
		.bhs = tc->rhdr,
		.ahs = tc->rl.ahs ? tc->rhdr + IDM_ISCSI_BHS_LEN : NULL,
		.ahs_len = tc->rl.ahs,
		.data = NULL, /* not read yet: Get_Data says where it goes */
		.data_len = 0,
		.task = t,
	};
	const struct idm_prov_xfer *x;

	idm_prov_control_notify(tc->conn, &p);
	if (tc->closed || tc->rdst != DST_EARLY)
		return; /* failed, or task freed (discard) */
	if (!idm_prov_task_active(t) || tt->task != t) {
		tc->rtask = NULL;
		tc->rdst = DST_DISCARD;
		return;
	}
	x = idm_prov_task_xfer_cover(t, IDM_DATA_OUT, 0, len);
	if (x) {
		tc->rget = x;
		tcp_rx_place_get(tc, x, 0); /* readv over its segments */
		return;
	}
	/* staged bytes count as received once they are all in */
	tt->unsol.rcvd = 0;
	tc->rptr = idm_prov_unsol_stage(&tt->unsol, 0);
	if (!tc->rptr) {
		tt->unsol.rcvd = len;
		tcp_conn_fail(tc, -ENOMEM, "no memory to stage immediate data");
		return;
	}
	tc->rdst = DST_STAGE;
}

static enum tcp_rx_verdict tgt_cmd_done(struct tcp_conn *tc,
					struct idm_task **deliver)
{
	struct idm_task *t = tc->rtask;
	struct tcp_task *tt = tcp_task(t);
	uint32_t len = tc->rl.dsl;

	if (!len) {
		*deliver = t; /* no data: notified only now */
		return TCP_RX_DELIVER;
	}
	switch (tc->rdst) {
	case DST_PLACE:
		tcp_get_of(tc->rget)->got += len;
		idm_prov_task_add_received(t, len);
		break;
	case DST_STAGE:
		tt->unsol.rcvd = len;
		take_staged(tc, t, 0, len);
		break;
	default: /* DST_DISCARD and DST_REPORT end in on_pdu */
		break;
	}
	tcp_get_complete_ready(tc, t);
	return TCP_RX_DONE;
}

/* ---- Data-Out -------------------------------------------------------- */

/* A well-framed Data-Out whose ITT or TTT matches nothing we issued: its
 * data goes to the sink (the stream stays in sync) and its header to the
 * caller with no task, who answers with a Reject (RFC 7143 11.17.1,
 * Invalid PDU field) rather than lose the connection. */
static void dataout_report(struct tcp_conn *tc, const char *what,
			   uint32_t itt, uint32_t ttt)
{
	idm_prov_dbg(tc->ctx, "tcp: Data-Out with %s (ITT 0x%08x TTT 0x%08x): "
		     "passed to the caller", what, itt, ttt);
	tc->rdst = DST_REPORT;
}

/* Unsolicited Data-Out (TTT reserved) of task t: into the caller's
 * buffer if one covers it and staging has not started, else staged. */
static int tgt_dataout_unsol(struct tcp_conn *tc, struct idm_task *t,
			     struct tcp_task *tt, uint32_t itt)
{
	const uint8_t *bhs = tc->rhdr;
	uint32_t off = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET);
	uint32_t sn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_DATASN), len = tc->rl.dsl;
	char why[160];

	if (idm_prov_unsol_dataout(&tt->unsol, off, len, sn, why,
				   sizeof(why)) < 0) {
		tcp_conn_fail(tc, -EPROTO, "%s (ITT 0x%08x)", why, itt);
		return -1;
	}
	/* once staging started, everything goes there, in order */
	if (!tt->unsol.stage &&
	    (tc->rget = idm_prov_task_xfer_cover(t, IDM_DATA_OUT, off, len))) {
		tcp_rx_place_get(tc, tc->rget, off);
		return 0;
	}
	tc->rdst = DST_STAGE;
	tc->rptr = idm_prov_unsol_stage(&tt->unsol, off);
	if (!tc->rptr) {
		tcp_conn_fail(tc, -ENOMEM, "no memory to stage unsolicited data");
		return -1;
	}
	return 0;
}

/* Solicited Data-Out: the R2T of tt it answers (by TTT), checked
 * against it. 1 if no R2T has that TTT. */
static int tgt_dataout_r2t(struct tcp_conn *tc, struct tcp_task *tt,
			   uint32_t itt, uint32_t ttt)
{
	const uint8_t *bhs = tc->rhdr;
	uint32_t off = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET);
	uint32_t sn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_DATASN), len = tc->rl.dsl;
	uint64_t end = (uint64_t)off + len;

	for (unsigned i = 0; i < tt->nr2t; i++) {
		struct tcp_r2t *r = &tt->r2t[i];

		if (r->ttt != ttt)
			continue;
		if (off < r->off || end > (uint64_t)r->off + r->len) {
			tcp_conn_fail(tc, -EPROTO,
				      "Data-Out [%u, +%u) outside its R2T [%u, "
				      "+%u) (ITT 0x%08x)",
				      off, len, r->off, r->len, itt);
			return -1;
		}
		if (tc->params->data_pdu_in_order &&
		    (off != r->off + r->got || sn != r->exp_datasn)) {
			tcp_conn_fail(tc, -EPROTO,
				      "Data-Out out of order: offset %u DataSN "
				      "%u, expected %u and %u (ITT 0x%08x)",
				      off, sn, r->off + r->got, r->exp_datasn,
				      itt);
			return -1;
		}
		tc->rr2t = r;
		tc->rget = r->x;
		tcp_rx_place_get(tc, tc->rget, off);
		return 0;
	}
	return 1;
}

static int tgt_dataout_header(struct tcp_conn *tc)
{
	const uint8_t *bhs = tc->rhdr;
	uint32_t itt = idm_iscsi_bhs_itt(bhs),
		 ttt = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT);
	struct idm_task *t = idm_prov_task_find(tc->conn, itt);
	struct tcp_task *tt = tcp_task_live(t);
	int r;

	if (!tt && tcp_dead_itt(tc, itt)) {
		/* late data of a task the caller ended */
		tc->st->late_pdus_dropped++;
		tc->rdst = DST_DISCARD;
		return 0;
	}
	if (!tt) {
		dataout_report(tc, "unknown ITT", itt, ttt);
		return 0;
	}
	if (!tt->write) {
		tcp_conn_fail(tc, -EPROTO,
			      "Data-Out for ITT 0x%08x, not a write", itt);
		return -1;
	}
	if (!tc->rl.dsl) {
		tcp_conn_fail(tc, -EPROTO, "Data-Out without data (ITT 0x%08x)",
			      itt);
		return -1;
	}
	tc->rtask = t;
	if (ttt == IDM_ISCSI_RESERVED_TAG)
		return tgt_dataout_unsol(tc, t, tt, itt);
	r = tgt_dataout_r2t(tc, tt, itt, ttt);
	if (r <= 0)
		return r;
	tc->rtask = NULL;
	dataout_report(tc, "unknown TTT", itt, ttt);
	return 0;
}

static int tgt_dataout_done(struct tcp_conn *tc)
{
	struct idm_task *t = tc->rtask;
	struct tcp_task *tt = tcp_task(t);
	uint32_t off = idm_iscsi_get32(tc->rhdr + IDM_ISCSI_BHS_BUF_OFFSET);
	uint32_t len = tc->rl.dsl;
	bool fbit = tc->rhdr[1] & IDM_ISCSI_FLAG_FINAL;
	struct tcp_r2t *r = tc->rr2t;

	if (!r) {
		char why[96];

		if (tc->rdst == DST_PLACE) {
			tcp_get_of(tc->rget)->got += len;
			idm_prov_task_add_received(t, len);
		} else {
			take_staged(tc, t, off, len);
		}
		if (idm_prov_unsol_arrived(&tt->unsol, len, fbit, why,
					   sizeof(why)) < 0) {
			tcp_conn_fail(tc, -EPROTO, "ITT 0x%08x: %s",
				      idm_task_itt(t), why);
			return -1;
		}
	} else {
		r->got += len;
		r->exp_datasn++;
		tcp_get_of(tc->rget)->got += len;
		idm_prov_task_add_received(t, len);
		if (r->got == r->len) {
			*r = tt->r2t[--tt->nr2t];
			if (tcp_issue_r2ts(tc, t) < 0) {
				tcp_conn_fail(tc, -ENOMEM,
					      "no memory for an R2T");
				return -1;
			}
		} else if (fbit && tc->params->data_pdu_in_order) {
			tcp_conn_fail(tc, -EPROTO,
				      "Data-Out with F bit before the end of "
				      "its R2T (ITT 0x%08x)",
				      idm_task_itt(t));
			return -1;
		}
	}
	tcp_get_complete_ready(tc, t);
	return 0;
}

static void tgt_task_release(struct tcp_conn *tc, struct idm_task *t)
{
	struct tcp_task *tt = tcp_task(t);

	if (tt->task != t)
		return;
	if (!tc->closed)
		tcp_dead_itt_add(tc, idm_task_itt(t));
	tcp_tx_cancel_task(tc, t);
	tcp_get_cancel_all(tc, t); /* the core drops the records next */
	idm_prov_unsol_free(&tt->unsol);
	tt->ack_wait = false;
	tt->task = NULL;
}

/* ---- the target's half of the receive path --------------------------- */

static int tgt_header(struct tcp_conn *tc, uint8_t op)
{
	if (op == IDM_ISCSI_OP_SCSI_CMD)
		return tgt_cmd_header(tc);
	if (op == IDM_ISCSI_OP_DATA_OUT)
		return tgt_dataout_header(tc);
	return 0;
}

static enum tcp_rx_verdict tgt_pdu(struct tcp_conn *tc, uint8_t op,
				   struct idm_task **task)
{
	switch (op) {
	case IDM_ISCSI_OP_SCSI_CMD:
		return tgt_cmd_done(tc, task);
	case IDM_ISCSI_OP_DATA_OUT:
		return tgt_dataout_done(tc) < 0 ? TCP_RX_FAILED : TCP_RX_DONE;
	case IDM_ISCSI_OP_SNACK_REQ:
		return tcp_tgt_snack(tc);
	case IDM_ISCSI_OP_NOP_OUT:
		return TCP_RX_DELIVER_NOP;
	default:
		return TCP_RX_DELIVER;
	}
}

const struct tcp_role tcp_target_role = {
	.header = tgt_header,
	.early = tgt_cmd_early,
	.pdu = tgt_pdu,
	.task_release = tgt_task_release,
};
