/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Initiator data path (RFC 7145 7.3.1, 7.3.2, 9.5): a SCSI Command goes out
 * as one Send with the STags of its buffers in the iSER header, immediate
 * data as a second SGE straight from the caller's buffer (no copy), and
 * unsolicited Data-Out as further Sends. The target moves everything else
 * with RDMA. STags are type-2 memory windows bound for exactly the I/O and
 * invalidated, by the target's Send with Invalidate or locally, before the
 * SCSI Response reaches the caller (iser_stag.c); the task completes only
 * once its Sends completed too. The layers below reach this file only
 * through iser_ini_role.
 */
#include "iser_initiator.h"
#include "iser_fail.h"
#include "iser_msgpool.h"
#include "iser_recv.h"
#include "iser_reg.h"
#include "iser_send.h"
#include "iser_sq.h"
#include "iser_stag.h"
#include "iser_stage.h"
#include "iser_cq.h"

#include <errno.h>
#include <string.h>

#include <libidm/iscsi.h>

static int ini_cmd_post(struct iser_conn *ic, const uint8_t *bhs,
			const void *ahs, size_t ahs_len, struct idm_task *t);
static void ini_task_release(struct iser_conn *ic, struct idm_task *t);

/* Send the task's unsolicited Data-Out PDUs (7.3.4) as far as send
 * buffers and queue slots allow; the rest goes out as earlier Sends
 * complete (ini_sq_room). Each is a 76-byte header plus an SGE on
 * the caller's buffer: no copy. Returns 0, or < 0 if the QP failed. */
static int dout_push(struct iser_conn *ic, struct idm_task *t)
{
	struct iser_task *it = iser_task(t);
	uint32_t dsl = ic->send_dsl;

	while (it->dout_next < it->dout_end) {
		uint32_t off = it->dout_next;
		uint32_t n = it->dout_end - off < dsl ? it->dout_end - off : dsl;
		struct iser_hdr h = {.opcode = ISER_OP_CTRL};
		struct ibv_sge sge = {.addr = (uintptr_t)(it->dout_base + off),
				      .length = n, .lkey = it->dout_mr->lkey};
		struct iser_msg *m;
		uint8_t *bhs;
		int r;

		/* leave op slots for commands' binds and invalidations */
		if (ISER_OPS - ic->ops_used < 8 || !(m = iser_tx_get(ic)))
			return 1; /* later */
		iser_hdr_encode(m->mem, &h);
		bhs = m->mem + ISER_HDR_LEN;
		memset(bhs, 0, IDM_ISCSI_BHS_LEN);
		bhs[0] = IDM_ISCSI_OP_DATA_OUT;
		bhs[1] = off + n == it->dout_end ? IDM_ISCSI_FLAG_FINAL : 0;
		idm_iscsi_bhs_set_data_len(bhs, n);
		memcpy(bhs + IDM_ISCSI_BHS_LUN, it->dout_hdr, 8);
		memcpy(bhs + IDM_ISCSI_BHS_ITT, it->dout_hdr + 8, 4);
		idm_iscsi_put32(bhs + IDM_ISCSI_BHS_TTT, IDM_ISCSI_RESERVED_TAG);
		idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, it->dout_expstatsn);
		idm_iscsi_put32(bhs + IDM_ISCSI_BHS_DATASN, it->dout_sn);
		idm_iscsi_put32(bhs + IDM_ISCSI_BHS_BUF_OFFSET, off);
		r = iser_send_msg(ic, m, ISER_HDR_LEN + IDM_ISCSI_BHS_LEN, &sge, 1, t, 0);
		if (r < 0)
			return r;
		it->dout_next += n;
		it->dout_sn++;
	}
	return 0;
}

/* The task at the head of the Data-Out queue, or NULL. */
static struct idm_task *dout_first(struct iser_conn *ic)
{
	struct idm_sq_link *l = ic->dout.head;

	return l ? IDM_PROV_CONTAINER_OF(l, struct iser_task, dout_link)->dout_task
		 : NULL;
}

