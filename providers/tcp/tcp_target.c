/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Target side transfers: a received SCSI Command becomes a task; its
 * immediate and unsolicited data go into the Get_Data buffer covering
 * them (or a staging copy until Get_Data is called); Get_Data sends R2Ts
 * within MaxOutstandingR2T and MaxBurstLength and places each checked
 * Data-Out in the caller's buffer; Put_Data queues Data-In and handles the
 * DataACK SNACK of ERL >= 1.
 */
#include "tcp.h"
#include "tcp_segment.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* [a0,a1) and [b0,b1) overlap in [*lo, *hi)? */
static bool overlap(uint32_t a0, uint32_t a1, uint32_t b0, uint32_t b1,
		    uint32_t *lo, uint32_t *hi)
{
	*lo = a0 > b0 ? a0 : b0;
	*hi = a1 < b1 ? a1 : b1;
	return *lo < *hi;
}

static uint8_t *gdst(struct tcp_get *g, uint32_t off)
{
	return g->base + (off - g->off);
}

/* The active range holding all of [off, end), if any. */
static struct tcp_get *get_cover(struct tcp_task *tt, uint32_t off, uint64_t end)
{
	for (unsigned i = 0; i < TCP_MAX_GETS; i++) {
		struct tcp_get *g = &tt->get[i];
		if (g->active && off >= g->off && end <= (uint64_t)g->off + g->len)
			return g;
	}
	return NULL;
}

/* Copy what the staging buffer (or, during the command's notify, the
 * immediate data) holds of g's range into g's buffer. */
static void get_take_early(struct tcp_task *tt, struct tcp_get *g)
{
	uint32_t lo, hi, end = g->off + g->len;

	if (tt->imm_ptr && overlap(g->off, end, 0, tt->imm_len, &lo, &hi)) {
		memcpy(gdst(g, lo), tt->imm_ptr + lo, hi - lo);
		g->got += hi - lo;
		tt->task->received += hi - lo;
		tt->imm_cov += hi - lo;
	}
	if (tt->staging && overlap(g->off, end, tt->st_lo, tt->unsol_rcvd, &lo, &hi)) {
		memcpy(gdst(g, lo), tt->staging + lo, hi - lo);
		g->got += hi - lo;
		tt->task->received += hi - lo;
	}
}

/* ---- Get_Data completion ------------------------------------------- */

static void get_finish(struct tcp_get *g)
{
	g->active = false;
	idmp_data_completion(g->task, IDM_DATA_OUT, g->off, g->len, g->sn, 0);
}

static void get_done_defer(struct idmp_defer *d)
{
	struct tcp_get *g = tcp_container_of(d, struct tcp_get, done_defer);

	if (g->active && g->got == g->len)
		get_finish(g);
}

/* Complete every range that has all its bytes; false if the task or the
 * connection went away under a callback. */
static bool get_complete_ready(struct tcp_conn *tc, struct idm_task *t)
{
	struct tcp_task *tt = tcp_task(t);

	for (unsigned i = 0; i < TCP_MAX_GETS; i++) {
		struct tcp_get *g = &tt->get[i];

		if (!g->active || g->got != g->len)
			continue;
		idmp_defer_cancel(tc->ctx, &g->done_defer);
		get_finish(g);
		if (tc->closed || !t->active || tt->task != t)
			return false;
	}
	return true;
}

/* The range that asks next: the oldest call with bytes left to request. */
static struct tcp_get *get_next_to_ask(struct tcp_task *tt)
{
	struct tcp_get *best = NULL;

	for (unsigned i = 0; i < TCP_MAX_GETS; i++) {
		struct tcp_get *g = &tt->get[i];
		if (g->active && g->next < g->off + g->len &&
		    (!best || g->seq < best->seq))
			best = g;
	}
	return best;
}

