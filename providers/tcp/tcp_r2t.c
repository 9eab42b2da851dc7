/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Target Get_Data: up to TCP_MAX_GETS ranges of a write command at once.
 * Each takes the immediate/unsolicited data that already arrived, then
 * R2Ts ask for the rest, in the order of the Get_Data calls, at most
 * MaxOutstandingR2T (capped at TCP_MAX_R2T) outstanding per task and each
 * at most MaxBurstLength. A range completes (Data_Completion_Notify) when
 * every byte of it was placed; Data-Out placement is in tcp_target.c.
 * The ranges themselves are the core's transfer records; this file keeps
 * only the wire state: R2Ts outstanding, R2TSN, bytes received.
 */
#include "tcp.h"
#include "tcp_r2t.h"
#include "tcp_state.h"
#include "tcp_tx.h"
#include "tcp_txd.h"
#include "tcp_segment.h"

#include <errno.h>
#include <string.h>

static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* The task's Get_Data ranges are the core's records (dir IDM_DATA_OUT,
 * oldest first); TCP's R2T and receive progress of each lives in the
 * record's priv area (struct tcp_get). */
static const struct idm_prov_xfer *next_get(struct idm_task *t,
					    const struct idm_prov_xfer *x)
{
	do
		x = idm_prov_task_xfer_next(t, x);
	while (x && x->dir != IDM_DATA_OUT);
	return x;
}

/* Copy what the staging buffer (or, during the command's notify, the
 * immediate data) holds of x's range into x's buffer. */
static void get_take_early(struct tcp_conn *tc, struct tcp_task *tt,
			   const struct idm_prov_xfer *x)
{
	uint32_t n = idm_prov_unsol_take_buf(&tt->unsol, x->offset, x->length, x->buf,
					     x->buf_off);

	tcp_get_of(x)->got += n;
	idm_prov_task_add_received(tt->task, n);
	idm_prov_stats_copy(tc->st, n);
}

/* ---- Get_Data completion ------------------------------------------- */

/* x is about to be recycled by the core: no R2T may name it any more.
 * Normally every R2T of x was answered in full before its bytes were all
 * in; one left over (duplicate Data-Out with DataPDUInOrder=No, or a
 * failed get_data()) must not place into a recycled record. */
static void r2ts_forget(struct tcp_task *tt, const struct idm_prov_xfer *x)
{
	for (unsigned i = 0; i < tt->nr2t;)
		if (tt->r2t[i].x == x)
			tt->r2t[i] = tt->r2t[--tt->nr2t];
		else
			i++;
}

static void get_finish(struct tcp_conn *tc, const struct idm_prov_xfer *x)
{
	struct idm_task *t = x->task;
	struct tcp_get *g = tcp_get_of(x);
	uint32_t off = x->offset, len = x->length, sn = g->sn;

	/* usually run by that very defer, or never armed: skip the call
	 * (and its context lock) then; we hold the lock, so queued is
	 * current */
	if (g->done_defer.queued)
		idm_prov_defer_cancel(tc->ctx, &g->done_defer);
	r2ts_forget(tcp_task(t), x);
	idm_prov_data_completion(t, IDM_DATA_OUT, off, len, sn, 0);
}

static void get_done_defer(struct idm_prov_defer *d)
{
	struct tcp_get *g = IDM_PROV_CONTAINER_OF(d, struct tcp_get, done_defer);
	const struct idm_prov_xfer *x = idm_prov_xfer_from_priv(g);

	if (g->got == x->length)
		get_finish(tcp_conn(idm_task_conn(x->task)), x);
}

/* Complete every range that has all its bytes; false if the task or the
 * connection went away under a callback. */
bool tcp_get_complete_ready(struct tcp_conn *tc, struct idm_task *t)
{
	struct tcp_task *tt = tcp_task(t);
	const struct idm_prov_xfer *x = NULL;

	while ((x = next_get(t, x))) {
		if (tcp_get_of(x)->got != x->length)
			continue;
		get_finish(tc, x);
		if (tc->closed || !idm_prov_task_active(t) || tt->task != t)
			return false;
		x = NULL; /* the completion recycled x: walk again */
	}
	return true;
}