static void dout_unqueue(struct iser_conn *ic, struct idm_task *t)
{
	struct iser_task *it = iser_task(t);
	struct idm_sq_link *prev = NULL, *l;

	if (!it->dout_queued)
		return;
	for (l = ic->dout.head; l; prev = l, l = l->next) {
		if (l == &it->dout_link) {
			idm_sq_remove(&ic->dout, prev, l);
			break;
		}
	}
	it->dout_queued = false;
}

/* Send room came back: Data-Out that waited goes first. */
static void ini_sq_room(struct iser_conn *ic)
{
	struct idm_task *t;

	while ((t = dout_first(ic)) && ic->state == ISER_UP) {
		int r = dout_push(ic, t);

		if (r < 0) {
			iser_conn_fail(ic, r, "cannot send unsolicited Data-Out");
			return;
		}
		if (r > 0)
			return;
		dout_unqueue(ic, t);
	}
}

static int send_data_outs(struct iser_conn *ic, struct idm_task *t,
			  const uint8_t *cmd, struct ibv_mr *mr, uint8_t *base,
			  uint32_t from, uint32_t to)
{
	struct iser_task *it = iser_task(t);
	int r;

	memcpy(it->dout_hdr, cmd + IDM_ISCSI_BHS_LUN, 8);
	memcpy(it->dout_hdr + 8, cmd + IDM_ISCSI_BHS_ITT, 4);
	it->dout_expstatsn = idm_iscsi_get32(cmd + IDM_ISCSI_BHS_EXP_STATSN);
	it->dout_next = from;
	it->dout_end = to;
	it->dout_sn = 0;
	it->dout_mr = mr;
	it->dout_base = base;
	/* behind tasks already waiting, to keep each task's order simple */
	r = !idm_sq_empty(&ic->dout) ? 1 : dout_push(ic, t);
	if (r > 0) {
		it->dout_queued = true;
		it->dout_task = t;
		idm_sq_push(&ic->dout, &it->dout_link);
		r = 0;
	}
	return r;
}

/* The caller's buffer range for dir (idm_task_set_data) when the command
 * moves data that way and the range is not empty. */
static bool cmd_range(const uint8_t *bhs, struct idm_task *t,
		      enum idm_data_dir dir, struct idm_prov_range *r)
{
	uint8_t flag = dir == IDM_DATA_IN ? IDM_ISCSI_CMD_READ : IDM_ISCSI_CMD_WRITE;

	return (bhs[1] & flag) && idm_prov_task_data(t, dir, r) == 0 &&
	       r->length;
}

/* Staging units len bytes take (iser_stage.c: the area is cut in
 * ISER_STAGE_UNITS equal units). */
static uint64_t stage_units(const struct iser_conn *ic, uint32_t len)
{
	uint32_t unit = ic->ip->stage_bytes / ISER_STAGE_UNITS;

	return ((uint64_t)len + unit - 1) / unit;
}

/* Check the command against its buffers and register them (once per
 * buffer, cached) before anything goes out or is queued. A range of a
 * scatter-gather buffer over segments that are not adjacent in memory
 * has no one registered region for its STag: it is staged (noted in
 * stage_len, iser_stage.c), -ENOBUFS when both directions' ranges
 * together exceed the staging area (in whole units: it could never
 * go, where a command that merely finds it busy waits), -EOPNOTSUPP
 * when staging is off (IDM_ISER_STAGING_MB=0). */
static int cmd_check(struct iser_conn *ic, const uint8_t *bhs,
		     struct idm_task *t)
{
	static const enum idm_data_dir dirs[] = {IDM_DATA_IN, IDM_DATA_OUT};
	struct iser_task *it = iser_task(t);
	struct idm_prov_range r;
	struct ibv_mr *mr;
	uint8_t *addr;
	size_t i;
	int e;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (!cmd_range(bhs, t, dirs[i], &r))
			continue;
		if (r.buf_off > idm_buf_len(r.buf) ||
		    r.length > idm_buf_len(r.buf) - r.buf_off)
			return -ERANGE;
		e = iser_buf_range_mr(ic->ip, ic->dev, r.buf, r.buf_off,
				      r.length, &mr, &addr);
		if (e == -EOPNOTSUPP)
			it->stage_len[i] = r.length; /* [STAG_READ] is IN */
		else if (e < 0)
			return e;
	}
	if (!it->stage_len[STAG_READ] && !it->stage_len[STAG_WRITE])
		return 0;
	if (!ic->ip->stage_bytes)
		return -EOPNOTSUPP;
	if (stage_units(ic, it->stage_len[STAG_READ]) +
	    stage_units(ic, it->stage_len[STAG_WRITE]) > ISER_STAGE_UNITS)
		return -ENOBUFS;
	return iser_stage_open(ic);
}

