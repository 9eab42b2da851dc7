/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sockets of the TCP provider: listening and accepting (target),
 * connecting with a timeout (initiator), the epoll watch of a connection,
 * and tearing a connection down after a failure or Connection_Terminate.
 */
#include "tcp.h"
#include "tcp_conn.h"
#include "tcp_state.h"
#include "tcp_late.h"
#include "tcp_target.h"
#include "tcp_initiator.h"
#include "tcp_live.h"
#include "tcp_tx.h"
#include "tcp_txd.h"
#include "tcp_rx.h"
#include "tcp_zc.h"
#include "tcp_engine.h"
#include "prov_env.h"
#include "tcp_ubuf.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/* Out of descriptors (EMFILE, ENFILE) or kernel memory, accept() fails
 * with the connection still queued, and the level-triggered listener
 * would wake the loop again at once: a busy loop that floods the log.
 * The listener is put to sleep for this long instead, and the failure
 * logged at most once per TCP_ACCEPT_LOG_S. */
#define TCP_ACCEPT_BACKOFF_MS 100
#define TCP_ACCEPT_LOG_S      10

struct tcp_listener {
	struct idm_prov_listener *l;
	int fd;
	int port;
	struct idm_prov_watch w;
	/* accept back-off: made at listen time, when descriptors are there */
	int tfd;
	struct idm_prov_watch tw;
	bool paused;
	time_t logged;	     /* CLOCK_MONOTONIC seconds of the last warning */
	unsigned unlogged;   /* failures since then, not logged */
};

static void conn_event(struct idm_prov_watch *w, uint32_t revents)
{
	struct tcp_conn *tc = IDM_PROV_CONTAINER_OF(w, struct tcp_conn, w);

	if (tc->closed)
		return; /* failed: torn down by fail_run */
	/* with zero copy, EPOLLERR mostly says the error queue holds the
	 * kernel's notifications; it means a socket error only when that
	 * queue is empty */
	if ((revents & EPOLLERR) && tc->zc_min) {
		if (tcp_zc_reap(tc) > 0)
			revents &= ~(uint32_t)EPOLLERR;
		if (tc->closed)
			return; /* failed, or closed by a completion callback */
	}
	if (revents & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP)) {
		tc->rx_dry = false;
		tcp_rx_run(tc);
	}
	if (!tc->closed && (revents & EPOLLOUT))
		tc->eops->flush_tx(tc);
	/* Input is stopped (send queue over its mark, tcp_tx.c) and the
	 * socket broke: the receive side, which would notice, does not read
	 * now, and an error or hang-up is reported on every poll. */
	if (!tc->closed && tc->rx_stopped && (revents & (EPOLLERR | EPOLLHUP)))
		tcp_conn_fail(tc, -ECONNRESET,
			      "connection lost while input was stopped "
			      "(send queue full)");
}

/* The IDM_TCP_* knobs, once per context (providers/tcp/README.md). */
int tcp_init(struct idm_prov *prov)
{
	struct tcp_knobs *k = calloc(1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	k->user_timeout_ms = prov_env_int("IDM_TCP_USER_TIMEOUT_MS", 15000, 0, 3600000);
	k->zero_window_ms =
		prov_env_int("IDM_TCP_ZERO_WINDOW_TIMEOUT_MS", 60000, 0, 86400000);
	k->keepidle = prov_env_int("IDM_TCP_KEEPIDLE", 10, 0, 32767);
	k->keepintvl = prov_env_int("IDM_TCP_KEEPINTVL", 2, 0, 32767);
	k->keepcnt = prov_env_int("IDM_TCP_KEEPCNT", 3, 0, 127);
	k->zerocopy_min = prov_env_int("IDM_TCP_ZEROCOPY", 0, 0, 0x7fffffff);
	tcp_live_init(k, idm_prov_ctx(prov));
	tcp_engine_init(k, idm_prov_ctx(prov));
	idm_prov_set_priv(prov, k);
	return 0;
}

void tcp_fini(struct idm_prov *prov)
{
	struct tcp_knobs *k = idm_prov_priv(prov);

	if (k) {
		tcp_live_fini(k);
		tcp_engine_fini(k);
	}
	free(k);
	idm_prov_set_priv(prov, NULL);
}

void tcp_tune_socket(int fd, const struct tcp_knobs *k)
{
	int one = 1;

	/* PDUs are whole messages: do not let Nagle hold a header back. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/*
	 * Dead peers. Without these a peer that vanishes (cable pulled, host
	 * frozen, frames dropped) is noticed only after the kernel's
	 * retransmission limit, about 15 minutes, or never when we have
	 * nothing to send. Keepalive probes an idle connection; a busy one
	 * is watched by tcp_live.c, which bounds how long sent data may stay
	 * unacknowledged. 0 leaves the kernel's default for that knob.
	 */
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	if (k->keepidle > 0)
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &k->keepidle,
			   sizeof(k->keepidle));
	if (k->keepintvl > 0)
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &k->keepintvl,
			   sizeof(k->keepintvl));
	if (k->keepcnt > 0)
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &k->keepcnt,
			   sizeof(k->keepcnt));
	/* Not TCP_USER_TIMEOUT: Linux also applies it while the peer's
	 * window is zero, from the first window probe or retransmission on
	 * however much the peer acknowledged since, and so resets a live
	 * peer that reads slowly (tcp_live.c). Cleared, in case an adopted
	 * socket came with it, when tcp_live.c does the job. */
	if (k->user_timeout_ms > 0) {
		int zero = 0;

		setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &zero,
			   sizeof(zero));
	}
}

