/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A connection's state as every layer may change it, calling nothing of
 * the provider above (only the read buffer's trim): the socket watch's
 * events, TTTs, freed ITTs, full feature phase, the idle trim, and the
 * raising of a failure. A failure is a flag and a deferred item, not a
 * call up into the socket's teardown: receive, transmit, zero copy,
 * liveness and the engines raise it in the middle of their own work, and
 * tcp_conn.c tears the connection down once they are out of it.
 */
#include "tcp.h"
#include "tcp_state.h"
#include "tcp_ubuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>

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
	tc->closed = true;
	tc->fail_err = err;
	/* fn: tcp_conn.c's teardown, set when the connection was made */
	idm_prov_defer(tc->ctx, &tc->fail_defer, tc->fail_defer.fn);
}

void tcp_set_events(struct tcp_conn *tc, uint32_t events)
{
	if (tc->closed || events == tc->wevents || !tc->w.added)
		return;
	if (idm_prov_watch_mod(tc->ctx, &tc->w, events) == 0)
		tc->wevents = events;
}

void tcp_watch_update(struct tcp_conn *tc)
{
	/* EPOLLRDHUP goes with EPOLLIN: a peer's FIN is level-triggered and
	 * would wake us on every pass while input is stopped */
	uint32_t ev = tc->rx_stopped ? 0 : EPOLLIN | EPOLLRDHUP;

	if (tc->tx_blocked)
		ev |= EPOLLOUT;
	tcp_set_events(tc, ev);
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


static int any_task(struct idm_task *t, void *arg)
{
	(void)t;
	(void)arg;
	return 1;
}

/* A NOP arrived: if the connection has no task it is idle (pings are
 * what an idle session exchanges, every few seconds at most). Give back
 * what it grew while busy - send ring, stage, a large rx buffer; they
 * come back with its next I/O. Buffers still in use stay. */
void tcp_conn_trim(struct tcp_conn *tc)
{
	size_t freed = 0;

	if (tc->closed || !tc->conn ||
	    idm_prov_conn_foreach_task(tc->conn, any_task, NULL))
		return;
	if (!tc->r_count) {
		/* queued PDUs (the NOP's answer) wait in tc->gen, not here */
		freed += tc->r_cap * sizeof(*tc->ring) + tc->bounce_cap;
		free(tc->ring);
		tc->ring = NULL;
		tc->r_cap = tc->r_head = 0;
		free(tc->bounce);
		tc->bounce = NULL;
		tc->bounce_cap = 0;
	}
	if (tc->s_beg == tc->s_end) {
		freed += tc->stage ? tc->scap : 0;
		free(tc->stage);
		tc->stage = NULL;
		tc->scap = 0;
		tc->s_grow = false;
		tc->ffp_rx = false;
		tc->s_beg = tc->s_end = 0;
	}
	freed += tcp_ubuf_trim(tc);
	if (tc->rxcap > TCP_RXBUF_MIN) {
		freed += tc->rxcap;
		free(tc->rxbuf);
		tc->rxbuf = NULL;
		tc->rxcap = 0;
	}
	if (freed)
		idm_prov_dbg(tc->ctx, "tcp: %s idle: %zu buffer bytes given back",
			     idm_conn_peer_name(tc->conn), freed);
}
