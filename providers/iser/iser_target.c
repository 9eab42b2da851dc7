/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Target data path (RFC 7145 7.3.5, 7.3.6): Put_Data is an RDMA Write into
 * the initiator's Read STag at Read VA + buffer offset; Get_Data an RDMA
 * Read from its Write STag, at most ORD of them outstanding. Immediate data
 * and unsolicited Data-Out arrive in Sends and are copied from the receive
 * buffer (the one unavoidable copy); everything else is zero copy between
 * the caller's registered buffer and the wire.
 *
 * Write VA convention (Linux iser, LIO, tgt): the initiator advertises the
 * VA of the first *solicited* byte, so solicited data at command offset o
 * is read from Write VA + (o - unsolicited length).
 */
#include "iser.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libidm/iscsi.h>

int iser_tgt_cmd(struct iser_conn *ic, const struct iser_hdr *h,
		 const uint8_t *bhs, const uint8_t *data, uint32_t dlen,
		 struct idm_task **out)
{
	struct idm_conn *c = ic->conn;
	uint32_t edtl = iscsi_get32(bhs + ISCSI_CMD_EDTL);
	bool write = bhs[1] & ISCSI_CMD_WRITE;
	uint32_t fb = c->params.first_burst_length < edtl
			      ? c->params.first_burst_length : edtl;
	struct iser_task *it;
	struct idm_task *t;
	int r;

	/* Check what the peer claims before creating anything. */
	if (dlen && (!write || !c->params.immediate_data || dlen > fb ||
		     dlen > idm_prov_recv_dsl(c)))
		return -EPROTO;
	r = idm_prov_task_new(c, iscsi_bhs_itt(bhs), &t);
	if (r < 0)
		return r == -EEXIST ? -EPROTO : r;
	it = iser_task(t);
	memset(it, 0, sizeof(*it));
	it->rsv = h->rsv;
	it->wsv = h->wsv;
	it->r_stag = h->read_stag;
	it->r_va = h->read_va;
	it->w_stag = h->write_stag;
	it->w_va = h->write_va;
	it->edtl = edtl;
	it->imm_len = dlen;
	it->unsol_len = write ? (c->params.initial_r2t ? dlen : fb) : 0;
	it->placed = dlen; /* immediate data is here */
	it->imm_now = data;
	if (write) {
		ic->stat_writes++;
		ic->stat_unsol_sends += dlen != 0;
		if (edtl > ic->stat_max_edtl)
			ic->stat_max_edtl = edtl;
	}
	*out = t;
	return 0;
}

static void dop_finish(struct iser_conn *ic, struct iser_dop *d);

static int stage(struct iser_task *it, uint32_t off, const uint8_t *src,
		 uint32_t n)
{
	if (!it->staged) {
		/* only when the caller has not called Get_Data yet: a
		 * well-behaved target never gets here (idm.h, Get_Data) */
		it->staged = malloc(it->unsol_len ? it->unsol_len : 1);
		if (!it->staged)
			return -ENOMEM;
	}
	memcpy(it->staged + off, src, n);
	if (off + n > it->staged_len)
		it->staged_len = off + n;
	return 0;
}

void iser_tgt_cmd_done(struct iser_conn *ic, struct idm_task *t)
{
	struct iser_task *it = iser_task(t);
	const uint8_t *imm = it->imm_now;

	it->imm_now = NULL;
	/* Get_Data did not take the immediate data during control_notify:
	 * keep a copy until it does. */
	if (imm && it->imm_len && !it->imm_taken &&
	    stage(it, 0, imm, it->imm_len) < 0)
		iser_conn_fail(ic, -ENOMEM, "no memory to stage immediate data");
}

/* Copy [from, to) of the command's unsolicited data that is already here
 * into the Get_Data destination. Returns the bytes copied. */