/* The one place a connection is made (accepted, connecting, or adopted).
 * It holds only the receive machine here; buffers come with use: the
 * send ring with the first PDU sent, the rx buffer with the first data
 * segment, the stage in full feature phase. */
/* The receive low-water mark is the receive machine's (tcp_rx.c,
 * rx_wait_for): 1 but while a large payload comes. Our own sockets start
 * there; one the caller adopted, or accepted from a listener it handed
 * over, may carry a mark of its own, under which the first PDUs would
 * never wake us: it goes back to 1. */
static void own_rcvlowat(struct tcp_conn *tc)
{
	int v = 0;
	socklen_t len = sizeof(v);

	if (tc->fd >= 0 &&
	    getsockopt(tc->fd, SOL_SOCKET, SO_RCVLOWAT, &v, &len) == 0 && v > 1)
		(void)setsockopt(tc->fd, SOL_SOCKET, SO_RCVLOWAT, &(int){ 1 },
				 sizeof(int));
}

/* A failure raised by a layer below (tcp_state.c): the teardown and
 * the report, now that that layer is out of its work. */
static void fail_run(struct idm_prov_defer *d)
{
	struct tcp_conn *tc = IDM_PROV_CONTAINER_OF(d, struct tcp_conn, fail_defer);

	tcp_conn_close(tc);
	if (tc->conn)
		idm_prov_conn_failed(tc->conn, tc->fail_err);
}

struct tcp_conn *tcp_conn_new(struct idm_ctx *ctx, int fd)
{
	struct tcp_conn *tc = calloc(1, sizeof(*tc));

	if (!tc)
		return NULL;
	tc->ctx = ctx;
	tc->fd = fd;
	tc->tfd = -1;
	tc->next_ttt = 0x1000;
	/* the items the lower layers queue without naming what runs */
	tc->fail_defer.fn = fail_run;
	tc->rx_defer.fn = tcp_rx_defer_fn;
	tcp_engine_bind(tc, NULL); /* epoll until bound to its context */
	idm_sq_init(&tc->gen);
	idm_sq_init(&tc->zc_wait);
	idm_pool_init(&tc->txd_pool, sizeof(struct tcp_txd), TCP_TXD_CHUNK);
	own_rcvlowat(tc);
	return tc;
}

/* tc is the transport of conn from now on. */
void tcp_conn_bind(struct tcp_conn *tc, struct idm_conn *conn)
{
	struct tcp_knobs *k = (struct tcp_knobs *)idm_prov_priv(
		idm_prov_conn_provider(conn));

	tc->user_ms = k ? k->user_timeout_ms : 0;
	tc->zwnd_ms = k ? k->zero_window_ms : 0;
	tcp_engine_bind(tc, k);
	tc->conn = conn;
	tc->params = idm_prov_conn_params(conn);
	tc->st = idm_prov_conn_stats(conn);
	tc->limits = idm_prov_conn_send_limits(conn);
	tc->target = idm_conn_role(conn) == IDM_ROLE_TARGET;
	tc->role = tc->target ? &tcp_target_role : &tcp_initiator_role;
	tcp_conn_note_limits(tc);
	tcp_zc_bind(tc, k);
}