/* The role's cmd_ready: the staging units of t's scattered ranges, both
 * or none, reserved now (true) or not free yet (false: it waits in the
 * backlog until a command gives some back). */
static bool ini_cmd_ready(struct iser_conn *ic, struct idm_task *t)
{
	struct iser_task *it = iser_task(t);
	int i;

	for (i = 0; i < 2; i++) {
		if (!it->stage_len[i] || it->stage[i])
			continue;
		if (!iser_stage_take(ic, it->stage_len[i], &it->stage[i])) {
			iser_stage_put(ic, &it->stage[STAG_READ]);
			iser_stage_put(ic, &it->stage[STAG_WRITE]);
			return false;
		}
	}
	return true;
}

/* Give back t's staging units; the backlog may hold a command that
 * waits for them. */
static void stage_release(struct iser_conn *ic, struct idm_task *t)
{
	struct iser_task *it = iser_task(t);

	if (!it->stage[STAG_READ] && !it->stage[STAG_WRITE])
		return;
	iser_stage_put(ic, &it->stage[STAG_READ]);
	iser_stage_put(ic, &it->stage[STAG_WRITE]);
	if (!idm_sq_empty(&ic->pend))
		iser_sq_refill_later(ic);
}

int iser_ini_send_cmd(struct iser_conn *ic, const uint8_t *bhs,
		      const void *ahs, size_t ahs_len, struct idm_task *t)
{
	struct iser_pool *tx = iser_tx_pool(ic);
	int r;

	memset(iser_task(t), 0, sizeof(struct iser_task));
	iser_task(t)->edtl = idm_iscsi_get32(bhs + IDM_ISCSI_CMD_EDTL);
	r = cmd_check(ic, bhs, t);
	if (r < 0)
		return r;
	if (ISER_HDR_LEN + IDM_ISCSI_BHS_LEN + ahs_len > tx->size)
		return -EMSGSIZE;
	/* Behind commands already waiting, or when the message pool, the
	 * op slots or the staging area ran short: keep it, in order, until
	 * Sends (or responses) complete. */
	if (!idm_sq_empty(&ic->pend) || ic->hello_wait || !tx->n_free ||
	    ISER_OPS - ic->ops_used < 5 || !ini_cmd_ready(ic, t))
		return iser_pend_cmd(ic, bhs, ahs, ahs_len, t);
	return ini_cmd_post(ic, bhs, ahs, ahs_len, t);
}

/* Where a command's data is, each way: the MR and address the target's
 * RDMA uses (NULL: that way moves nothing), and for a write what the
 * Sends carry (immediate data up to imm, unsolicited Data-Out up to
 * unsol). */
struct cmd_mem {
	struct ibv_mr *in_mr, *out_mr;
	uint8_t *in_base, *out_base;
	uint32_t in_len, out_len, imm, unsol;
};

/* cmd_check() registered both ranges: these are lookups, and the address
 * is the range's in its region (a range of a scatter-gather buffer has no
 * out.addr). A staged range has its units instead (cmd_ready reserved
 * them). */
static void cmd_mem_in(struct iser_conn *ic, const uint8_t *bhs,
		       struct idm_task *t, struct cmd_mem *cm)
{
	struct iser_task *it = iser_task(t);
	struct idm_prov_range in;

	if (!cmd_range(bhs, t, IDM_DATA_IN, &in))
		return;
	cm->in_len = in.length;
	if (it->stage[STAG_READ]) {
		cm->in_mr = iser_stage_mr(ic);
		cm->in_base = iser_stage_addr(ic, it->stage[STAG_READ]);
	} else if (iser_buf_range_mr(ic->ip, ic->dev, in.buf, in.buf_off,
				     in.length, &cm->in_mr, &cm->in_base) < 0) {
		cm->in_mr = NULL;
	}
}