/* The range that asks next: the oldest call with bytes left to request. */
static const struct idm_prov_xfer *get_next_to_ask(struct idm_task *t)
{
	const struct idm_prov_xfer *x = NULL;

	while ((x = next_get(t, x)))
		if (tcp_get_of(x)->next < x->offset + x->length)
			return x;
	return NULL;
}

/* Send R2Ts until the window is full or every range is asked for. */
int tcp_issue_r2ts(struct tcp_conn *tc, struct idm_task *t)
{
	struct tcp_task *tt = tcp_task(t);
	const struct idm_conn_params *p = tc->params;
	uint32_t win = tcp_r2t_window(p->max_outstanding_r2t, TCP_MAX_R2T);
	const struct idm_prov_xfer *x;

	while (tt->nr2t < win && (x = get_next_to_ask(t))) {
		struct tcp_get *g = tcp_get_of(x);
		struct tcp_txd *d = tcp_txd_get(tc);
		struct tcp_r2t *r = &tt->r2t[tt->nr2t];

		if (!d)
			return -ENOMEM;
		r->len = tcp_r2t_len(g->next, x->offset + x->length,
				     p->max_burst_length);
		r->off = g->next;
		r->got = 0;
		r->exp_datasn = 0;
		r->ttt = tcp_new_ttt(tc);
		r->x = x;
		g->sn = tt->r2tsn++;
		g->next += r->len;
		tt->nr2t++;
		d->kind = TXD_R2T;
		d->task = t;
		memcpy(d->tmpl, g->tmpl, IDM_ISCSI_BHS_LEN);
		d->ttt = r->ttt;
		d->datasn = g->sn;
		d->start = r->off;
		d->end = r->off + r->len;
		tcp_tx_queue(tc, d);
	}
	return 0;
}

int tcp_get_data(struct idm_task *t, const uint8_t *tmpl, struct idm_buf *buf,
		 size_t buf_off, uint32_t offset, uint32_t length,
		 uint32_t flags)
{
	struct tcp_task *tt = tcp_task(t);
	struct tcp_conn *tc = tcp_conn(idm_task_conn(t));
	size_t blen = idm_buf_len(buf);
	/* the core recorded this call last: the others came before it */
	struct idm_prov_xfer *nx = idm_prov_task_xfer_newest(t);
	const struct idm_prov_xfer *o = NULL;
	struct tcp_get *g;
	unsigned active = 0;
	uint32_t lo, hi, end;
	int r;

	(void)flags;
	if (tc->closed)
		return -ENOTCONN;
	if (tt->task != t || !tt->write)
		return -EINVAL; /* not a write command */
	if (!length || (uint64_t)offset + length > tt->edtl)
		return -ERANGE;
	if (buf_off > blen || length > blen - buf_off)
		return -ERANGE;
	if (!nx || nx->dir != IDM_DATA_OUT || nx->offset != offset ||
	    nx->length != length)
		return -EINVAL; /* not called by the core's idm_get_data() */
	end = offset + length;
	while ((o = next_get(t, o)) && o != nx) {
		if (tcp_overlap(offset, end, o->offset, o->offset + o->length,
				&lo, &hi))
			return -EINVAL; /* would place the same bytes twice */
		active++;
	}
	if (active >= TCP_MAX_GETS)
		return -EBUSY;
	g = tcp_get_of(nx);
	g->sn = 0xffffffffu;
	memcpy(g->tmpl, tmpl, IDM_ISCSI_BHS_LEN);
	get_take_early(tc, tt, nx);
	g->next = min32(tcp_r2t_start(offset, tt->unsol.end), end);
	r = tcp_issue_r2ts(tc, t);
	if (r < 0) {
		/* R2Ts of this range may be queued: the task cannot go on */
		r2ts_forget(tt, nx);
		tcp_conn_fail(tc, r, "no memory for R2Ts");
		return r;
	}
	if (g->got == length)
		idm_prov_defer(tc->ctx, &g->done_defer, get_done_defer);
	return 0;
}

/* The task ends: its records go with it, so no deferred completion may
 * still point into one. */
void tcp_get_cancel_all(struct tcp_conn *tc, struct idm_task *t)
{
	const struct idm_prov_xfer *x = NULL;

	while ((x = next_get(t, x)))
		idm_prov_defer_cancel(tc->ctx, &tcp_get_of(x)->done_defer);
	tcp_task(t)->nr2t = 0;
}