static uint32_t copy_arrived(struct iser_task *it, struct iser_dop *d,
			     uint32_t from, uint32_t to)
{
	uint32_t n = 0, e;

	if (from < it->imm_len) {
		e = to < it->imm_len ? to : it->imm_len;
		if (it->imm_now) {
			memcpy(d->dst + (from - d->offset), it->imm_now + from,
			       e - from);
			if (from == 0 && e == it->imm_len)
				it->imm_taken = true;
		} else if (it->staged && it->staged_len >= e) {
			memcpy(d->dst + (from - d->offset), it->staged + from,
			       e - from);
		} else {
			return 0;
		}
		n += e - from;
		from = e;
	}
	if (from < to && it->staged && it->staged_len > from) {
		e = to < it->staged_len ? to : it->staged_len;
		memcpy(d->dst + (from - d->offset), it->staged + from, e - from);
		n += e - from;
	}
	return n;
}

int iser_tgt_data_out(struct iser_conn *ic, const uint8_t *bhs,
		      const uint8_t *data, uint32_t dlen)
{
	struct idm_task *t = idm_prov_task_find(ic->conn, iscsi_bhs_itt(bhs));
	uint32_t off = iscsi_get32(bhs + ISCSI_BHS_BUF_OFFSET);
	uint32_t covered = 0;
	struct iser_dop *done[ISER_TASK_DOPS];
	struct iser_task *it;
	int i, n_done = 0, r = 0;

	if (iscsi_get32(bhs + ISCSI_BHS_TTT) != ISCSI_RESERVED_TAG)
		return -EPROTO; /* solicited Data-Out never exists on iSER */
	if (!t)
		return 0; /* task already ended (aborted): drop its data */
	it = iser_task(t);
	if (off < it->imm_len || off > it->unsol_len ||
	    dlen > it->unsol_len - off || off != it->placed)
		return -EPROTO; /* outside the unsolicited burst, or out of order */
	it->placed += dlen;
	ic->stat_unsol_sends++;
	/* Place into every Get_Data range waiting for these bytes first,
	 * stage what none of them wanted, and only then tell the caller:
	 * a Get_Data it issues from Data_Completion_Notify (the next range
	 * of a split transfer) must find the rest of this PDU staged. */
	for (i = 0; i < ISER_TASK_DOPS; i++) {
		struct iser_dop *d = &it->dops[i];
		uint32_t a, b;

		if (!d->used || d->dir != IDM_DATA_OUT)
			continue;
		a = off > d->offset ? off : d->offset;
		b = off + dlen < d->offset + d->length ? off + dlen
						      : d->offset + d->length;
		if (a >= b)
			continue;
		memcpy(d->dst + (a - d->offset), data + (a - off), b - a);
		covered += b - a;
		d->remaining = b - a > d->remaining ? 0 : d->remaining - (b - a);
		if (d->remaining == 0)
			done[n_done++] = d;
	}
	if (covered < dlen)
		r = stage(it, off, data, dlen);
	for (i = 0; i < n_done && ic->state == ISER_UP && t->active; i++)
		if (done[i]->used && done[i]->remaining == 0)
			dop_finish(ic, done[i]);
	return r;
}

static void dop_finish(struct iser_conn *ic, struct iser_dop *d)
{
	struct idm_task *t = d->task;
	struct iser_task *it = iser_task(t);
	enum idm_data_dir dir = d->dir;
	uint32_t off = d->offset, len = d->length, sn = d->sn;
	int status = d->status;
	bool ack = d->ack;

	d->used = false;
	idm_prov_defer_cancel(ic->ctx, &d->done);
	idm_prov_data_completion(t, dir, off, len, sn, status);
	/* no RDMA Read allowed (ORD 0): acknowledge on local completion,
	 * which ERL 1 permits (7.3.5) */
	if (ack && status == 0 && t->active)
		idm_prov_data_ack(t, it->datasn);
}

void iser_dop_progress(struct iser_conn *ic, struct iser_dop *d, uint32_t n,
		       int status)
{
	if (!d->used)
		return;
	if (status < 0 && d->status == 0)
		d->status = status;
	d->remaining = n > d->remaining ? 0 : d->remaining - n;
	if (d->remaining == 0)
		dop_finish(ic, d);
}

