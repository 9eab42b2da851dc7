/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The epoll engine of the TCP provider (tcp_engine.h): each connection
 * reads (readv) and writes (sendmsg) itself when the core's epoll loop
 * says its socket is ready, a syscall per read and per write.
 */
#include "tcp.h"
#include "tcp_engine_epoll.h"
#include "tcp_tx.h"
#include "tcp_rx.h"
#include "tcp_zc.h"
#include "tcp_ubuf.h"

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

static void epoll_flush(struct tcp_conn *tc);

/* The engine of the connection when the deferred item runs: a move may
 * have taken it to an io_uring context meanwhile. */
static void tx_defer_fn(struct idm_prov_defer *df)
{
	struct tcp_conn *tc = IDM_PROV_CONTAINER_OF(df, struct tcp_conn, tx_defer);

	tc->eops->flush_tx(tc);
}

static void epoll_kick_tx(struct tcp_conn *tc)
{
	idm_prov_defer(tc->ctx, &tc->tx_defer, tx_defer_fn);
}

/* A write's result the io_uring engine left pending as the connection
 * moved to this (epoll) context: acted on before the next write.
 * Returns whether the flush may go on. */
static bool settle_tx(struct tcp_conn *tc)
{
	int res = tc->u_tx_res;

	tc->u_tx_sub = false;
	if (res == -EINTR)
		return true;
	if (res < 0)
		return tcp_tx_sent(tc, -1, -res, false);
	/* its bytes were counted as it completed */
	return tcp_tx_retire(tc, (size_t)res < tc->u_txlen);
}

static void epoll_flush(struct tcp_conn *tc)
{
	/* scratch for one sendmsg: on the stack, not in every connection */
	struct iovec iov[TCP_TX_IOV];
	uint64_t sent = 0;

	if (tc->u_tx_sub && !settle_tx(tc))
		return;
	while (!tc->closed) {
		ssize_t n;
		int cnt;

		if (sent >= TCP_IO_BYTES) {
			/* a fast peer must not keep the loop here for a
			 * whole 16 MiB transfer: continue next pass */
			tcp_tx_kick(tc);
			return;
		}
		cnt = tcp_tx_prepare(tc, iov);
		if (cnt <= 0)
			return;
		{
			/* sendmsg for MSG_NOSIGNAL (and MSG_ZEROCOPY) */
			struct msghdr mh = { .msg_iov = iov,
					     .msg_iovlen = (size_t)cnt };
			n = tcp_zc_sendmsg(tc, &mh);
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (!tcp_tx_sent(tc, n, n < 0 ? errno : 0, false))
			return;
		sent += (uint64_t)n;
	}
}

static ssize_t epoll_readv(struct tcp_conn *tc, const struct iovec *iov,
			   int cnt)
{
	ssize_t n;

	if (tcp_ubuf_may_refill(tc))
		tcp_ubuf_refill(tc);
	n = tcp_ubuf_take(tc, iov, cnt);
	return n != TCP_UBUF_NONE ? n : readv(tc->fd, iov, cnt);
}

static int epoll_open(struct tcp_knobs *k, struct idm_ctx *ctx,
		      const char **why)
{
	(void)ctx;
	(void)why;
	k->eng = NULL;
	return 0;
}

static void epoll_close(struct tcp_knobs *k)
{
	(void)k;
}

static void epoll_tx_changed(struct tcp_conn *tc)
{
	(void)tc; /* nothing is prepared ahead of its write */
}

static void epoll_forget(struct tcp_conn *tc)
{
	tc->u_want_rx = tc->u_want_tx = false;
	tc->u_tx_ready = tc->u_rx_sub = tc->u_tx_sub = false;
}

static void epoll_detach(struct tcp_conn *tc)
{
	(void)tc;
}

/* Moved in (perhaps from an io_uring context): its socket watch reports
 * input, the flush acts on a pending write result first (settle_tx);
 * what the io_uring engine read already is read out by the next pass. */
static void epoll_attach(struct tcp_conn *tc)
{
	bool tx = tc->u_want_tx || tc->u_tx_ready, rx_sub = tc->u_rx_sub;

	tc->u_want_rx = tc->u_want_tx = false;
	tc->u_tx_ready = tc->u_rx_sub = false;
	if (tx || tc->u_tx_sub)
		tcp_tx_kick(tc);
	if (tc->u_beg < tc->u_end || tc->u_err || rx_sub)
		idm_prov_defer(tc->ctx, &tc->rx_defer, tcp_rx_defer_fn);
}

const struct tcp_engine_ops tcp_engine_epoll = {
	.name = "epoll",
	.open = epoll_open,
	.close = epoll_close,
	.kick_tx = epoll_kick_tx,
	.flush_tx = epoll_flush,
	.readv = epoll_readv,
	.tx_changed = epoll_tx_changed,
	.forget = epoll_forget,
	.detach = epoll_detach,
	.attach = epoll_attach,
};