/* Send R2Ts until the window is full or every range is asked for. */
static int issue_r2ts(struct tcp_conn *tc, struct idm_task *t)
{
	struct tcp_task *tt = tcp_task(t);
	const struct idm_conn_params *p = &tc->conn->params;
	uint32_t win = tcp_r2t_window(p->max_outstanding_r2t, TCP_MAX_R2T);
	struct tcp_get *g;

	while (tt->nr2t < win && (g = get_next_to_ask(tt))) {
		struct tcp_txd *d = tcp_txd_get(tc);
		struct tcp_r2t *r = &tt->r2t[tt->nr2t];

		if (!d)
			return -ENOMEM;
		r->len = tcp_r2t_len(g->next, g->off + g->len, p->max_burst_length);
		r->off = g->next;
		r->got = 0;
		r->exp_datasn = 0;
		r->ttt = tcp_new_ttt(tc);
		r->get = (unsigned)(g - tt->get);
		g->sn = tt->r2tsn++;
		g->next += r->len;
		tt->nr2t++;
		d->kind = TXD_R2T;
		d->task = t;
		memcpy(d->tmpl, g->tmpl, ISCSI_BHS_LEN);
		d->ttt = r->ttt;
		d->datasn = g->sn;
		d->start = r->off;
		d->end = r->off + r->len;
		tcp_tx_queue(tc, d);
	}
	return 0;
}

int tcp_get_data(struct idm_task *t, const uint8_t *tmpl, struct idm_buf *buf,
		 size_t buf_off, uint32_t offset, uint32_t length, uint32_t flags)
{
	struct tcp_task *tt = tcp_task(t);
	struct tcp_conn *tc = tcp_conn(t->conn);
	struct tcp_get *g = NULL;
	uint32_t lo, hi, end;
	int r;

	(void)flags;
	if (tc->closed)
		return -ENOTCONN;
	if (tt->task != t || !tt->write)
		return -EINVAL; /* not a write command */
	if (!length || (uint64_t)offset + length > tt->edtl)
		return -ERANGE;
	if (buf_off > buf->len || length > buf->len - buf_off)
		return -ERANGE;
	end = offset + length;
	for (unsigned i = 0; i < TCP_MAX_GETS; i++) {
		struct tcp_get *o = &tt->get[i];
		if (!o->active) {
			if (!g)
				g = o;
		} else if (overlap(offset, end, o->off, o->off + o->len, &lo, &hi)) {
			return -EINVAL; /* would place the same bytes twice */
		}
	}
	if (!g)
		return -EBUSY;
	g->task = t;
	g->seq = tt->get_seq++;
	g->base = (uint8_t *)buf->addr + buf_off;
	g->off = offset;
	g->len = length;
	g->got = 0;
	g->sn = 0xffffffffu;
	memcpy(g->tmpl, tmpl, ISCSI_BHS_LEN);
	get_take_early(tt, g);
	g->next = min32(tcp_r2t_start(offset, tt->unsol_end_t), end);
	g->active = true;
	r = issue_r2ts(tc, t);
	if (r < 0) {
		/* R2Ts of this range may be queued: the task cannot go on */
		tcp_conn_fail(tc, r, "no memory for R2Ts");
		return r;
	}
	if (g->got == g->len)
		idmp_defer(tc->ctx, &g->done_defer, get_done_defer);
	return 0;
}

/* ---- SCSI Command ---------------------------------------------------- */

int tcp_tgt_cmd_header(struct tcp_conn *tc)
{
	const uint8_t *bhs = tc->rhdr;
	uint32_t itt = iscsi_bhs_itt(bhs);
	struct idm_task *t;
	struct tcp_task *tt;
	const char *why;
	int r;

	if (itt == ISCSI_RESERVED_TAG) {
		tcp_conn_fail(tc, -EPROTO, "SCSI Command with the reserved ITT");
		return -1;
	}
	r = idmp_task_new(tc->conn, itt, &t);
	if (r == -EEXIST) {
		tcp_conn_fail(tc, -EPROTO, "SCSI Command with ITT 0x%08x already in use", itt);
		return -1;
	}
	if (r < 0) {
		tcp_conn_fail(tc, r, "cannot create the task of ITT 0x%08x", itt);
		return -1;
	}
	tt = tcp_task(t);
	memset(tt, 0, sizeof(*tt));
	tt->task = t;
	tt->write = (bhs[1] & ISCSI_CMD_WRITE) != 0;
	tt->edtl = iscsi_get32(bhs + ISCSI_CMD_EDTL);
	tt->imm_len = tc->rl.dsl;
	tc->rtask = t;
	if (tt->imm_len && !tt->write) {
		tcp_conn_fail(tc, -EPROTO, "ITT 0x%08x: data with a command that is not a write", itt);
		return -1;
	}
	if (tt->write) {
		const struct idm_conn_params *p = &tc->conn->params;
		if (tcp_unsol_expect(p->immediate_data, p->initial_r2t,
				     p->first_burst_length, tt->edtl, tt->imm_len,
				     bhs[1] & ISCSI_FLAG_FINAL, &tt->unsol_end_t,
				     &why) < 0) {
			tcp_conn_fail(tc, -EPROTO, "ITT 0x%08x: %s", itt, why);
			return -1;
		}
	}
	return 0; /* immediate data, if any, goes to the rx buffer */
}