static void cmd_mem_out(struct iser_conn *ic, const uint8_t *bhs,
			struct idm_task *t, struct cmd_mem *cm)
{
	struct iser_task *it = iser_task(t);
	uint32_t edtl = idm_iscsi_get32(bhs + IDM_ISCSI_CMD_EDTL);
	struct idm_prov_unsol_plan plan;
	struct idm_prov_range out;

	if (!cmd_range(bhs, t, IDM_DATA_OUT, &out))
		return;
	cm->out_len = out.length < edtl ? out.length : edtl;
	if (it->stage[STAG_WRITE]) {
		/* the target reads from the staging units: what it may
		 * read, and the immediate and unsolicited data the Sends
		 * take from there, copied in now */
		cm->out_mr = iser_stage_mr(ic);
		cm->out_base = iser_stage_addr(ic, it->stage[STAG_WRITE]);
		idm_prov_buf_copy_out(cm->out_base, out.buf, out.buf_off,
				      cm->out_len);
		idm_prov_stats_copy(ic->st, cm->out_len);
	} else if (iser_buf_range_mr(ic->ip, ic->dev, out.buf, out.buf_off,
				     out.length, &cm->out_mr,
				     &cm->out_base) < 0) {
		cm->out_mr = NULL;
	}
	idm_prov_unsol_plan(ic->params, ic->send_dsl, edtl, out.length, &plan);
	cm->imm = plan.imm;
	cm->unsol = plan.unsol_end;
}

/* Bind and advertise the windows the target's RDMA Writes (read data)
 * and RDMA Reads (solicited write data) go through, into the iSER
 * header. */
static int cmd_advertise(struct iser_conn *ic, struct idm_task *t,
			 const struct cmd_mem *cm, struct iser_hdr *h)
{
	struct iser_task *it = iser_task(t);
	int r;

	if (cm->in_mr) {
		r = iser_stag_advertise(ic, t, STAG_READ, cm->in_mr,
					cm->in_base, cm->in_len);
		if (r < 0)
			return r;
		h->rsv = true;
		h->read_stag = it->stag[STAG_READ];
		h->read_va = (uintptr_t)cm->in_base;
	}
	if (cm->out_mr && cm->unsol < cm->out_len) {
		/* Linux/LIO convention: the Write VA points past the
		 * unsolicited part (seeds-001-004.md 2.6). */
		r = iser_stag_advertise(ic, t, STAG_WRITE, cm->out_mr,
					cm->out_base + cm->unsol,
					cm->out_len - cm->unsol);
		if (r < 0)
			return r;
		h->wsv = true;
		h->write_stag = it->stag[STAG_WRITE];
		h->write_va = (uintptr_t)(cm->out_base + cm->unsol);
	}
	return 0;
}

/* The command's Send: iSER header, BHS (DSL and F bit for the data the
 * Sends carry), AHS, and the immediate data as an SGE on its buffer. */
static int cmd_send(struct iser_conn *ic, const uint8_t *bhs,
		    const void *ahs, size_t ahs_len, struct idm_task *t,
		    const struct iser_hdr *h, const struct cmd_mem *cm)
{
	struct iser_msg *m = iser_tx_get(ic);
	struct ibv_sge sge;
	uint8_t *cmdbhs;

	if (!m)
		return -EAGAIN;
	iser_hdr_encode(m->mem, h);
	cmdbhs = m->mem + ISER_HDR_LEN;
	memcpy(cmdbhs, bhs, IDM_ISCSI_BHS_LEN);
	cmdbhs[IDM_ISCSI_BHS_TOTAL_AHS_LEN] = (uint8_t)(ahs_len / 4);
	idm_iscsi_bhs_set_data_len(cmdbhs, cm->imm);
	if (cm->unsol > cm->imm)
		cmdbhs[1] &= (uint8_t)~IDM_ISCSI_FLAG_FINAL;
	else
		cmdbhs[1] |= IDM_ISCSI_FLAG_FINAL;
	if (ahs_len)
		memcpy(cmdbhs + IDM_ISCSI_BHS_LEN, ahs, ahs_len);
	sge.addr = (uintptr_t)cm->out_base;
	sge.length = cm->imm;
	sge.lkey = cm->out_mr ? cm->out_mr->lkey : 0;
	return iser_send_msg(ic, m,
			     (uint32_t)(ISER_HDR_LEN + IDM_ISCSI_BHS_LEN + ahs_len),
			     &sge, cm->imm ? 1 : 0, t, 0);
}