/* Begin receiving (and sending) on a connected socket. */
int tcp_conn_start(struct tcp_conn *tc)
{
	tc->wevents = EPOLLIN | EPOLLRDHUP;
	return idm_prov_watch_add(tc->ctx, &tc->w, tc->fd, tc->wevents, conn_event);
}


/* Close the socket and let go of every transfer and task (no callbacks). */
void tcp_conn_close(struct tcp_conn *tc)
{
	if (tc->down)
		return;
	tc->down = tc->closed = true;
	idm_prov_defer_cancel(tc->ctx, &tc->fail_defer);
	if (tc->tw.added)
		idm_prov_watch_del(tc->ctx, &tc->tw);
	if (tc->tfd >= 0)
		close(tc->tfd);
	tc->tfd = -1;
	tcp_live_stop(tc);
	tc->eops->forget(tc); /* nothing of it is submitted after this */
	if (tc->w.added)
		idm_prov_watch_del(tc->ctx, &tc->w);
	if (tc->fd >= 0) {
		tcp_zc_before_close(tc);
		close(tc->fd);
	}
	tc->fd = -1;
	idm_prov_defer_cancel(tc->ctx, &tc->rx_defer);
	idm_prov_defer_cancel(tc->ctx, &tc->tx_defer);
	tcp_tx_drop_all(tc);
	/* the core runs our task_free for each task (tcp_tgt/ini_task_release) */
	if (tc->conn)
		idm_prov_conn_release_tasks(tc->conn);
}

void tcp_conn_destroy(struct tcp_conn *tc)
{
	if (!tc)
		return;
	tcp_conn_close(tc);
	tcp_txd_free_pool(tc);
	tcp_ubuf_free(tc);
	free(tc->bounce);
	free(tc->ring);
	free(tc->stage);
	free(tc->rxbuf);
	free(tc->zc_slots);
	tcp_late_free(tc);
	free(tc);
}

/* ---- target: listening ---------------------------------------------- */

static void accept_one(struct tcp_listener *tl, int fd)
{
	struct sockaddr_storage local, peer;
	socklen_t llen = sizeof(local), plen = sizeof(peer);
	struct idm_ctx *ctx = idm_prov_listener_ctx(tl->l);
	struct idm_conn *conn;
	struct tcp_conn *tc;

	tcp_tune_socket(fd, idm_prov_priv(idm_prov_listener_provider(tl->l)));
	tc = tcp_conn_new(ctx, fd);
	if (!tc) {
		idm_prov_err(ctx, "tcp: no memory for a new connection");
		close(fd);
		return;
	}
	if (getsockname(fd, (struct sockaddr *)&local, &llen) < 0)
		llen = 0;
	if (getpeername(fd, (struct sockaddr *)&peer, &plen) < 0)
		plen = 0;
	if (idm_prov_conn_accepted(
		    tl->l, tc, llen ? (struct sockaddr *)&local : NULL,
		    plen ? (struct sockaddr *)&peer : NULL, &conn) < 0) {
		tcp_conn_destroy(tc);
		return;
	}
	tcp_conn_bind(tc, conn);
	if (tc->closed)
		return; /* terminated from the accept callback */
	if (tcp_conn_start(tc) < 0)
		tcp_conn_fail(tc, -ENOMEM, "cannot watch the accepted socket");
}

static bool accept_resource_error(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOBUFS ||
	       err == ENOMEM;
}

/* accept() is short of a resource: stop watching the listener for
 * TCP_ACCEPT_BACKOFF_MS (the connection waits in the backlog) and say so,
 * rate-limited. */
