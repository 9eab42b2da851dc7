/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The RC QP of one connection and what is made with it: its two CQs
 * (iser_cq.c), the op slots (iser_sq.c), the login-phase message pools
 * (iser_msgpool.c) and the keepalive timer (iser_keepalive.c); and the drain
 * that takes every work request back before buffers are released.
 */
#include "iser_qp.h"
#include "iser_cq.h"
#include "iser_keepalive.h"
#include "iser_msgpool.h"
#include "iser_mw.h"
#include "iser_pd.h"
#include "iser_send.h"
#include "iser_sq.h"
#include "iser_srq.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int iser_qp_create(struct iser_conn *ic)
{
	struct ibv_qp_init_attr qa;
	int r;

	ic->dev = iser_dev_get(ic->ip, ic->id->verbs);
	if (!ic->dev)
		return -ENODEV;
	r = iser_cq_create(ic);
	if (r == 0 && ic->ip->shared_recv)
		r = iser_srq_attach(ic);
	if (r < 0)
		return r;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = ic->scq;
	qa.recv_cq = ic->rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = ISER_SQ_DEPTH + 1; /* + the drain marker */
	qa.cap.max_recv_wr = ISER_RQ_DEPTH;
	/* message + caller data (immediate data) at least; a Put/Get_Data
	 * range of a scatter-gather buffer takes up to ISER_WR_SGE */
	qa.cap.max_send_sge = ic->dev->max_sge < ISER_WR_SGE ? ic->dev->max_sge
							     : ISER_WR_SGE;
	if (qa.cap.max_send_sge < 2)
		qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 1;
	if (ic->srq) {
		qa.srq = ic->srq->srq;
		qa.cap.max_recv_wr = 0;
		qa.cap.max_recv_sge = 0;
	}
	if (rdma_create_qp(ic->id, ic->dev->pd, &qa))
		return errno ? -errno : -EIO;
	ic->qp = ic->id->qp;
	/* the device may have granted more than asked: use what was asked */
	ic->wr_sge = qa.cap.max_send_sge < ISER_WR_SGE ? qa.cap.max_send_sge
						       : ISER_WR_SGE;
	ic->rd_sge = ic->dev->max_sge_rd < ic->wr_sge ? ic->dev->max_sge_rd
						      : ic->wr_sge;
	if (ic->rd_sge == 0)
		ic->rd_sge = 1;

	r = iser_sq_init(ic);
	if (r == 0)
		r = iser_pools_login(ic);
	if (r == 0)
		r = iser_keepalive_start(ic);
	return r;
}

/* A send-queue WR retired during teardown: only give its resources back. */
static void drain_op(struct iser_conn *ic, struct iser_op *op,
		     const struct ibv_wc *wc)
{
	(void)wc;
	iser_op_release(ic, op);
}

/* A receive completion seen during teardown: a shared buffer goes back
 * on its queue for the other connections, an own one to its pool. */
static void drain_recv(struct iser_conn *ic, const struct ibv_wc *wc)
{
	struct iser_msg *m = (struct iser_msg *)(uintptr_t)wc->wr_id;

	if (iser_srq_msg(m)) {
		iser_srq_took(ic);
		iser_srq_repost(m);
		return;
	}
	iser_pool_put(m);
	ic->rx_posted--;
}

/* A QP attached to a shared receive queue flushes only the receives it
 * had taken, and no marker can follow them (the queue is not the QP's).
 * Poll the receive CQ until it stayed empty for a while: whatever the QP
 * took then completes here and goes back on the queue. One that comes
 * later still is only off the queue (iser_srq.c), never freed under the
 * device. */
#define ISER_SRQ_QUIET_US 2000
#define ISER_SRQ_QUIET_MAX_US 100000
static void drain_shared_recv(struct iser_conn *ic)
{
	struct timespec t0, last, now;
	struct ibv_wc wc[16];
	long quiet, total;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	last = t0;
	for (;;) {
		int m = ibv_poll_cq(ic->rcq, 16, wc), i;

		clock_gettime(CLOCK_MONOTONIC, &now);
		for (i = 0; i < m; i++)
			drain_recv(ic, &wc[i]);
		if (m > 0)
			last = now;
		quiet = (now.tv_sec - last.tv_sec) * 1000000L +
			(now.tv_nsec - last.tv_nsec) / 1000L;
		total = (now.tv_sec - t0.tv_sec) * 1000000L +
			(now.tv_nsec - t0.tv_nsec) / 1000L;
		if (quiet >= ISER_SRQ_QUIET_US || total >= ISER_SRQ_QUIET_MAX_US)
			return;
		if (m <= 0)
			usleep(100);
	}
}

/* A signalled WR posted to the QP in the error state: it is flushed after
 * everything posted before it, so its completion proves that the device
 * is done with every earlier WR, signalled or not (ib_drain_sq does the
 * same). Returns false if it could not be posted. */
