/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Target Get_Data: up to TCP_MAX_GETS ranges of a write command at once.
 * Each takes the immediate/unsolicited data that already arrived, then
 * R2Ts ask for the rest, in the order of the Get_Data calls, at most
 * MaxOutstandingR2T (capped at TCP_MAX_R2T) outstanding per task and each
 * at most MaxBurstLength. A range completes (Data_Completion_Notify) when
 * every byte of it was placed; Data-Out placement is in tcp_target.c.
 */
#include "tcp.h"
#include "tcp_segment.h"

#include <errno.h>
#include <string.h>

static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* The active range holding all of [off, end), if any. */
struct tcp_get *tcp_get_cover(struct tcp_task *tt, uint32_t off, uint64_t end)
{
	for (unsigned i = 0; i < TCP_MAX_GETS; i++) {
		struct tcp_get *g = &tt->get[i];
		if (g->active && off >= g->off &&
		    end <= (uint64_t)g->off + g->len)
			return g;
	}
	return NULL;
}

/* Copy what the staging buffer (or, during the command's notify, the
 * immediate data) holds of g's range into g's buffer. */
static void get_take_early(struct tcp_task *tt, struct tcp_get *g)
{
	uint32_t n = idm_prov_unsol_take(&tt->unsol, g->off, g->len, g->base);

	g->got += n;
	idm_prov_task_add_received(tt->task, n);
}

/* ---- Get_Data completion ------------------------------------------- */

static void get_finish(struct tcp_get *g)
{
	g->active = false;
	idm_prov_data_completion(g->task, IDM_DATA_OUT, g->off, g->len, g->sn, 0);
}

static void get_done_defer(struct idm_prov_defer *d)
{
	struct tcp_get *g = tcp_container_of(d, struct tcp_get, done_defer);

	if (g->active && g->got == g->len)
		get_finish(g);
}

/* Complete every range that has all its bytes; false if the task or the
 * connection went away under a callback. */
bool tcp_get_complete_ready(struct tcp_conn *tc, struct idm_task *t)
{
	struct tcp_task *tt = tcp_task(t);

	for (unsigned i = 0; i < TCP_MAX_GETS; i++) {
		struct tcp_get *g = &tt->get[i];

		if (!g->active || g->got != g->len)
			continue;
		idm_prov_defer_cancel(tc->ctx, &g->done_defer);
		get_finish(g);
		if (tc->closed || !idm_prov_task_active(t) || tt->task != t)
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
int tcp_issue_r2ts(struct tcp_conn *tc, struct idm_task *t)
{
	struct tcp_task *tt = tcp_task(t);
	const struct idm_conn_params *p = tc->params;
	uint32_t win = tcp_r2t_window(p->max_outstanding_r2t, TCP_MAX_R2T);
	struct tcp_get *g;

	while (tt->nr2t < win && (g = get_next_to_ask(tt))) {
		struct tcp_txd *d = tcp_txd_get(tc);
		struct tcp_r2t *r = &tt->r2t[tt->nr2t];

		if (!d)
			return -ENOMEM;
		r->len = tcp_r2t_len(g->next, g->off + g->len,
				     p->max_burst_length);
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
	if (buf_off > blen || length > blen - buf_off)
		return -ERANGE;
	end = offset + length;
	for (unsigned i = 0; i < TCP_MAX_GETS; i++) {
		struct tcp_get *o = &tt->get[i];
		if (!o->active) {
			if (!g)
				g = o;
		} else if (tcp_overlap(offset, end, o->off, o->off + o->len,
				       &lo, &hi)) {
			return -EINVAL; /* would place the same bytes twice */
		}
	}
	if (!g)
		return -EBUSY;
	g->task = t;
	g->seq = tt->get_seq++;
	g->base = (uint8_t *)idm_buf_addr(buf) + buf_off;
	g->off = offset;
	g->len = length;
	g->got = 0;
	g->sn = 0xffffffffu;
	memcpy(g->tmpl, tmpl, IDM_ISCSI_BHS_LEN);
	get_take_early(tt, g);
	g->next = min32(tcp_r2t_start(offset, tt->unsol.end), end);
	g->active = true;
	r = tcp_issue_r2ts(tc, t);
	if (r < 0) {
		/* R2Ts of this range may be queued: the task cannot go on */
		tcp_conn_fail(tc, r, "no memory for R2Ts");
		return r;
	}
	if (g->got == g->len)
		idm_prov_defer(tc->ctx, &g->done_defer, get_done_defer);
	return 0;
}