static void accept_backoff(struct tcp_listener *tl, int err)
{
	struct idm_ctx *ctx = idm_prov_listener_ctx(tl->l);
	struct itimerspec its = {
		.it_value.tv_nsec = TCP_ACCEPT_BACKOFF_MS * 1000000L,
	};
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!tl->logged || now.tv_sec - tl->logged >= TCP_ACCEPT_LOG_S) {
		idm_prov_warn(ctx,
			      "tcp: accept: %s: pausing accepts for %d ms at a "
			      "time (%u more failures since the last warning; "
			      "next warning in %d s at the earliest)",
			      strerror(err), TCP_ACCEPT_BACKOFF_MS, tl->unlogged,
			      TCP_ACCEPT_LOG_S);
		tl->logged = now.tv_sec ? now.tv_sec : 1;
		tl->unlogged = 0;
	} else {
		tl->unlogged++;
	}
	if (idm_prov_watch_mod(ctx, &tl->w, 0) < 0 ||
	    timerfd_settime(tl->tfd, 0, &its, NULL) < 0) {
		/* cannot pause: keep watching (as before) rather than never
		 * accepting again */
		idm_prov_watch_mod(ctx, &tl->w, EPOLLIN);
		return;
	}
	tl->paused = true;
}

static void listen_event(struct idm_prov_watch *w, uint32_t revents)
{
	struct tcp_listener *tl = IDM_PROV_CONTAINER_OF(w, struct tcp_listener, w);

	(void)revents;
	if (tl->paused)
		return;
	for (int i = 0; i < 64; i++) {
		int fd = accept4(tl->fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (accept_resource_error(errno))
				accept_backoff(tl, errno);
			else if (errno != EAGAIN && errno != EWOULDBLOCK &&
				 errno != EINTR && errno != ECONNABORTED)
				idm_prov_warn(idm_prov_listener_ctx(tl->l),
					      "tcp: accept: %s",
					      strerror(errno));
			return;
		}
		accept_one(tl, fd);
	}
}

/* The back-off is over: watch the listener again. */
static void backoff_event(struct idm_prov_watch *w, uint32_t revents)
{
	struct tcp_listener *tl = IDM_PROV_CONTAINER_OF(w, struct tcp_listener, tw);
	uint64_t ticks;

	(void)revents;
	if (read(tl->tfd, &ticks, sizeof(ticks)) < 0 && errno == EAGAIN)
		return;
	if (tl->paused &&
	    idm_prov_watch_mod(idm_prov_listener_ctx(tl->l), &tl->w, EPOLLIN) == 0)
		tl->paused = false;
}

/* Serve a bound, listening socket: the one way a listener starts, for a
 * socket of our own (tcp_listen) or the caller's (tcp_listen_fd). On
 * failure fd is left open. */
int tcp_listener_start(struct idm_prov_listener *l, int fd)
{
	struct tcp_listener *tl = calloc(1, sizeof(*tl));
	struct sockaddr_storage bound;
	socklen_t blen = sizeof(bound);
	int r;

	if (!tl)
		return -ENOMEM;
	tl->l = l;
	tl->fd = fd;
	/* the accept back-off's timer (listen_event on EMFILE) */
	tl->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (tl->tfd < 0 ||
	    getsockname(fd, (struct sockaddr *)&bound, &blen) < 0) {
		r = -errno;
		goto fail;
	}
	if (bound.ss_family == AF_INET)
		tl->port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
	else if (bound.ss_family == AF_INET6)
		tl->port = ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
	r = idm_prov_watch_add(idm_prov_listener_ctx(l), &tl->tw, tl->tfd,
			       EPOLLIN, backoff_event);
	if (r < 0)
		goto fail;
	r = idm_prov_watch_add(idm_prov_listener_ctx(l), &tl->w, tl->fd, EPOLLIN,
			   listen_event);
	if (r < 0)
		goto fail;
	idm_prov_listener_set_priv(l, tl);
	return 0;
fail:
	if (tl->tw.added)
		idm_prov_watch_del(idm_prov_listener_ctx(l), &tl->tw);
	if (tl->tfd >= 0)
		close(tl->tfd);
	free(tl); /* fd stays open: the caller's */
	return r;
}

int tcp_listen(struct idm_prov_listener *l, const struct sockaddr *sa,
	       socklen_t salen, int backlog)
{
	int one = 1, fd, r;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, sa, salen) < 0 ||
	    listen(fd, backlog > 0 ? backlog : 128) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	r = tcp_listener_start(l, fd);
	if (r < 0)
		close(fd);
	return r;
}

void tcp_unlisten(struct idm_prov_listener *l)
{
	struct tcp_listener *tl = idm_prov_listener_priv(l);

	if (!tl)
		return;
	if (tl->w.added)
		idm_prov_watch_del(idm_prov_listener_ctx(l), &tl->w);
	if (tl->tw.added)
		idm_prov_watch_del(idm_prov_listener_ctx(l), &tl->tw);
	close(tl->fd);
	close(tl->tfd);
	free(tl);
	idm_prov_listener_set_priv(l, NULL);
}

