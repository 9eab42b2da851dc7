/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Completions. Separate send and receive CQs (a receive handler must never
 * wait on the poller of its own sends), each with a completion channel
 * whose fd sits in the context's epoll set. Each CQ is drained in batches
 * (poll, re-arm, poll again so no completion is missed between the last
 * poll and the arm). Send completions are selective (iser_sq.c): one
 * completion retires every WR posted before it, and a task still completes
 * only after its own Send did (the "don't suppress send completions"
 * lesson of Linux iser holds: the Send that ends a chain is signalled).
 * What a completion means to a task is the role's business
 * (ic->role->op_done); received messages go to iser_recv.c.
 */
#include "iser_cq.h"
#include "iser_fail.h"
#include "iser_recv.h"
#include "iser_send.h"
#include "iser_sq.h"
#include "iser_srq.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>

#define CQ_ACK_BATCH 64u

/* A failed memory window bind says what it bound and how many windows
 * were out: the one seen in CI (CI-38) could not be explained from its
 * status alone. */
static void bind_failed(struct iser_conn *ic, const struct ibv_send_wr *wr,
			const struct ibv_wc *wc)
{
	const struct ibv_mw_bind_info *b = &wr->bind_mw.bind_info;

	iser_conn_fail(ic, -EIO, "memory window bind failed: %s (wc status %d, vendor error %#x): "
		       "rkey %#x over %llu bytes at %#llx, access %#x, "
		       "MR lkey %#x; windows: %u allocated, %u free, %u binds waiting, "
		       "device max_mw %u",
		       ibv_wc_status_str(wc->status), (int)wc->status, wc->vendor_err,
		       wr->bind_mw.rkey, (unsigned long long)b->length,
		       (unsigned long long)b->addr, b->mw_access_flags,
		       b->mr ? b->mr->lkey : 0, ic->n_mw, ic->n_mw_free,
		       ic->binds_waiting, ic->dev->max_mw);
}

/* One send-queue WR is done (signalled or retired by a later one). */
static void op_done(struct iser_conn *ic, struct iser_op *op,
		    const struct ibv_wc *wc)
{
	struct idm_task *t;
	struct iser_dop *dop;
	enum iser_op_kind kind;
	uint32_t len;

	if (op->kind == ISER_OP_BIND && wc->status != IBV_WC_SUCCESS &&
	    wc->status != IBV_WC_WR_FLUSH_ERR) {
		struct ibv_send_wr wr = op->wr;

		iser_op_release(ic, op);
		bind_failed(ic, &wr, wc);
		return;
	}

	/* Give the slot (and its message / window) back before anything
	 * that may call the caller: a callback that ends the connection
	 * drains the QP, which waits for every slot to come back. */
	kind = op->kind;
	t = op->task;
	dop = op->dop;
	len = op->len;
	iser_op_release(ic, op);
	if (wc->status != IBV_WC_SUCCESS) {
		iser_conn_fail(ic, wc->status == IBV_WC_WR_FLUSH_ERR ? -ECONNRESET
								      : -EIO,
			       "%s failed: %s (vendor error %#x)", iser_op_name(kind),
			       ibv_wc_status_str(wc->status), wc->vendor_err);
		return;
	}
	ic->activity = true;
	if (kind == ISER_OP_PROBE)
		ic->probe_out = false; /* iser_keepalive.c */
	else
		ic->role->op_done(ic, kind, t, dop, len);
}

static void send_done(struct iser_conn *ic, const struct ibv_wc *wc)
{
	iser_sq_reap(ic, wc, op_done);
}

/* Send queue room, op slots and messages came back: move what waited. */
static void sq_refill(struct iser_conn *ic)
{
	if (ic->state != ISER_UP)
		return;
	iser_plug(ic);
	if (ic->role->sq_room)
		ic->role->sq_room(ic);
	if (!idm_sq_empty(&ic->pend) && ic->state == ISER_UP)
		iser_pend_run(ic);
	iser_rx_resume(ic);
	iser_unplug(ic);
}

