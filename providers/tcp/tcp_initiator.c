/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Initiator side transfers: a SCSI Command carries immediate data and is
 * followed by unsolicited Data-Out as ImmediateData, InitialR2T and
 * FirstBurstLength allow; each R2T is answered, in order, with Data-Out
 * from the task's write buffer; Data-In lands straight in the task's read
 * buffer after its tag, DataSN, offset and length were checked.
 */
#include "tcp.h"
#include "tcp_initiator.h"
#include "tcp_state.h"
#include "tcp_late.h"
#include "tcp_tx.h"
#include "tcp_txd.h"
#include "tcp_rx.h"
#include "tcp_segment.h"

#include <errno.h>
#include <string.h>

/* The unsolicited Data-Out after a command, from out (or the buffer's
 * segments, out NULL), as plan says. */
static int ini_queue_unsol(struct tcp_conn *tc, struct idm_task *t,
			   const struct idm_prov_unsol_plan *plan,
			   const uint8_t *out, const struct idm_prov_range *w)
{
	struct tcp_txd *d = tcp_txd_get(tc);

	if (!d)
		return -ENOMEM;
	d->kind = TXD_DATAOUT;
	d->task = t;
	memcpy(d->tmpl, tcp_task(t)->lun, 8);
	d->itt = idm_task_itt(t);
	d->ttt = IDM_ISCSI_RESERVED_TAG;
	d->base = out;
	d->sg = out ? NULL : w->buf;
	d->sg_off = w->buf_off;
	d->start = d->pos = plan->imm;
	d->end = plan->unsol_end;
	tcp_tx_queue(tc, d);
	return 0;
}

int tcp_ini_send_cmd(struct tcp_conn *tc, const uint8_t *bhs, const void *ahs,
		     size_t ahs_len, struct idm_task *t)
{
	const struct idm_conn_params *p = tc->params;
	struct tcp_task *tt = tcp_task(t);
	struct idm_prov_unsol_plan plan = { 0 };
	struct idm_prov_range w;
	const uint8_t *out = NULL;
	uint8_t hdr[IDM_ISCSI_BHS_LEN];
	int r;

	if (tt->task == t && tt->cmd_sent)
		return -EBUSY; /* one command per task */
	memcpy(hdr, bhs, IDM_ISCSI_BHS_LEN);
	if ((hdr[1] & IDM_ISCSI_CMD_WRITE) &&
	    idm_prov_task_data(t, IDM_DATA_OUT, &w) == 0 && w.length) {
		out = w.addr;
		idm_prov_unsol_plan(p, tc->send_dsl,
				    idm_iscsi_get32(bhs + IDM_ISCSI_CMD_EDTL), w.length,
				    &plan);
	} else {
		plan.cmd_final = true;
	}
	/* F: no unsolicited Data-Out follows (RFC 7143 11.3.1) */
	if (plan.cmd_final)
		hdr[1] |= IDM_ISCSI_FLAG_FINAL;
	else
		hdr[1] &= (uint8_t)~IDM_ISCSI_FLAG_FINAL;

	memset(tt, 0, sizeof(*tt));
	tt->task = t;
	memcpy(tt->lun, bhs + IDM_ISCSI_BHS_LUN, 8);
	tt->unsol_end = plan.unsol_end;
	if (plan.imm && !out) /* the immediate data spans segments */
		r = tcp_tx_ctrl_sg(tc, hdr, ahs, ahs_len, t, w.buf, w.buf_off, plan.imm);
	else
		r = tcp_tx_ctrl(tc, hdr, ahs, ahs_len, NULL, 0, t,
				plan.imm ? out : NULL, plan.imm);
	if (r < 0) {
		tt->task = NULL;
		return r;
	}
	if (plan.unsol_end > plan.imm &&
	    ini_queue_unsol(tc, t, &plan, out, &w) < 0) {
		/* the command is queued: keep the stream consistent */
		tcp_tx_cancel_task(tc, t);
		tt->task = NULL;
		return -ENOMEM;
	}
	tt->cmd_sent = true;
	return 0;
}

/* The task of itt whose command went out, and its provider area in *tt;
 * NULL if there is none. */
static struct idm_task *live_task(struct tcp_conn *tc, uint32_t itt,
				  struct tcp_task **tt)
{
	struct idm_task *t = idm_prov_task_find(tc->conn, itt);

