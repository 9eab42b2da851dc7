/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Target data path (RFC 7145 7.3.5, 7.3.6): Put_Data is an RDMA Write into
 * the initiator's Read STag at Read VA + buffer offset; Get_Data an RDMA
 * Read from its Write STag, at most ORD of them outstanding. Immediate data
 * and unsolicited Data-Out arrive in Sends and are copied from the receive
 * buffer (iser_unsol.c); everything else is zero copy between the caller's
 * registered buffer and the wire. The layers below reach this file only
 * through iser_tgt_role.
 *
 * Write VA convention (Linux iser, LIO, tgt): the initiator advertises the
 * VA of the first *solicited* byte, so solicited data at command offset o
 * is read from Write VA + (o - unsolicited length).
 */
#include "iser_target.h"
#include "iser_control.h"
#include "iser_dop.h"
#include "iser_fail.h"
#include "iser_recv.h"
#include "iser_reg.h"
#include "iser_sq.h"
#include "iser_unsol.h"

#include <errno.h>
#include <string.h>

#include <libidm/iscsi.h>

/* A SCSI Command arrived: its task, with the initiator's STags from the
 * iSER header and the command's unsolicited data accounting. */
static int tgt_cmd(struct iser_conn *ic, const struct iser_hdr *h,
		   const uint8_t *bhs, const uint8_t *data, uint32_t dlen,
		   struct idm_task **out, const char **why)
{
	struct idm_conn *c = ic->conn;
	uint32_t edtl = idm_iscsi_get32(bhs + IDM_ISCSI_CMD_EDTL);
	bool write = bhs[1] & IDM_ISCSI_CMD_WRITE;
	struct idm_prov_unsol u;
	struct iser_task *it;
	struct idm_task *t;
	int r;

	/* Check what the peer claims before creating anything: the shared
	 * unsolicited data rules, and a Send no larger than we declared. */
	if (dlen > ic->recv_dsl) {
		*why = "immediate data longer than our RecvDataSegmentLength";
		return -EPROTO;
	}
	if (idm_prov_unsol_cmd(&u, ic->params, write, edtl, dlen,
			       bhs[1] & IDM_ISCSI_FLAG_FINAL, why) < 0)
		return -EPROTO;
	r = idm_prov_task_new(c, idm_iscsi_bhs_itt(bhs), &t);
	if (r < 0) {
		*why = r == -EEXIST ? "ITT already in use" : "no task";
		return r == -EEXIST ? -EPROTO : r;
	}
	it = iser_task(t);
	memset(it, 0, sizeof(*it));
	it->rsv = h->rsv;
	it->wsv = h->wsv;
	it->r_stag = h->read_stag;
	it->r_va = h->read_va;
	it->w_stag = h->write_stag;
	it->w_va = h->write_va;
	it->edtl = edtl;
	it->unsol = u;
	/* Get_Data from the notify takes the immediate data in place */
	it->unsol.imm = dlen ? data : NULL;
	if (write) {
		ic->stat_writes++;
		ic->stat_unsol_sends += dlen != 0;
		if (edtl > ic->stat_max_edtl)
			ic->stat_max_edtl = edtl;
	}
	*out = t;
	return 0;
}

/* Commands and unsolicited Data-Out are the target's own PDUs. */
static bool tgt_recv(struct iser_conn *ic, struct iser_msg *m,
		     const struct iser_hdr *h, struct idm_pdu *pdu,
		     const struct ibv_wc *wc)
{
	struct idm_conn *c = ic->conn;
	const uint8_t *bhs = pdu->bhs;
	uint8_t op = idm_iscsi_bhs_opcode(bhs);
	struct idm_task *t = NULL;
	const char *why = "";
	char dwhy[160];
	int r;

	(void)wc;
	if (op == IDM_ISCSI_OP_DATA_OUT) {
		dwhy[0] = '\0';
		r = iser_tgt_data_out(ic, bhs, pdu->data, pdu->data_len, dwhy,
				      sizeof(dwhy));
		iser_rx_done(ic, m);
		if (r < 0)
			iser_conn_fail(ic, r, "bad unsolicited Data-Out (ITT %#x): %s",
				       idm_iscsi_bhs_itt(bhs), dwhy);
		return true;
	}
	if (op != IDM_ISCSI_OP_SCSI_CMD)
		return false;
	r = tgt_cmd(ic, h, bhs, pdu->data, pdu->data_len, &t, &why);
	if (r < 0) {
		iser_rx_done(ic, m);
		iser_conn_fail(ic, r, "bad SCSI Command (ITT %#x): %s",
			       idm_iscsi_bhs_itt(bhs), why);
		return true;
	}
	pdu->task = t;
	idm_prov_control_notify(c, pdu);
	if (ic->state == ISER_UP && idm_prov_task_active(t) &&
	    idm_task_conn(t) == c)
		iser_tgt_cmd_done(ic, t);
	iser_rx_done(ic, m);
	return true;
}