int tcp_listener_port(struct idm_prov_listener *l)
{
	struct tcp_listener *tl = idm_prov_listener_priv(l);

	return tl ? tl->port : -EINVAL;
}

/* ---- initiator: connecting ------------------------------------------ */

static void connect_done(struct tcp_conn *tc, int status)
{
	if (tc->tw.added)
		idm_prov_watch_del(tc->ctx, &tc->tw);
	if (tc->tfd >= 0)
		close(tc->tfd);
	tc->tfd = -1;
	tc->connecting = false;
	if (status == 0) {
		struct sockaddr_storage local, peer;
		socklen_t llen = sizeof(local), plen = sizeof(peer);

		if (getsockname(tc->fd, (struct sockaddr *)&local, &llen) ==
			    0 &&
		    getpeername(tc->fd, (struct sockaddr *)&peer, &plen) == 0)
			idm_prov_conn_set_names(tc->conn, (struct sockaddr *)&local,
					    (struct sockaddr *)&peer);
		tcp_set_events(tc, EPOLLIN | EPOLLRDHUP);
	} else {
		tc->down = tc->closed = true;
		if (tc->w.added)
			idm_prov_watch_del(tc->ctx, &tc->w);
		close(tc->fd);
		tc->fd = -1;
	}
	idm_prov_conn_connected(tc->conn, status);
}

static void connect_event(struct idm_prov_watch *w, uint32_t revents)
{
	struct tcp_conn *tc = IDM_PROV_CONTAINER_OF(w, struct tcp_conn, w);
	int err = 0;
	socklen_t len = sizeof(err);

	if (!tc->connecting) {
		conn_event(w, revents);
		return;
	}
	if (getsockopt(tc->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err == 0 && !(revents & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
		return;
	if (err == 0 && (revents & (EPOLLERR | EPOLLHUP)))
		err = ECONNREFUSED;
	if (err)
		idm_prov_conn_set_error(tc->conn, "connect to %s: %s",
				    idm_conn_peer_name(tc->conn), strerror(err));
	connect_done(tc, -err);
}

static void timer_event(struct idm_prov_watch *w, uint32_t revents)
{
	struct tcp_conn *tc = IDM_PROV_CONTAINER_OF(w, struct tcp_conn, tw);

	(void)revents;
	if (!tc->connecting)
		return;
	idm_prov_conn_set_error(tc->conn, "connect to %s: timed out",
			    idm_conn_peer_name(tc->conn));
	connect_done(tc, -ETIMEDOUT);
}

int tcp_connect(struct idm_conn *conn, const struct sockaddr *sa,
		socklen_t salen, int timeout_ms)
{
	struct itimerspec its = { 0 };
	struct tcp_conn *tc;
	int fd, r;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -errno;
	tcp_tune_socket(fd, idm_prov_priv(idm_prov_conn_provider(conn)));
	tc = tcp_conn_new(idm_prov_conn_ctx(conn), fd);
	if (!tc) {
		close(fd);
		return -ENOMEM;
	}
	tcp_conn_bind(tc, conn);
	tc->connecting = true;
	if (connect(fd, sa, salen) < 0 && errno != EINPROGRESS) {
		r = -errno;
		goto fail;
	}
	tc->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (tc->tfd < 0) {
		r = -errno;
		goto fail;
	}
	its.it_value.tv_sec = timeout_ms / 1000;
	its.it_value.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
	if (timeout_ms <= 0)
		its.it_value.tv_nsec = 1;
	timerfd_settime(tc->tfd, 0, &its, NULL);
	tc->wevents = EPOLLOUT;
	r = idm_prov_watch_add(tc->ctx, &tc->w, fd, EPOLLOUT, connect_event);
	if (r < 0)
		goto fail;
	r = idm_prov_watch_add(tc->ctx, &tc->tw, tc->tfd, EPOLLIN, timer_event);
	if (r < 0)
		goto fail;
	idm_prov_conn_set_priv(conn, tc);
	return 0;
fail:
	tcp_conn_destroy(tc);
	return r;
}