static void dop_deferred(struct idm_prov_defer *df)
{
	struct iser_dop *d = (struct iser_dop *)((char *)df -
					offsetof(struct iser_dop, done));
	struct idm_task *t = d->task;
	struct iser_conn *ic = iser_conn(t->conn);

	if (d->used && ic && ic->state == ISER_UP)
		dop_finish(ic, d);
}

static struct iser_dop *dop_new(struct idm_task *t, enum idm_data_dir dir,
				uint32_t offset, uint32_t length, uint8_t *dst)
{
	struct iser_task *it = iser_task(t);
	int i;

	for (i = 0; i < ISER_TASK_DOPS; i++) {
		struct iser_dop *d = &it->dops[i];

		if (d->used)
			continue;
		memset(d, 0, sizeof(*d));
		d->used = true;
		d->dir = dir;
		d->offset = offset;
		d->length = length;
		d->remaining = length;
		d->dst = dst;
		d->task = t;
		return d;
	}
	return NULL;
}

static int send_status(struct iser_conn *ic, struct idm_task *t,
		       const uint8_t *datain)
{
	uint8_t rsp[ISCSI_BHS_LEN];

	/* No phase collapse under iSER (RFC 7145 3.3): the status the
	 * caller put in the last Data-In goes out as a SCSI Response. */
	memset(rsp, 0, sizeof(rsp));
	rsp[0] = ISCSI_OP_SCSI_RSP;
	rsp[1] = ISCSI_FLAG_FINAL |
		 (datain[1] & (ISCSI_DATAIN_OVERFLOW | ISCSI_DATAIN_UNDERFLOW));
	rsp[2] = ISCSI_RESPONSE_COMPLETED;
	rsp[3] = datain[3];
	memcpy(rsp + ISCSI_BHS_ITT, datain + ISCSI_BHS_ITT, 4);
	memcpy(rsp + ISCSI_BHS_CMDSN, datain + ISCSI_BHS_CMDSN, 12);
	iscsi_put32(rsp + ISCSI_BHS_DATASN, iser_task(t)->datasn);
	memcpy(rsp + ISCSI_BHS_RESIDUAL, datain + ISCSI_BHS_RESIDUAL, 4);
	return iser_send_control(ic->conn, rsp, NULL, 0, NULL, 0, NULL);
}