int iser_tgt_send_rsp(struct iser_conn *ic, const uint8_t *bhs,
		      const void *ahs, size_t ahs_len, const void *data,
		      size_t data_len, struct idm_task *t)
{
	struct idm_task *task = t ? t : idm_prov_task_find(ic->conn,
							   idm_iscsi_bhs_itt(bhs));
	struct iser_task *it = task ? iser_task(task) : NULL;
	uint32_t inv = 0;
	int r;

	/* Remote mapping ends with the response (7.3.2); with Send with
	 * Invalidate the initiator's STag dies with it. */
	if (it && ic->send_inv && (it->rsv || it->wsv))
		inv = it->rsv ? it->r_stag : it->w_stag;
	r = iser_ctl_send(ic, bhs, ahs, ahs_len, data, data_len, inv);
	if (r == 0 && it)
		it->rsv = it->wsv = false;
	return r;
}

static int send_status(struct iser_conn *ic, struct idm_task *t,
		       const uint8_t *datain)
{
	uint8_t rsp[IDM_ISCSI_BHS_LEN];

	/* No phase collapse under iSER (RFC 7145 3.3): the status the
	 * caller put in the last Data-In goes out as a SCSI Response. */
	memset(rsp, 0, sizeof(rsp));
	rsp[0] = IDM_ISCSI_OP_SCSI_RSP;
	rsp[1] = IDM_ISCSI_FLAG_FINAL |
		 (datain[1] & (IDM_ISCSI_DATAIN_OVERFLOW | IDM_ISCSI_DATAIN_UNDERFLOW));
	rsp[2] = IDM_ISCSI_RESPONSE_COMPLETED;
	rsp[3] = datain[3];
	memcpy(rsp + IDM_ISCSI_BHS_ITT, datain + IDM_ISCSI_BHS_ITT, 4);
	memcpy(rsp + IDM_ISCSI_BHS_CMDSN, datain + IDM_ISCSI_BHS_CMDSN, 12);
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_DATASN, iser_task(t)->datasn);
	memcpy(rsp + IDM_ISCSI_BHS_RESIDUAL, datain + IDM_ISCSI_BHS_RESIDUAL, 4);
	return iser_tgt_send_rsp(ic, rsp, NULL, 0, NULL, 0, NULL);
}

/* WRs of kind for [buf_off, buf_off + length) of a registered buffer,
 * at remote VA raddr on rkey: one per max SGEs (a plain buffer's range is
 * one SGE, one WR), queued as one chain with the caller's plug. Each op
 * counts its own bytes, so the record completes once, with its last WR.
 * Returns the WRs queued or < 0; on failure none of them stays queued. */