/* Post the command now: its binds, its Send and its unsolicited
 * Data-Out. Also the role's cmd_post for a command from the backlog. */
static int ini_cmd_post(struct iser_conn *ic, const uint8_t *bhs,
			const void *ahs, size_t ahs_len, struct idm_task *t)
{
	struct iser_hdr h = {.opcode = ISER_OP_CTRL};
	struct cmd_mem cm = {0};
	int r;

	cmd_mem_in(ic, bhs, t, &cm);
	cmd_mem_out(ic, bhs, t, &cm);
	/* binds, the command Send and its Data-Outs leave as one chain */
	iser_plug(ic);
	r = cmd_advertise(ic, t, &cm, &h);
	if (r == 0)
		r = cmd_send(ic, bhs, ahs, ahs_len, t, &h, &cm);
	if (r < 0) {
		/* windows already bound were never advertised: recycle
		 * them */
		if (ic->state == ISER_UP)
			ini_task_release(ic, t);
		iser_unplug(ic);
		return r;
	}
	if (cm.unsol > cm.imm) {
		r = send_data_outs(ic, t, bhs, cm.out_mr, cm.out_base, cm.imm,
				   cm.unsol);
		if (r < 0) {
			/* part of the command is on the wire: the
			 * connection cannot continue */
			iser_unplug(ic);
			iser_conn_fail(ic, r, "cannot send unsolicited Data-Out");
			return 0;
		}
	}
	iser_unplug(ic);
	return 0;
}

static void ini_try_complete(struct iser_conn *ic, struct idm_task *t);

static void ini_rsp(struct iser_conn *ic, struct idm_task *t, struct iser_msg *m,
		    const struct ibv_wc *wc)
{
	struct iser_task *it = iser_task(t);
	int i, r;

	if (iser_wc_invalidated(wc, it)) {
		uint32_t rkey = wc->invalidated_rkey;

		if (!ic->send_inv) {
			iser_rx_done(ic, m);
			iser_conn_fail(ic, -EPROTO, "remote invalidation of %#x "
				       "without Send with Invalidate negotiated", rkey);
			return;
		}
		if (!iser_stag_remote_inv(ic, it, rkey)) {
			iser_rx_done(ic, m);
			iser_conn_fail(ic, -EPROTO, "peer invalidated rkey %#x "
				       "that task %#x did not advertise", rkey,
				       idm_task_itt(t));
			return;
		}
	}
	/* 7.3.2: every STag of the task is invalid before the caller sees
	 * the response; do the rest here (bidi, or no SendInv). */
	for (i = 0; i < 2; i++) {
		if (!it->stag_valid[i])
			continue;
		if (!ic->use_mw) {
			it->stag_valid[i] = false; /* MR: nothing to revoke */
			continue;
		}
		r = iser_stag_local_inv(ic, t, i, true);
		if (r < 0) {
			iser_rx_done(ic, m);
			iser_conn_fail(ic, r, "cannot invalidate STag %#x",
				       it->stag[i]);
			return;
		}
	}
	it->rsp = m;
	ini_try_complete(ic, t);
}

/* Bytes of the Data-In range the target placed, from its SCSI Response
 * (RFC 7143 11.4.5): the expected length (EDTL; a bidirectional
 * command's read range) less an underflow's residual; none when the
 * command failed at the target (the residual is not valid then). The
 * target's RDMA Writes are not seen here, so this is how the initiator
 * knows (idm_task_data_received). */