int iser_put_data(struct idm_task *t, const uint8_t *tmpl, struct idm_buf *buf,
		  size_t buf_off, uint32_t offset, uint32_t length,
		  uint32_t flags)
{
	struct iser_conn *ic = iser_conn(t->conn);
	struct iser_task *it = iser_task(t);
	bool ack = flags & IDM_PUT_ACK;
	bool status = tmpl[1] & ISCSI_DATAIN_STATUS;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct iser_op *op, *aop = NULL;
	struct iser_dop *d;
	struct ibv_mr *mr;
	int r;

	if (!ic || ic->state != ISER_UP)
		return -ENOTCONN;
	if (!it->rsv)
		return -EINVAL; /* the initiator advertised no read buffer */
	if (!it->wsv && (uint64_t)offset + length > it->edtl)
		return -ERANGE;
	if (ISER_OPS - ic->ops_used < 3)
		return -EAGAIN; /* thousands of WRs already waiting */
	mr = iser_buf_mr(ic->ip, ic->dev, buf);
	if (!mr)
		return -ENOMEM;
	d = dop_new(t, IDM_DATA_IN, offset, length, NULL);
	if (!d)
		return -EBUSY;
	d->sn = it->datasn++;
	op = iser_op_get(ic, ISER_OP_WRITE);
	iser_op_task(op, t);
	op->dop = d;
	op->len = length;
	sge.addr = (uintptr_t)buf->addr + buf_off;
	sge.length = length;
	sge.lkey = mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = iser_op_wr_id(ic, op);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = it->r_va + offset;
	wr.wr.rdma.rkey = it->r_stag;
	/* the Write, its DataACK Read and the SCSI Response: one chain,
	 * only the last WR signalled (iser_sq.c) */
	iser_plug(ic);
	r = iser_post(ic, &wr);
	if (r < 0) {
		iser_unplug(ic);
		iser_op_put(ic, op);
		d->used = false;
		it->datasn--;
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
	struct iser_conn *ic = iser_conn(t->conn);
	struct iser_task *it = iser_task(t);
	uint32_t end = offset + length;
	uint32_t u_end, s;
	struct iser_dop *d;
	struct ibv_mr *mr;
	uint8_t *dst;
	int r;

	(void)tmpl;
	(void)flags;
	if (!ic || ic->state != ISER_UP)
		return -ENOTCONN;
	if (end > it->edtl)
		return -ERANGE;
	s = offset > it->unsol_len ? offset : it->unsol_len;
	if (s < end) {
		if (!it->wsv)
			return -EINVAL; /* no Write STag: nothing to read */
		if (ic->ord == 0) {
			/* 7.3.6: Get_Data with iSER-ORD 0 ends the connection */
			iser_conn_fail(ic, -EPROTO, "Get_Data with RDMA Read depth 0");
			return -ENOTCONN;
		}
		if (ISER_OPS - ic->ops_used < 1)
			return -EAGAIN; /* thousands of WRs already waiting */
	}
	mr = iser_buf_mr(ic->ip, ic->dev, buf);
	if (!mr)
		return -ENOMEM;
	dst = (uint8_t *)buf->addr + buf_off;
	d = dop_new(t, IDM_DATA_OUT, offset, length, dst);
	if (!d)
		return -EBUSY;
	d->sn = it->r2tsn;

	/* unsolicited part: copy what arrived; the rest is placed by the
	 * Data-Out handler as it comes */
	u_end = end < it->unsol_len ? end : it->unsol_len;
	if (offset < u_end)
		d->remaining -= copy_arrived(it, d, offset, u_end);

	if (s < end) {
		struct iser_op *op = iser_op_get(ic, ISER_OP_READ);

		iser_op_task(op, t);
		op->dop = d;
		op->len = end - s;
		op->sge[0].addr = (uintptr_t)(dst + (s - offset));
		op->sge[0].length = end - s;
		op->sge[0].lkey = mr->lkey;
		memset(&op->wr, 0, sizeof(op->wr));
		op->wr.wr_id = iser_op_wr_id(ic, op);
		op->wr.opcode = IBV_WR_RDMA_READ;
		op->wr.num_sge = 1;
		op->wr.sg_list = &op->sge[0];
		op->wr.wr.rdma.remote_addr = it->w_va + (s - it->unsol_len);
		op->wr.wr.rdma.rkey = it->w_stag;
		/* at most ORD Reads outstanding (8.2): the send queue
		 * holds the rest back in order */
		r = iser_post(ic, &op->wr);
		if (r < 0) {
			iser_op_put(ic, op);
			d->used = false;
			return r;
		}
		d->sn = it->r2tsn++;
		ic->stat_reads++;
		ic->stat_read_bytes += end - s;
	}
	if (d->remaining == 0)
		idm_prov_defer(ic->ctx, &d->done, dop_deferred);
	return 0;
}

void iser_tgt_task_release(struct iser_conn *ic, struct idm_task *t)
{
	struct iser_task *it = iser_task(t);
	int i;

	/* RDMA not yet posted never goes out: the caller may reuse the
	 * buffers as soon as the task is gone. */
	iser_sq_purge_task(ic, t);
	for (i = 0; i < ISER_TASK_DOPS; i++) {
		idm_prov_defer_cancel(ic->ctx, &it->dops[i].done);
		it->dops[i].used = false;
	}
	iser_ops_orphan(ic, t);
	free(it->staged);
	it->staged = NULL;
	it->staged_len = 0;
	it->imm_now = NULL;
	it->rsv = it->wsv = false;
}