static void recv_done(struct iser_conn *ic, const struct ibv_wc *wc)
{
	struct iser_msg *m = (struct iser_msg *)(uintptr_t)wc->wr_id;
	bool empty;

	if (iser_srq_msg(m)) {
		empty = iser_srq_took(ic);
	} else {
		ic->rx_posted--;
		empty = ic->rx_posted == 0 && m->pool == &ic->rx_ffp;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		iser_rx_give_back(m);
		iser_conn_fail(ic, wc->status == IBV_WC_WR_FLUSH_ERR ? -ECONNRESET
								      : -EIO,
			       "receive failed: %s (vendor error %#x)",
			       ibv_wc_status_str(wc->status), wc->vendor_err);
		return;
	}
	ic->activity = true;
	/* the peer's next Send meets receiver-not-ready (with a shared
	 * queue: the next Send of any peer on it) */
	if (ic->st && empty)
		ic->st->recv_queue_empty++;
	iser_recv(ic, m, wc);
}

static void cq_events(struct ibv_comp_channel *cc, uint32_t *unacked)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	while (ibv_get_cq_event(cc, &cq, &cq_ctx) == 0) {
		if (++*unacked >= CQ_ACK_BATCH) {
			ibv_ack_cq_events(cq, *unacked);
			*unacked = 0;
		}
	}
}

static void cq_more_deferred(struct idm_prov_defer *d)
{
	struct iser_conn *ic = IDM_PROV_CONTAINER_OF(d, struct iser_conn, cq_more);
	bool send = ic->more_send, recv = ic->more_recv;

	ic->more_send = ic->more_recv = false;
	if (ic->fail_later) {
		iser_conn_fail(ic, -EIO, "%s", ic->fail_later);
		return;
	}
	if (recv)
		iser_cq_poll(ic, false);
	if (send && !ic->more_send)
		iser_cq_poll(ic, true);
}

/* The budget ran out with completions maybe left: the arm made before
 * polling raises no event for those already queued, so the poll goes on
 * from a deferred item, which the next pass runs after the other event
 * sources. Without the budget a peer that answers as fast as this side
 * posts (a Send per completion) kept one connection's poll going for
 * ever, starving the others and the caller's loop (soft-RoCE). */
static void cq_poll_later(struct iser_conn *ic, bool is_send)
{
	if (is_send)
		ic->more_send = true;
	else
		ic->more_recv = true;
	idm_prov_defer(ic->ctx, &ic->cq_more, cq_more_deferred);
}

void iser_sq_refill_later(struct iser_conn *ic)
{
	if (ic->state == ISER_UP)
		cq_poll_later(ic, true);
}

/* A failure found where the connection cannot be torn down at once (in
 * the middle of a task's release, which teardown would run again): the
 * caller has stopped the QP; the teardown follows in the next pass. */
void iser_conn_fail_later(struct iser_conn *ic, const char *why)
{
	if (ic->fail_later || ic->state != ISER_UP)
		return;
	ic->fail_later = why;
	idm_prov_defer(ic->ctx, &ic->cq_more, cq_more_deferred);
}

/* Arm, then poll until empty or ISER_CQ_BUDGET batches: a completion
 * that arrives between the last poll and the arm still raises an event. */