static int stage_alloc(struct tcp_conn *tc, struct tcp_task *tt)
{
	if (tt->staging)
		return 0;
	/* the slow path: Get_Data not called from the command's notify */
	tt->staging = malloc(tt->unsol_end_t ? tt->unsol_end_t : 1);
	if (!tt->staging) {
		tcp_conn_fail(tc, -ENOMEM, "no memory to stage unsolicited data");
		return -1;
	}
	tt->st_lo = tt->unsol_rcvd;
	return 0;
}

int tcp_tgt_cmd_done(struct tcp_conn *tc)
{
	struct idm_task *t = tc->rtask;
	struct tcp_task *tt = tcp_task(t);

	tt->imm_ptr = tt->imm_len ? tc->rxbuf : NULL;
	tt->imm_cov = 0;
	tt->unsol_rcvd = tt->imm_len;
	tcp_rx_deliver(tc, t);
	if (tc->closed || !t->active || tt->task != t)
		return 0;
	if (tt->imm_len && tt->imm_cov < tt->imm_len) {
		/* Get_Data did not take all of it (yet): keep a copy */
		tt->unsol_rcvd = 0;
		if (stage_alloc(tc, tt) < 0)
			return -1;
		memcpy(tt->staging, tt->imm_ptr, tt->imm_len);
		tt->unsol_rcvd = tt->imm_len;
	}
	tt->imm_ptr = NULL;
	return 0;
}

/* ---- Data-Out -------------------------------------------------------- */

