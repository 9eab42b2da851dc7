/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sockets of the TCP provider: listening and accepting (target),
 * connecting with a timeout (initiator), the epoll watch of a connection,
 * and tearing a connection down after a failure or Connection_Terminate.
 */
#include "tcp.h"
#include "prov_env.h"

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
#include <unistd.h>

struct tcp_listener {
	struct idm_prov_listener *l;
	int fd;
	int port;
	struct idm_prov_watch w;
};

static void conn_event(struct idm_prov_watch *w, uint32_t revents)
{
	struct tcp_conn *tc = tcp_container_of(w, struct tcp_conn, w);

	if (revents & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP)) {
		tc->rx_dry = false;
		tcp_rx_run(tc);
	}
	if (!tc->closed && (revents & EPOLLOUT))
		tcp_tx_flush(tc);
}

/* The IDM_TCP_* knobs, once per context (providers/tcp/README.md). */
int tcp_init(struct idm_prov *prov)
{
	struct tcp_knobs *k = malloc(sizeof(*k));

	if (!k)
		return -ENOMEM;
	k->user_timeout_ms = prov_env_int("IDM_TCP_USER_TIMEOUT_MS", 15000, 0, 3600000);
	k->keepidle = prov_env_int("IDM_TCP_KEEPIDLE", 10, 0, 32767);
	k->keepintvl = prov_env_int("IDM_TCP_KEEPINTVL", 2, 0, 32767);
	k->keepcnt = prov_env_int("IDM_TCP_KEEPCNT", 3, 0, 127);
	idm_prov_set_priv(prov, k);
	return 0;
}

void tcp_fini(struct idm_prov *prov)
{
	free(idm_prov_priv(prov));
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
	 * nothing to send. TCP_USER_TIMEOUT bounds how long sent data may
	 * stay unacknowledged; keepalive probes an idle connection. 0 leaves
	 * the kernel's default for that knob.
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
	if (k->user_timeout_ms > 0)
		setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &k->user_timeout_ms,
			   sizeof(k->user_timeout_ms));
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
	idm_sq_init(&tc->gen);
	idm_pool_init(&tc->txd_pool, sizeof(struct tcp_txd), TCP_TXD_CHUNK);
	tc->stage = malloc(TCP_STAGE);
	tc->rxbuf = malloc(TCP_LOGIN_DSL);
	if (!tc->stage || !tc->rxbuf) {
		free(tc->stage);
		free(tc->rxbuf);
		free(tc);
		return NULL;
	}
	tc->rxcap = TCP_LOGIN_DSL;
	return tc;
}

/* Begin receiving (and sending) on a connected socket. */
int tcp_conn_start(struct tcp_conn *tc)
{
	tc->wevents = EPOLLIN | EPOLLRDHUP;
	return idm_prov_watch_add(tc->ctx, &tc->w, tc->fd, tc->wevents, conn_event);
}

void tcp_set_events(struct tcp_conn *tc, uint32_t events)
{
	if (tc->closed || events == tc->wevents || !tc->w.added)
		return;
	if (idm_prov_watch_mod(tc->ctx, &tc->w, events) == 0)
		tc->wevents = events;
}

uint32_t tcp_new_ttt(struct tcp_conn *tc)
{
	uint32_t t = tc->next_ttt++;

	if (t == IDM_ISCSI_RESERVED_TAG)
		t = tc->next_ttt++;
	return t;
}

void tcp_dead_itt_add(struct tcp_conn *tc, uint32_t itt)
{
	tc->dead_itt[tc->dead_pos++ % TCP_DEAD_ITTS] = itt;
}

bool tcp_dead_itt(const struct tcp_conn *tc, uint32_t itt)
{
	unsigned n =
		tc->dead_pos < TCP_DEAD_ITTS ? tc->dead_pos : TCP_DEAD_ITTS;

	for (unsigned i = 0; i < n; i++)
		if (tc->dead_itt[i] == itt)
			return true;
	return false;
}

void tcp_enter_ffp(struct tcp_conn *tc)
{
	tc->ffp = true;
	tc->hd = tc->params->header_digest;
	tc->dd = tc->params->data_digest;
}


/* Close the socket and let go of every transfer and task (no callbacks). */
void tcp_conn_close(struct tcp_conn *tc)
{
	if (tc->closed)
		return;
	tc->closed = true;
	if (tc->tw.added)
		idm_prov_watch_del(tc->ctx, &tc->tw);
	if (tc->tfd >= 0)
		close(tc->tfd);
	tc->tfd = -1;
	if (tc->w.added)
		idm_prov_watch_del(tc->ctx, &tc->w);
	if (tc->fd >= 0)
		close(tc->fd);
	tc->fd = -1;
	idm_prov_defer_cancel(tc->ctx, &tc->rx_defer);
	idm_prov_defer_cancel(tc->ctx, &tc->tx_defer);
	tcp_tx_drop_all(tc);
	/* the core runs our task_free for each task (tcp_tgt/ini_task_release) */
	if (tc->conn)
		idm_prov_conn_release_tasks(tc->conn);
}

void tcp_conn_fail(struct tcp_conn *tc, int err, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	if (tc->closed)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (tc->conn)
		idm_prov_conn_set_error(tc->conn, "%s", msg);
	tcp_conn_close(tc);
	if (tc->conn)
		idm_prov_conn_failed(tc->conn, err);
}

void tcp_conn_destroy(struct tcp_conn *tc)
{
	if (!tc)
		return;
	tcp_conn_close(tc);
	tcp_tx_free_pool(tc);
	free(tc->bounce);
	free(tc->stage);
	free(tc->rxbuf);
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

static void listen_event(struct idm_prov_watch *w, uint32_t revents)
{
	struct tcp_listener *tl = tcp_container_of(w, struct tcp_listener, w);

	(void)revents;
	for (int i = 0; i < 64; i++) {
		int fd = accept4(tl->fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED)
				idm_prov_warn(idm_prov_listener_ctx(tl->l), "tcp: accept: %s",
					  strerror(errno));
			return;
		}
		accept_one(tl, fd);
	}
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
	if (getsockname(fd, (struct sockaddr *)&bound, &blen) < 0) {
		r = -errno;
		free(tl);
		return r;
	}
	if (bound.ss_family == AF_INET)
		tl->port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
	else if (bound.ss_family == AF_INET6)
		tl->port = ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
	r = idm_prov_watch_add(idm_prov_listener_ctx(l), &tl->w, tl->fd, EPOLLIN,
			   listen_event);
	if (r < 0) {
		free(tl);
		return r;
	}
	idm_prov_listener_set_priv(l, tl);
	return 0;
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
	close(tl->fd);
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
		tc->closed = true;
		if (tc->w.added)
			idm_prov_watch_del(tc->ctx, &tc->w);
		close(tc->fd);
		tc->fd = -1;
	}
	idm_prov_conn_connected(tc->conn, status);
}

static void connect_event(struct idm_prov_watch *w, uint32_t revents)
{
	struct tcp_conn *tc = tcp_container_of(w, struct tcp_conn, w);
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
	struct tcp_conn *tc = tcp_container_of(w, struct tcp_conn, tw);

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