static uint32_t in_placed(const uint8_t *rsp, const struct iser_task *it,
			  uint32_t in_len, bool bidi)
{
	uint8_t under = bidi ? IDM_ISCSI_RSP_BIDI_UNDERFLOW : IDM_ISCSI_RSP_UNDERFLOW;
	uint32_t exp = bidi || it->edtl > in_len ? in_len : it->edtl;
	uint32_t resid = idm_iscsi_get32(rsp + (bidi ? IDM_ISCSI_BHS_BUF_OFFSET
						       : IDM_ISCSI_BHS_RESIDUAL));

	if (rsp[2] != 0) /* Response: not "Command Completed at Target" */
		return 0;
	if (rsp[1] & under)
		return resid < exp ? exp - resid : 0;
	return exp;
}

/* The SCSI Response goes to the caller once the task's Sends and local
 * invalidations completed. A staged Data-In range is copied into the
 * caller's segments first (its STag is invalid by now: nothing writes
 * there any more). */
static void ini_try_complete(struct iser_conn *ic, struct idm_task *t)
{
	struct iser_task *it = iser_task(t);
	struct iser_msg *m = it->rsp;
	struct idm_prov_range in, out;
	struct idm_pdu pdu;
	const uint8_t *bhs;

	if (!m || it->sends_pending || it->linv_pending)
		return;
	it->rsp = NULL;
	bhs = m->mem + ISER_HDR_LEN;
	iser_rx_pdu(&pdu, bhs);
	pdu.task = t;
	if (idm_prov_task_data(t, IDM_DATA_IN, &in) == 0 && in.length) {
		uint32_t n = in_placed(bhs, it, in.length,
				       idm_prov_task_data(t, IDM_DATA_OUT, &out) == 0 &&
				       out.length);

		if (it->stage[STAG_READ]) {
			idm_prov_buf_copy_in(in.buf, in.buf_off,
					     iser_stage_addr(ic, it->stage[STAG_READ]), n);
			idm_prov_stats_copy(ic->st, n);
		}
		idm_prov_task_add_received(t, n);
	}
	stage_release(ic, t);
	idm_prov_control_notify(ic->conn, &pdu);
	iser_rx_done(ic, m);
}

/* Teardown or task end: give back what the task holds. Windows still
 * valid are invalidated locally when the QP still works. */
static void ini_task_release(struct iser_conn *ic, struct idm_task *t)
{
	struct iser_task *it = iser_task(t);

	/* what never reached the send queue must not touch the buffers */
	iser_pend_drop_task(ic, t);
	iser_sq_purge_task(ic, t);
	iser_stags_release(ic, t);
	stage_release(ic, t);
	if (it->rsp) {
		iser_pool_put(it->rsp);
		it->rsp = NULL;
	}
	dout_unqueue(ic, t);
	iser_ops_orphan(ic, t);
	it->sends_pending = it->linv_pending = 0;
}

static void ini_op_done(struct iser_conn *ic, enum iser_op_kind kind,
			struct idm_task *t, struct iser_dop *dop, uint32_t len)
{
	(void)dop;
	(void)len;
	if (!t)
		return;
	switch (kind) {
	case ISER_OP_SEND:
		iser_task(t)->sends_pending--;
		ini_try_complete(ic, t);
		break;
	case ISER_OP_LINV:
		iser_task(t)->linv_pending--;
		ini_try_complete(ic, t);
		break;
	default:
		break;
	}
}

/* A SCSI Response of a known task waits for its STags and Sends. */
static bool ini_recv(struct iser_conn *ic, struct iser_msg *m,
		     const struct iser_hdr *h, struct idm_pdu *pdu,
		     const struct ibv_wc *wc)
{
	struct idm_task *t;

	(void)h;
	if (idm_iscsi_bhs_opcode(pdu->bhs) != IDM_ISCSI_OP_SCSI_RSP)
		return false;
	t = idm_prov_task_find(ic->conn, idm_iscsi_bhs_itt(pdu->bhs));
	if (!t)
		return false;
	ini_rsp(ic, t, m, wc);
	return true;
}

const struct iser_role iser_ini_role = {
	.op_done = ini_op_done,
	.recv = ini_recv,
	.sq_room = ini_sq_room,
	.cmd_post = ini_cmd_post,
	.cmd_ready = ini_cmd_ready,
	.task_release = ini_task_release,
};