int tcp_tgt_dataout_header(struct tcp_conn *tc)
{
	const uint8_t *bhs = tc->rhdr;
	uint32_t itt = iscsi_bhs_itt(bhs), ttt = iscsi_get32(bhs + ISCSI_BHS_TTT);
	uint32_t off = iscsi_get32(bhs + ISCSI_BHS_BUF_OFFSET);
	uint32_t sn = iscsi_get32(bhs + ISCSI_BHS_DATASN), len = tc->rl.dsl;
	uint64_t end = (uint64_t)off + len;
	struct idm_task *t = idmp_task_find(tc->conn, itt);
	struct tcp_task *tt;

	if ((!t || tcp_task(t)->task != t) && tcp_dead_itt(tc, itt)) {
		tc->rdst = DST_DISCARD; /* late data of a task the caller ended */
		return 0;
	}
	if (!t || tcp_task(t)->task != t) {
		tcp_conn_fail(tc, -EPROTO, "Data-Out for unknown ITT 0x%08x", itt);
		return -1;
	}
	tt = tcp_task(t);
	if (!tt->write) {
		tcp_conn_fail(tc, -EPROTO, "Data-Out for ITT 0x%08x, not a write", itt);
		return -1;
	}
	if (!len) {
		tcp_conn_fail(tc, -EPROTO, "Data-Out without data (ITT 0x%08x)", itt);
		return -1;
	}
	tc->rtask = t;
	if (ttt == ISCSI_RESERVED_TAG) {
		if (off != tt->unsol_rcvd || end > tt->unsol_end_t) {
			tcp_conn_fail(tc, -EPROTO,
				      "unsolicited Data-Out [%u, +%u) for ITT 0x%08x: expected offset %u below %u",
				      off, len, itt, tt->unsol_rcvd, tt->unsol_end_t);
			return -1;
		}
		if (sn != tt->unsol_datasn) {
			tcp_conn_fail(tc, -EPROTO,
				      "unsolicited Data-Out DataSN %u, expected %u (ITT 0x%08x)",
				      sn, tt->unsol_datasn, itt);
			return -1;
		}
		if (!tt->staging && (tc->rget = get_cover(tt, off, end))) {
			tc->rdst = DST_PLACE;
			tc->rptr = gdst(tc->rget, off);
		} else {
			if (stage_alloc(tc, tt) < 0)
				return -1;
			tc->rdst = DST_STAGE;
			tc->rptr = tt->staging + off;
		}
		return 0;
	}
	for (unsigned i = 0; i < tt->nr2t; i++) {
		struct tcp_r2t *r = &tt->r2t[i];

		if (r->ttt != ttt)
			continue;
		if (off < r->off || end > (uint64_t)r->off + r->len) {
			tcp_conn_fail(tc, -EPROTO,
				      "Data-Out [%u, +%u) outside its R2T [%u, +%u) (ITT 0x%08x)",
				      off, len, r->off, r->len, itt);
			return -1;
		}
		if (tc->conn->params.data_pdu_in_order &&
		    (off != r->off + r->got || sn != r->exp_datasn)) {
			tcp_conn_fail(tc, -EPROTO,
				      "Data-Out out of order: offset %u DataSN %u, expected %u and %u (ITT 0x%08x)",
				      off, sn, r->off + r->got, r->exp_datasn, itt);
			return -1;
		}
		tc->rr2t = r;
		tc->rget = &tt->get[r->get];
		tc->rdst = DST_PLACE;
		tc->rptr = gdst(tc->rget, off);
		return 0;
	}
	tcp_conn_fail(tc, -EPROTO, "Data-Out with unknown TTT 0x%08x (ITT 0x%08x)", ttt, itt);
	return -1;
}

int tcp_tgt_dataout_done(struct tcp_conn *tc)
{
	struct idm_task *t = tc->rtask;
	struct tcp_task *tt = tcp_task(t);
	uint32_t off = iscsi_get32(tc->rhdr + ISCSI_BHS_BUF_OFFSET);
	uint32_t len = tc->rl.dsl, lo, hi;
	bool fbit = tc->rhdr[1] & ISCSI_FLAG_FINAL;
	struct tcp_r2t *r = tc->rr2t;

	if (!r) {
		tt->unsol_rcvd += len;
		tt->unsol_datasn++;
		if (tc->rdst == DST_PLACE) {
			tc->rget->got += len;
			t->received += len;
		} else {
			for (unsigned i = 0; i < TCP_MAX_GETS; i++) {
				struct tcp_get *g = &tt->get[i];
				if (g->active &&
				    overlap(off, off + len, g->off, g->off + g->len, &lo, &hi)) {
					memcpy(gdst(g, lo), tt->staging + lo, hi - lo);
					g->got += hi - lo;
					t->received += hi - lo;
				}
			}
		}
		if (fbit && tt->unsol_rcvd != tt->unsol_end_t) {
			tcp_conn_fail(tc, -EPROTO,
				      "unsolicited data of ITT 0x%08x ended at %u, expected %u",
				      t->itt, tt->unsol_rcvd, tt->unsol_end_t);
			return -1;
		}
	} else {
		r->got += len;
		r->exp_datasn++;
		tc->rget->got += len;
		t->received += len;
		if (r->got == r->len) {
			*r = tt->r2t[--tt->nr2t];
			if (issue_r2ts(tc, t) < 0) {
				tcp_conn_fail(tc, -ENOMEM, "no memory for an R2T");
				return -1;
			}
		} else if (fbit && tc->conn->params.data_pdu_in_order) {
			tcp_conn_fail(tc, -EPROTO,
				      "Data-Out with F bit before the end of its R2T (ITT 0x%08x)",
				      t->itt);
			return -1;
		}
	}
	get_complete_ready(tc, t);
	return 0;
}

