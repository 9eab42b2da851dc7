/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-connection verbs resources: separate send and receive CQs (a receive
 * handler must never wait on the poller of its own sends), each with a
 * completion channel whose fd sits in the context's epoll set; the RC QP;
 * the login-phase message pools (small, RFC 7145 section 11) and the full
 * feature phase pools sized from the negotiated keys; and the drain that
 * takes every work request back before buffers are released.
 */
#include "iser.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/* The receive queue is sized when the QP is made, before any key is
 * known: room for the largest full feature phase pool (iser_keys.h) plus
 * the login buffers that may still be posted. */
#define ISER_RQ_DEPTH (ISER_RX_CAP + 8u)
#define ISER_RX_MAX ISER_RX_CAP
/* RNR NAK timer we ask senders to wait (IB encoding 12 = 0.64 ms). The
 * default 0 means 655 ms: one burst of unsolicited Data-Out beyond the
 * posted receives would stall the connection for seconds. */
#define ISER_MIN_RNR_TIMER 12

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
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
	r = set_nonblock((*cc)->fd);
	if (r < 0)
		return r;
	*cq = ibv_create_cq(ic->id->verbs, depth, ic, *cc, 0);
	if (!*cq)
		return errno ? -errno : -ENOMEM;
	if (ibv_req_notify_cq(*cq, 0))
		return -EIO;
	return idm_prov_watch_add(ctx, w, (*cc)->fd, EPOLLIN, fn);
}