	*tt = tcp_task_live(t);
	if (!*tt || !(*tt)->cmd_sent)
		return NULL;
	return t;
}

static int ini_datain_header(struct tcp_conn *tc)
{
	const uint8_t *bhs = tc->rhdr;
	uint32_t itt = idm_iscsi_bhs_itt(bhs), len = tc->rl.dsl;
	uint32_t off = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET);
	uint32_t sn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_DATASN);
	struct tcp_task *tt;
	struct idm_task *t = live_task(tc, itt, &tt);
	struct idm_prov_range rd;

	if (!t && tcp_late_has(tc, itt)) {
		/* late data of a task the caller released: read past it
		 * (digest still checked, never into caller memory) and drop
		 * it; a status still reaches the caller (StatSN), without a
		 * task (tcp_rx.c, on_pdu) */
		tc->st->late_pdus_dropped++;
		idm_prov_dbg(tc->ctx, "tcp: Data-In for released ITT 0x%08x "
			     "dropped", itt);
		tc->rdst = DST_DISCARD;
		return 0;
	}
	if (!t) {
		tcp_conn_fail(tc, -EPROTO, "Data-In for unknown ITT 0x%08x",
			      itt);
		return -1;
	}
	if (sn != tt->exp_datasn) {
		tcp_conn_fail(tc, -EPROTO,
			      "Data-In DataSN %u, expected %u (ITT 0x%08x)", sn,
			      tt->exp_datasn, itt);
		return -1;
	}
	if (len && (idm_prov_task_data(t, IDM_DATA_IN, &rd) < 0 ||
		    (uint64_t)off + len > rd.length)) {
		tcp_conn_fail(tc, -EPROTO,
			      "Data-In [%u, +%u) outside the %u-byte read "
			      "buffer (ITT 0x%08x)",
			      off, len, rd.length, itt);
		return -1;
	}
	tc->rtask = t;
	if (!len)
		tcp_rx_place(tc, NULL, 0, NULL);
	else
		tcp_rx_place(tc, rd.buf, rd.buf_off + off, rd.addr ? rd.addr + off : NULL);
	return 0;
}

static enum tcp_rx_verdict ini_datain_done(struct tcp_conn *tc,
					   struct idm_task **deliver)
{
	const uint8_t *bhs = tc->rhdr;
	struct idm_task *t = tc->rtask;
	struct tcp_task *tt = tcp_task(t);

	tt->exp_datasn++;
	idm_prov_task_add_received(t, tc->rl.dsl);
	if (bhs[1] & IDM_ISCSI_DATAIN_STATUS)
		tt->answered = true;
	if ((bhs[1] & IDM_ISCSI_DATAIN_ACK) &&
	    tc->params->error_recovery_level >= 1) {
		/* RFC 7143 11.7.2: acknowledge with a DataACK SNACK */
		uint8_t ack[IDM_ISCSI_BHS_LEN];
		tcp_pdu_dataack(ack, bhs + IDM_ISCSI_BHS_LUN,
				idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT),
				tc->exp_statsn, tt->exp_datasn);
		if (tcp_tx_ctrl(tc, ack, NULL, 0, NULL, 0, NULL, NULL, 0) < 0) {
			tcp_conn_fail(tc, -ENOMEM, "no memory for a DataACK");
			return TCP_RX_FAILED;
		}
	}
	if (!(bhs[1] & IDM_ISCSI_DATAIN_STATUS))
		return TCP_RX_DONE;
	*deliver = t;
	return TCP_RX_DELIVER;
}