static bool post_drain_marker(struct iser_conn *ic)
{
	struct iser_op *op = iser_op_get(ic, ISER_OP_DRAIN);
	struct ibv_send_wr wr, *bad;

	if (!op)
		return false;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = iser_op_wr_id(ic, op);
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(ic->qp, &wr, &bad)) {
		iser_op_put(ic, op);
		return false;
	}
	op->posted = true;
	op->next = NULL;
	if (ic->posted_tail)
		ic->posted_tail->next = op;
	else
		ic->posted = op;
	ic->posted_tail = op;
	ic->sq_posted++;
	return true;
}

/* Complete every outstanding work request (as flush errors) so that no
 * buffer is touched by the device once we return. Bounded: rxe flushes in
 * microseconds, hardware in milliseconds. */
/* The connection's work request counters, for the debug log at its end. */
static void log_counters(const struct iser_conn *ic)
{
	idm_prov_dbg(ic->ctx, "iser: %llu work requests posted, %llu send "
		 "completions (selective signalling)",
		 (unsigned long long)ic->stat_wrs,
		 (unsigned long long)ic->stat_signalled);
	if (ic->stat_writes)
		idm_prov_dbg(ic->ctx, "iser: %llu write commands (largest %u bytes), "
			 "%llu Sends of unsolicited data, %llu RDMA Reads of "
			 "%llu bytes", (unsigned long long)ic->stat_writes,
			 ic->stat_max_edtl,
			 (unsigned long long)ic->stat_unsol_sends,
			 (unsigned long long)ic->stat_reads,
			 (unsigned long long)ic->stat_read_bytes);
}

/* Give back what the QP never saw: WRs still waiting for send queue room,
 * pending ops, receive buffers held back, completions polled but not yet
 * handled. */
static void drop_unposted(struct iser_conn *ic)
{
	struct iser_op *op;
	struct iser_msg *held;

	while ((op = ic->sq_wait)) {
		ic->sq_wait = op->next;
		/* a window of an unposted bind stays the task's: its
		 * release gives it back */
		iser_op_release(ic, op);
	}
	ic->sq_wait_tail = NULL;
	ic->binds_waiting = 0;
	iser_pend_free_all(ic);
	/* receive buffers held back by backpressure (iser_recv.c) */
	while ((held = ic->rx_held) != NULL) {
		ic->rx_held = held->next;
		if (iser_srq_msg(held))
			iser_srq_repost(held);
		else
			iser_pool_put(held);
	}
	ic->rx_stopped = false;
	/* receive completions already polled but not handled yet (the
	 * handler of batch_pos started this teardown and keeps its own);
	 * send ones are still on the posted list and retire below */
	while (ic->batch_n && ++ic->batch_pos < ic->batch_n) {
		if (!ic->batch_send)
			drain_recv(ic, &ic->batch[ic->batch_pos]);
	}
	ic->batch_n = 0;
}

/* Poll both CQs of the errored QP until every posted WR has flushed, for
 * 3 s at most (1 s with nothing more coming when no marker was posted). */
static void reap_flushed(struct iser_conn *ic, bool marker)
{
	struct timespec t0, now;
	struct iser_op *op;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct ibv_wc wc[16];
		int n, m, i;

		n = ibv_poll_cq(ic->scq, 16, wc);
		for (i = 0; i < n; i++)
			iser_sq_reap(ic, &wc[i], drain_op);
		m = ibv_poll_cq(ic->rcq, 16, wc);
		for (i = 0; i < m; i++)
			drain_recv(ic, &wc[i]);
		if (!ic->posted && ic->rx_posted == 0)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec > 3 || (!marker && n <= 0 && m <= 0 &&
		    now.tv_sec - t0.tv_sec >= 1)) {
			/* Without a marker, unsignalled WRs that had
			 * completed before the error leave no trace: once
			 * nothing more comes they are done. */
			if (marker)
				idm_prov_warn(ic->ctx, "iser: drain incomplete "
					  "(%u sends, %u receives)",
					  ic->sq_posted, ic->rx_posted);
			while ((op = iser_sq_pop(ic)))
				iser_op_release(ic, op);
			break;
		}
		if (n <= 0 && m <= 0)
			usleep(100);
	}
}

void iser_drain(struct iser_conn *ic)
{
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};
	bool marker;

	if (!ic->qp)
		return;
	log_counters(ic);
	ibv_modify_qp(ic->qp, &attr, IBV_QP_STATE);
	drop_unposted(ic);
	marker = ic->posted ? post_drain_marker(ic) : true;
	reap_flushed(ic, marker);
	if (ic->srq)
		drain_shared_recv(ic);
	ic->reads_out = 0;
	ic->sq_remote = 0;
}

void iser_qp_destroy(struct iser_conn *ic)
{
	iser_keepalive_stop(ic);
	/* a bound type-2 window holds a reference on its QP (rxe): dealloc
	 * first, or rxe_destroy_qp waits 50 s for it */
	iser_mws_dealloc(ic, true);
	if (ic->qp)
		rdma_destroy_qp(ic->id);
	ic->qp = NULL;
	iser_cq_destroy(ic);
	idm_sq_init(&ic->dout);
}