static int post_range(struct iser_conn *ic, struct idm_task *t,
		      struct iser_dop *d, enum iser_op_kind kind,
		      const struct iser_bufreg *reg, int di, size_t buf_off,
		      uint32_t length, uint64_t raddr, uint32_t rkey,
		      uint32_t max)
{
	uint32_t left = length;
	int n = 0;

	do { /* a zero-length range is one empty WR, as before */
		struct iser_op *op = iser_op_get(ic, kind);
		struct ibv_sge *sgl;
		uint32_t bytes;
		int r;

		if (!op)
			return n ? -ENOTCONN : -EAGAIN; /* checked before */
		/* a plain buffer's range is one SGE, in the op itself */
		sgl = reg->n_rgn == 1 ? op->sge : iser_op_sgl(ic, op);
		if (!sgl) {
			iser_op_put(ic, op);
			return n ? -ENOTCONN : -ENOMEM;
		}
		iser_op_task(op, t);
		op->dop = d;
		op->wr.num_sge = (int)iser_buf_sges(reg, di, &buf_off, &left, sgl,
						    reg->n_rgn == 1 ? 1 : max,
						    &bytes);
		op->len = bytes;
		op->wr.wr_id = iser_op_wr_id(ic, op);
		op->wr.opcode = kind == ISER_OP_WRITE ? IBV_WR_RDMA_WRITE
						      : IBV_WR_RDMA_READ;
		op->wr.sg_list = sgl;
		op->wr.wr.rdma.remote_addr = raddr;
		op->wr.wr.rdma.rkey = rkey;
		raddr += bytes;
		r = iser_post(ic, &op->wr);
		if (r < 0) {
			iser_op_put(ic, op);
			/* WRs already queued under the plug are on the
			 * connection's books: only a failed QP refuses */
			return n ? -ENOTCONN : r;
		}
		n++;
	} while (left);
	return n;
}

/* The WRs a range needs at max SGEs per WR (the op slot check). */
static uint32_t range_wrs(const struct iser_bufreg *reg, size_t off,
			  uint32_t len, uint32_t max)
{
	return (iser_buf_pieces(reg, off, len) + max - 1) / max;
}

int iser_put_data(struct idm_task *t, const uint8_t *tmpl, struct idm_buf *buf,
		  size_t buf_off, uint32_t offset, uint32_t length,
		  uint32_t flags)
{
	struct iser_conn *ic = iser_conn(idm_task_conn(t));
	struct iser_task *it = iser_task(t);
	bool ack = flags & IDM_PUT_ACK;
	bool status = tmpl[1] & IDM_ISCSI_DATAIN_STATUS;
	const struct iser_bufreg *reg;
	struct iser_op *aop = NULL;
	struct iser_dop *d;
	int di, r;

	if (!ic || ic->state != ISER_UP)
		return -ENOTCONN;
	if (!it->rsv)
		return -EINVAL; /* the initiator advertised no read buffer */
	if (!it->wsv && (uint64_t)offset + length > it->edtl)
		return -ERANGE;
	reg = iser_buf_reg(ic->ip, ic->dev, buf, &di);
	if (!reg)
		return -ENOMEM;
	/* the Write(s), a DataACK Read and the SCSI Response's Send */
	if (ISER_OPS - ic->ops_used < 2 + range_wrs(reg, buf_off, length,
						     ic->wr_sge))
		return -EAGAIN; /* thousands of WRs already waiting */
	d = iser_dop_new(t);
	if (!d)
		return -EBUSY;
	d->sn = it->datasn++;
	/* the Writes, their DataACK Read and the SCSI Response: one
	 * chain, only the last WR signalled (iser_sq.c) */
	iser_plug(ic);
	r = post_range(ic, t, d, ISER_OP_WRITE, reg, di, buf_off, length,
		       it->r_va + offset, it->r_stag, ic->wr_sge);
	if (r < 0) {
		iser_unplug(ic);
		if (r == -ENOTCONN && ic->state == ISER_UP) {
			iser_conn_fail(ic, r, "cannot queue the Put_Data Writes");
			return 0;
		}
		it->datasn--; /* the core drops the record */
		return r;
	}
	if (ack && ic->ord > 0) {
		/* DataACK: a zero-length Read completes only after the
		 * Writes before it are placed (RFC 7145 4.1, 7.3.5) */
		aop = iser_op_get(ic, ISER_OP_ACK_READ);
		iser_op_task(aop, t);
		memset(&aop->wr, 0, sizeof(aop->wr));
		aop->wr.wr_id = iser_op_wr_id(ic, aop);
		aop->wr.opcode = IBV_WR_RDMA_READ;
		aop->wr.wr.rdma.remote_addr = it->r_va;
		aop->wr.wr.rdma.rkey = it->r_stag;
		r = iser_post(ic, &aop->wr);
		if (r < 0) {
			iser_op_put(ic, aop);
			iser_unplug(ic);
			iser_conn_fail(ic, r, "cannot post the DataACK read");
			return 0;
		}
	} else if (ack) {
		d->ack = true;
	}
	if (status) {
		r = send_status(ic, t, tmpl);
		if (r < 0) {
			iser_unplug(ic);
			iser_conn_fail(ic, r, "cannot send the SCSI Response: %s",
				       strerror(-r));
			return 0;
		}
	}
	iser_unplug(ic);
	return 0;
}