static int ini_r2t(struct tcp_conn *tc)
{
	const uint8_t *bhs = tc->rhdr;
	uint32_t itt = idm_iscsi_bhs_itt(bhs),
		 ttt = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT);
	uint32_t sn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_DATASN);
	uint32_t off = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET);
	uint32_t len = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_DESIRED_LEN);
	struct tcp_task *tt;
	struct idm_task *t = live_task(tc, itt, &tt);
	struct idm_prov_range w;
	struct tcp_txd *d;

	if (!t && tcp_late_has(tc, itt)) {
		/* R2T of a task the caller released: nothing to send */
		tc->st->late_pdus_dropped++;
		idm_prov_dbg(tc->ctx, "tcp: R2T for released ITT 0x%08x "
			     "dropped", itt);
		return 0;
	}
	if (!t) {
		tcp_conn_fail(tc, -EPROTO, "R2T for unknown ITT 0x%08x", itt);
		return -1;
	}
	if (ttt == IDM_ISCSI_RESERVED_TAG || sn != tt->exp_r2tsn) {
		tcp_conn_fail(tc, -EPROTO,
			      "R2T with TTT 0x%08x R2TSN %u, expected R2TSN %u "
			      "(ITT 0x%08x)",
			      ttt, sn, tt->exp_r2tsn, itt);
		return -1;
	}
	if (!len || len > tc->params->max_burst_length ||
	    idm_prov_task_data(t, IDM_DATA_OUT, &w) < 0 ||
	    (uint64_t)off + len > w.length) {
		tcp_conn_fail(tc, -EPROTO,
			      "R2T [%u, +%u) outside the %u-byte write buffer "
			      "or MaxBurstLength (ITT 0x%08x)",
			      off, len, w.length, itt);
		return -1;
	}
	tt->exp_r2tsn++;
	d = tcp_txd_get(tc);
	if (!d) {
		tcp_conn_fail(tc, -ENOMEM, "no memory to answer an R2T");
		return -1;
	}
	/* queued behind everything sent so far: R2Ts of a task are answered
	 * in the order they came (Implementer's Guide 3.2) */
	d->kind = TXD_DATAOUT;
	d->task = t;
	memcpy(d->tmpl, tt->lun, 8);
	d->itt = itt;
	d->ttt = ttt;
	d->base = w.addr;
	d->sg = w.addr ? NULL : w.buf;
	d->sg_off = w.buf_off;
	d->start = d->pos = off;
	d->end = off + len;
	tcp_tx_queue(tc, d);
	return 0;
}

static void ini_task_release(struct tcp_conn *tc, struct idm_task *t)
{
	struct tcp_task *tt = tcp_task(t);

	if (tt->task != t)
		return;
	/* only a command the target may still answer: a completed task
	 * takes no room (tcp_late.c) */
	if (!tc->closed && tt->cmd_sent && !tt->answered)
		tcp_late_add(tc, idm_task_itt(t));
	tcp_tx_cancel_task(tc, t);
	tt->cmd_sent = false;
	tt->task = NULL;
}

/* ---- the initiator's half of the receive path ------------------------ */

/* A SCSI Response goes to the caller, with its task or, for a released
 * one, without (the caller decides; its StatSN counts either way). */
static enum tcp_rx_verdict ini_scsi_rsp(struct tcp_conn *tc,
					struct idm_task **task)
{
	uint32_t itt = idm_iscsi_bhs_itt(tc->rhdr);
	struct tcp_task *tt;

	*task = idm_prov_task_find(tc->conn, itt);
	tt = tcp_task_live(*task);
	if (tt)
		tt->answered = true;
	else if (!*task)
		tcp_late_forget(tc, itt); /* the target is done with it */
	return TCP_RX_DELIVER;
}

static int ini_header(struct tcp_conn *tc, uint8_t op)
{
	if (op == IDM_ISCSI_OP_DATA_IN)
		return ini_datain_header(tc);
	if (op == IDM_ISCSI_OP_R2T && tc->rl.dsl) {
		tcp_conn_fail(tc, -EPROTO, "R2T with a data segment");
		return -1;
	}
	return 0;
}

static enum tcp_rx_verdict ini_pdu(struct tcp_conn *tc, uint8_t op,
				   struct idm_task **task)
{
	switch (op) {
	case IDM_ISCSI_OP_DATA_IN:
		return ini_datain_done(tc, task);
	case IDM_ISCSI_OP_R2T:
		return ini_r2t(tc) < 0 ? TCP_RX_FAILED : TCP_RX_DONE;
	case IDM_ISCSI_OP_SCSI_RSP:
		return ini_scsi_rsp(tc, task);
	case IDM_ISCSI_OP_NOP_IN:
		return TCP_RX_DELIVER_NOP;
	case IDM_ISCSI_OP_LOGIN_RSP:
		return TCP_RX_DELIVER_LOGIN;
	default:
		return TCP_RX_DELIVER;
	}
}

const struct tcp_role tcp_initiator_role = {
	.header = ini_header,
	.early = NULL, /* never sets DST_EARLY */
	.pdu = ini_pdu,
	.task_release = ini_task_release,
};
