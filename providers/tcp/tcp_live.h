/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_live.c: the dead-peer / stopped-reader watch of a busy connection.
 */
#ifndef LIBIDM_TCP_LIVE_H
#define LIBIDM_TCP_LIVE_H

#include "tcp.h"

/* Data went into the socket: watch it until the peer acknowledged all. */
void tcp_live_start(struct tcp_conn *tc);
static inline void tcp_live_sent(struct tcp_conn *tc)
{
	if (!tc->live_k && !tc->live_off)
		tcp_live_start(tc);
}
void tcp_live_stop(struct tcp_conn *tc);
/* ops->conn_move: from the old context's timer to the new one's (after
 * tc->ctx = dst) */
void tcp_live_move(struct tcp_conn *tc);
void tcp_live_init(struct tcp_knobs *k, struct idm_ctx *ctx);
void tcp_live_fini(struct tcp_knobs *k);

#endif