int iser_get_data(struct idm_task *t, const uint8_t *tmpl, struct idm_buf *buf,
		  size_t buf_off, uint32_t offset, uint32_t length,
		  uint32_t flags)
{
	struct iser_conn *ic = iser_conn(idm_task_conn(t));
	struct iser_task *it = iser_task(t);
	uint32_t end = offset + length;
	const struct iser_bufreg *reg;
	uint32_t u_end, s;
	struct iser_dop *d;
	int di, r;

	(void)tmpl;
	(void)flags;
	if (!ic || ic->state != ISER_UP)
		return -ENOTCONN;
	if (end > it->edtl)
		return -ERANGE;
	reg = iser_buf_reg(ic->ip, ic->dev, buf, &di);
	if (!reg)
		return -ENOMEM;
	s = offset > it->unsol.end ? offset : it->unsol.end;
	if (s < end) {
		if (!it->wsv)
			return -EINVAL; /* no Write STag: nothing to read */
		if (ic->ord == 0) {
			/* 7.3.6: Get_Data with iSER-ORD 0 ends the connection */
			iser_conn_fail(ic, -EPROTO, "Get_Data with RDMA Read depth 0");
			return -ENOTCONN;
		}
		if (ISER_OPS - ic->ops_used <
		    range_wrs(reg, buf_off + (s - offset), end - s, ic->rd_sge))
			return -EAGAIN; /* thousands of WRs already waiting */
	}
	d = iser_dop_new(t);
	if (!d)
		return -EBUSY;
	d->sn = it->r2tsn;

	/* unsolicited part: copy what arrived; the rest is placed by the
	 * Data-Out handler as it comes */
	u_end = end < it->unsol.end ? end : it->unsol.end;
	if (offset < u_end) {
		uint32_t n = idm_prov_unsol_take_buf(&it->unsol, offset, u_end - offset,
						     buf, buf_off);

		d->remaining -= n;
		idm_prov_stats_copy(ic->st, n);
	}

	if (s < end) {
		/* at most ORD Reads outstanding (8.2): the send queue
		 * holds the rest back in order */
		iser_plug(ic);
		r = post_range(ic, t, d, ISER_OP_READ, reg, di,
			       buf_off + (s - offset), end - s,
			       it->w_va + (s - it->unsol.end), it->w_stag,
			       ic->rd_sge);
		iser_unplug(ic);
		if (r == -ENOTCONN && ic->state == ISER_UP) {
			iser_conn_fail(ic, r, "cannot queue the Get_Data Reads");
			return 0;
		}
		if (r < 0)
			return r; /* the core drops the record */
		d->sn = it->r2tsn++;
		ic->stat_reads += (uint32_t)r;
		ic->stat_read_bytes += end - s;
	}
	if (d->remaining == 0)
		iser_dop_defer(ic, d);
	return 0;
}

static void tgt_task_release(struct iser_conn *ic, struct idm_task *t)
{
	struct iser_task *it = iser_task(t);

	/* RDMA not yet posted never goes out: the caller may reuse the
	 * buffers as soon as the task is gone. */
	iser_sq_purge_task(ic, t);
	iser_dops_cancel(ic, t);
	iser_ops_orphan(ic, t);
	idm_prov_unsol_free(&it->unsol);
	it->rsv = it->wsv = false;
}

static void tgt_op_done(struct iser_conn *ic, enum iser_op_kind kind,
			struct idm_task *t, struct iser_dop *dop, uint32_t len)
{
	if (!t)
		return;
	switch (kind) {
	case ISER_OP_WRITE:
	case ISER_OP_READ:
		if (dop)
			iser_dop_progress(ic, dop, len, 0);
		break;
	case ISER_OP_ACK_READ:
		idm_prov_data_ack(t, iser_task(t)->datasn);
		break;
	default:
		break;
	}
}

const struct iser_role iser_tgt_role = {
	.op_done = tgt_op_done,
	.recv = tgt_recv,
	.task_release = tgt_task_release,
};
