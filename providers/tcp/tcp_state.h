/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_state.c: what every layer of a connection may change in its state
 * without calling back up: the socket watch's events, target transfer
 * tags, the ITTs the caller freed, full feature phase, the idle trim, and
 * a failure, raised here and torn down later (tcp_conn.c, on fail_defer).
 */
#ifndef LIBIDM_TCP_STATE_H
#define LIBIDM_TCP_STATE_H

#include "tcp.h"

/* Raise a failure: the connection does no more I/O from now on
 * (tc->closed), its error message is set, and tcp_conn.c closes it and
 * reports err to the core from the context's deferred items, outside
 * whatever layer noticed. The first failure wins. */
void tcp_conn_fail(struct tcp_conn *tc, int err, const char *fmt, ...)
	IDM_PROV_PRINTF(3, 4);
void tcp_set_events(struct tcp_conn *tc, uint32_t events);
/* Poll for what the state asks: input unless rx_stopped, output while
 * tx_blocked. */
void tcp_watch_update(struct tcp_conn *tc);
uint32_t tcp_new_ttt(struct tcp_conn *tc);
void tcp_enter_ffp(struct tcp_conn *tc);
/* After a NOP (outside the rx buffer's use): give back idle buffers. */
void tcp_conn_trim(struct tcp_conn *tc);
/* Remember / look up an ITT the caller freed: its late PDUs are dropped. */
void tcp_dead_itt_add(struct tcp_conn *tc, uint32_t itt);
bool tcp_dead_itt(const struct tcp_conn *tc, uint32_t itt);

#endif