/* ---- Put_Data and DataACK ------------------------------------------- */

int tcp_put_data(struct idm_task *t, const uint8_t *tmpl, struct idm_buf *buf,
		 size_t buf_off, uint32_t offset, uint32_t length, uint32_t flags)
{
	struct tcp_task *tt = tcp_task(t);
	struct tcp_conn *tc = tcp_conn(t->conn);
	const struct idm_conn_params *p = &tc->conn->params;
	uint32_t dsl = idmp_send_dsl(tc->conn);
	struct tcp_txd *d;

	if (tc->closed)
		return -ENOTCONN;
	if (tt->task != t)
		return -EINVAL;
	if (!length || buf_off > buf->len || length > buf->len - buf_off ||
	    (uint64_t)offset + length > 0xffffffffu)
		return -ERANGE;
	if (!dsl)
		dsl = TCP_LOGIN_DSL;
	d = tcp_txd_get(tc);
	if (!d)
		return -ENOMEM;
	d->kind = TXD_DATAIN;
	d->task = t;
	memcpy(d->tmpl, tmpl, ISCSI_BHS_LEN);
	d->base = (const uint8_t *)buf->addr + buf_off;
	d->start = d->pos = 0;
	d->end = length;
	d->wire_off = offset;
	d->mbl = p->max_burst_length;
	d->datasn = tt->datain_sn;
	/* reserve the DataSNs now so a Put_Data queued behind continues */
	tt->datain_sn += tcp_seg_count(0, length, d->mbl, dsl);
	d->status = (tmpl[1] & ISCSI_DATAIN_STATUS) != 0;
	if ((flags & IDM_PUT_ACK) && p->error_recovery_level >= 1) {
		d->ack = true;
		d->ttt = tcp_new_ttt(tc);
		tt->ack_ttt = d->ttt;
		tt->ack_wait = true;
	}
	tcp_tx_queue(tc, d);
	return 0;
}

void tcp_datain_done(struct tcp_conn *tc, const struct tcp_txd *d,
		     struct idm_task *t)
{
	uint32_t off = d->wire_off, len = d->end, sn = d->datasn - 1;

	(void)tc;
	idmp_data_completion(t, IDM_DATA_IN, off, len, sn, 0);
}

int tcp_tgt_snack(struct tcp_conn *tc)
{
	const uint8_t *bhs = tc->rhdr;
	uint32_t ttt = iscsi_get32(bhs + ISCSI_BHS_TTT);
	struct idm_task *t, *tmp;

	if ((bhs[1] & 0x0f) != ISCSI_SNACK_DATA_ACK) {
		tcp_rx_deliver(tc, NULL); /* status/data SNACK: the caller's */
		return 0;
	}
	HASH_ITER(hh, tc->conn->tasks, t, tmp)
	{
		struct tcp_task *tt = tcp_task(t);

		if (tt->task == t && tt->ack_wait && tt->ack_ttt == ttt) {
			tt->ack_wait = false;
			idmp_data_ack(t, iscsi_get32(bhs + ISCSI_BHS_BUF_OFFSET));
			return 0;
		}
	}
	/* RFC 7143 11.16: an invalid DataACK may be ignored or rejected */
	idmp_warn(tc->ctx, "tcp: DataACK SNACK with unknown TTT 0x%08x ignored", ttt);
	return 0;
}

void tcp_tgt_task_release(struct tcp_conn *tc, struct idm_task *t)
{
	struct tcp_task *tt = tcp_task(t);

	if (tt->task != t)
		return;
	if (!tc->closed)
		tcp_dead_itt_add(tc, t->itt);
	tcp_rx_forget_task(tc, t);
	tcp_tx_cancel_task(tc, t);
	for (unsigned i = 0; i < TCP_MAX_GETS; i++) {
		idmp_defer_cancel(tc->ctx, &tt->get[i].done_defer);
		tt->get[i].active = false;
	}
	free(tt->staging);
	tt->staging = NULL;
	tt->imm_ptr = NULL;
	tt->ack_wait = false;
	tt->nr2t = 0;
	tt->task = NULL;
}