int iser_qp_create(struct iser_conn *ic)
{
	struct iser_prov *ip = ic->ip;
	struct ibv_qp_init_attr qa;
	struct iser_sizes login;
	uint32_t i;
	int r;

	ic->dev = iser_dev_get(ip, ic->id->verbs);
	if (!ic->dev)
		return -ENODEV;
	r = cq_setup(ic, &ic->scc, &ic->scq, ISER_SQ_DEPTH + 1, &ic->scq_w,
		     iser_scq_watch);
	if (r < 0)
		return r;
	r = cq_setup(ic, &ic->rcc, &ic->rcq, ISER_RQ_DEPTH, &ic->rcq_w,
		     iser_rcq_watch);
	if (r < 0)
		return r;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = ic->scq;
	qa.recv_cq = ic->rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = ISER_SQ_DEPTH + 1; /* + the drain marker */
	qa.cap.max_recv_wr = ISER_RQ_DEPTH;
	qa.cap.max_send_sge = 2; /* message + caller data (immediate data) */
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(ic->id, ic->dev->pd, &qa))
		return errno ? -errno : -EIO;
	ic->qp = ic->id->qp;

	ic->ops = calloc(ISER_OPS, sizeof(*ic->ops));
	if (!ic->ops)
		return -ENOMEM;
	for (i = ISER_OPS; i-- > 0;) {
		ic->ops[i].next = ic->op_free;
		ic->op_free = &ic->ops[i];
	}

	iser_sizes_login(&login);
	r = iser_pool_init(&ic->rx_login, ic->dev->pd, login.rx_depth,
			   login.rx_msg);
	if (r == 0)
		r = iser_pool_init(&ic->tx_login, ic->dev->pd, login.tx_depth,
				   login.tx_msg);
	if (r < 0)
		return r;

	if (ip->keepalive_ms > 0) {
		struct itimerspec its = {
			.it_interval = {ip->keepalive_ms / 1000,
					(ip->keepalive_ms % 1000) * 1000000L},
		};

		its.it_value = its.it_interval;
		ic->timer_fd = timerfd_create(CLOCK_MONOTONIC,
					      TFD_NONBLOCK | TFD_CLOEXEC);
		if (ic->timer_fd < 0)
			return -errno;
		if (timerfd_settime(ic->timer_fd, 0, &its, NULL) < 0)
			return -errno;
		r = idm_prov_watch_add(ic->ctx, &ic->timer_w, ic->timer_fd,
				   EPOLLIN, iser_timer_watch);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Allocate_Connection_Resources: the full feature phase pools, sized
 * from the negotiated keys and registered, but nothing posted yet, so that
 * Deallocate_Connection_Resources can still give them back. */
int iser_rsrc_ffp_alloc(struct iser_conn *ic)
{
	struct idm_conn *c = ic->conn;
	int r;

	if (ic->ffp_alloc)
		return 0;
	if (!ic->qp || ic->state == ISER_DOWN)
		return -ENOTCONN;
	iser_sizes_ffp(&ic->ffp, &c->params, c->role, ic->ip->rx_depth,
		       c->cmd_window);
	if (ic->ffp.rx_depth > ISER_RX_MAX)
		ic->ffp.rx_depth = ISER_RX_MAX;
	r = iser_pool_init(&ic->rx_ffp, ic->dev->pd, ic->ffp.rx_depth,
			   ic->ffp.rx_msg);
	if (r < 0)
		return r;
	r = iser_pool_init(&ic->tx_ffp, ic->dev->pd, ic->ffp.tx_depth,
			   ic->ffp.tx_msg);
	if (r < 0) {
		iser_pool_fini(&ic->rx_ffp);
		return r;
	}
	ic->ffp_alloc = true;
	return 0;
}

/* Deallocate_Connection_Resources: possible until the receives are
 * posted (a live QP cannot hand posted receives back; after that the
 * pools go with the connection). Returns false if they stay. */
bool iser_rsrc_ffp_free(struct iser_conn *ic)
{
	if (!ic->ffp_alloc)
		return true;
	if (ic->ffp_rsrc)
		return false;
	iser_pool_fini(&ic->rx_ffp);
	iser_pool_fini(&ic->tx_ffp);
	ic->ffp_alloc = false;
	return true;
}

/* Enable_Datamover: post the full feature phase receive buffers (before
 * the last login PDU, so the peer's first full feature PDU finds one). */
int iser_rsrc_ffp(struct iser_conn *ic)
{
	struct iser_msg *m;
	int r;

	if (ic->ffp_rsrc)
		return 0;
	r = iser_rsrc_ffp_alloc(ic);
	if (r < 0)
		return r;
	while ((m = iser_pool_get(&ic->rx_ffp))) {
		r = iser_post_recv(ic, m);
		if (r < 0)
			return r; /* the QP is broken; teardown reclaims */
	}
	ic->ffp_rsrc = true;
	idm_prov_dbg(ic->ctx, "iser: full feature phase: %u receive buffers of %u "
		 "bytes (%u KiB; window %u, %u per command), %u send buffers "
		 "of %u", ic->ffp.rx_depth, ic->ffp.rx_msg,
		 (unsigned)(((uint64_t)ic->ffp.rx_depth * ic->ffp.rx_msg) >> 10),
		 ic->conn->cmd_window,
		 iser_rx_per_cmd(&ic->conn->params, ic->conn->role),
		 ic->ffp.tx_depth, ic->ffp.tx_msg);
	{
		struct ibv_qp_attr a = {.min_rnr_timer = ISER_MIN_RNR_TIMER};

		/* RTS to RTS: allowed, and not every device does it */
		if (ibv_modify_qp(ic->qp, &a, IBV_QP_MIN_RNR_TIMER))
			idm_prov_dbg(ic->ctx, "iser: cannot shorten the RNR timer");
	}
	return 0;
}

/* A send-queue WR retired during teardown: only give its resources back. */
static void drain_op(struct iser_conn *ic, struct iser_op *op,
		     const struct ibv_wc *wc)
{
	(void)wc;
	iser_op_release(ic, op);
}

static void drain_recv(struct iser_conn *ic, const struct ibv_wc *wc)
{
	iser_pool_put((struct iser_msg *)(uintptr_t)wc->wr_id);
	ic->rx_posted--;
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
void iser_drain(struct iser_conn *ic)
{
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};
	struct timespec t0, now;
	struct iser_op *op;
	bool marker;

	if (!ic->qp)
		return;
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
	ibv_modify_qp(ic->qp, &attr, IBV_QP_STATE);
	/* WRs still waiting for send queue room were never posted. */
	while ((op = ic->sq_wait)) {
		ic->sq_wait = op->next;
		/* a window of an unposted bind stays the task's: its
		 * release gives it back */
		iser_op_release(ic, op);
	}
	ic->sq_wait_tail = NULL;
	ic->binds_waiting = 0;
	iser_pend_free_all(ic);
	/* receive completions already polled but not handled yet (the
	 * handler of batch_pos started this teardown and keeps its own);
	 * send ones are still on the posted list and retire below */
	while (ic->batch_n && ++ic->batch_pos < ic->batch_n) {
		if (!ic->batch_send)
			drain_recv(ic, &ic->batch[ic->batch_pos]);
	}
	ic->batch_n = 0;
	marker = ic->posted ? post_drain_marker(ic) : true;
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
	ic->reads_out = 0;
	ic->sq_remote = 0;
}

void iser_qp_destroy(struct iser_conn *ic)
{
	struct idm_ctx *ctx = ic->ctx;
	uint32_t i;

	if (ic->timer_w.added)
		idm_prov_watch_del(ctx, &ic->timer_w);
	if (ic->timer_fd > 0)
		close(ic->timer_fd);
	ic->timer_fd = -1;
	if (ic->scq_w.added)
		idm_prov_watch_del(ctx, &ic->scq_w);
	if (ic->rcq_w.added)
		idm_prov_watch_del(ctx, &ic->rcq_w);
	/* a bound type-2 window holds a reference on its QP (rxe): dealloc
	 * first, or rxe_destroy_qp waits 50 s for it */
	for (i = 0; i < ic->n_mw_free; i++)
		ibv_dealloc_mw(ic->mw_free[i]);
	free(ic->mw_free);
	ic->mw_free = NULL;
	ic->n_mw_free = ic->n_mw = 0;
	if (ic->qp)
		rdma_destroy_qp(ic->id);
	ic->qp = NULL;
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
	ic->dout_head = ic->dout_tail = NULL;
}

/* Message memory and op slots outlive the QP until conn_free: a handler
 * that ran a callback which terminated the connection may still return
 * its message to the pool. */
void iser_conn_mem_free(struct iser_conn *ic)
{
	iser_pool_fini(&ic->rx_login);
	iser_pool_fini(&ic->tx_login);
	iser_pool_fini(&ic->rx_ffp);
	iser_pool_fini(&ic->tx_ffp);
	ic->ffp_rsrc = false;
	ic->ffp_alloc = false;
	free(ic->ops);
	ic->ops = NULL;
	ic->op_free = NULL;
}