void iser_cq_poll(struct iser_conn *ic, bool is_send)
{
	struct ibv_cq *cq = is_send ? ic->scq : ic->rcq;
	struct ibv_wc *wc = ic->batch;
	int budget = ISER_CQ_BUDGET;
	int n;

	if (ic->state != ISER_UP)
		return;
	if (ibv_req_notify_cq(cq, 0)) {
		iser_conn_fail(ic, -EIO, "cannot arm the completion queue");
		return;
	}
	/* WRs that the handlers post (responses, RDMA for the commands
	 * just received) leave as one chain per batch of completions. */
	iser_plug(ic);
	do {
		/* The batch lives in the connection so that a teardown
		 * started by one completion (iser_drain) also takes back
		 * the WRs of the completions polled after it. */
		n = ibv_poll_cq(cq, ISER_CQ_BATCH, wc);
		ic->batch_n = n > 0 ? n : 0;
		ic->batch_send = is_send;
		for (ic->batch_pos = 0;
		     ic->batch_pos < ic->batch_n && ic->state == ISER_UP;
		     ic->batch_pos++) {
			if (is_send)
				send_done(ic, &wc[ic->batch_pos]);
			else
				recv_done(ic, &wc[ic->batch_pos]);
		}
		ic->batch_n = 0;
		if (is_send)
			sq_refill(ic);
		/* post what this batch produced before polling the next */
		iser_unplug(ic);
		iser_plug(ic);
		/* A busy receive CQ must not starve the send CQ: while
		 * commands keep arriving, the Sends of their responses only
		 * complete (and give their messages back) here. */
		if (!is_send && n > 0 && ic->state == ISER_UP)
			iser_cq_poll(ic, true);
	} while (n > 0 && ic->state == ISER_UP && --budget > 0);
	iser_unplug(ic);
	if (n > 0 && budget == 0 && ic->state == ISER_UP)
		cq_poll_later(ic, is_send);
	if (n < 0 && ic->state == ISER_UP)
		iser_conn_fail(ic, -EIO, "polling the completion queue failed");
}

/* Completions that arrive before ESTABLISHED was seen (the initiator may
 * send its first Login Request right after the RTU) wait on the CQ until
 * established() polls them. */
static void scq_watch(struct idm_prov_watch *w, uint32_t revents)
{
	struct iser_conn *ic = IDM_PROV_CONTAINER_OF(w, struct iser_conn, scq_w);

	(void)revents;
	cq_events(ic->scc, &ic->scq_unacked);
	iser_cq_poll(ic, true);
}

static void rcq_watch(struct idm_prov_watch *w, uint32_t revents)
{
	struct iser_conn *ic = IDM_PROV_CONTAINER_OF(w, struct iser_conn, rcq_w);

	(void)revents;
	cq_events(ic->rcc, &ic->rcq_unacked);
	iser_cq_poll(ic, false);
}

static int cq_setup(struct iser_conn *ic, struct ibv_comp_channel **cc,
		    struct ibv_cq **cq, int depth, struct idm_prov_watch *w,
		    idm_prov_watch_fn fn)
{
	struct idm_ctx *ctx = ic->ctx;
	int r;

	*cc = ibv_create_comp_channel(ic->id->verbs);
	if (!*cc)
		return errno ? -errno : -ENOMEM;
	r = iser_nonblock((*cc)->fd);
	if (r < 0)
		return r;
	*cq = ibv_create_cq(ic->id->verbs, depth, ic, *cc, 0);
	if (!*cq)
		return errno ? -errno : -ENOMEM;
	if (ibv_req_notify_cq(*cq, 0))
		return -EIO;
	return idm_prov_watch_add(ctx, w, (*cc)->fd, EPOLLIN, fn);
}

int iser_cq_create(struct iser_conn *ic)
{
	int r = cq_setup(ic, &ic->scc, &ic->scq, ISER_SQ_DEPTH + 1, &ic->scq_w,
			 scq_watch);

	if (r < 0)
		return r;
	return cq_setup(ic, &ic->rcc, &ic->rcq, ISER_RQ_DEPTH, &ic->rcq_w,
			rcq_watch);
}

void iser_cq_destroy(struct iser_conn *ic)
{
	if (ic->scq_w.added)
		idm_prov_watch_del(ic->ctx, &ic->scq_w);
	if (ic->rcq_w.added)
		idm_prov_watch_del(ic->ctx, &ic->rcq_w);
	if (ic->scq) {
		ibv_ack_cq_events(ic->scq, ic->scq_unacked);
		ibv_destroy_cq(ic->scq);
	}
	if (ic->rcq) {
		ibv_ack_cq_events(ic->rcq, ic->rcq_unacked);
		ibv_destroy_cq(ic->rcq);
	}
	ic->scq = ic->rcq = NULL;
	if (ic->scc)
		ibv_destroy_comp_channel(ic->scc);
	if (ic->rcc)
		ibv_destroy_comp_channel(ic->rcc);
	ic->scc = ic->rcc = NULL;
}
