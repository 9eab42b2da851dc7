/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_zc.c: zero-copy Data-In (IDM_TCP_ZEROCOPY).
 */
#ifndef LIBIDM_TCP_ZC_H
#define LIBIDM_TCP_ZC_H

#include "tcp.h"

/* SO_ZEROCOPY on a target's socket when IDM_TCP_ZEROCOPY asks
 * (tc->zc_min set only if the kernel took it) */
void tcp_zc_bind(struct tcp_conn *tc, struct tcp_knobs *k);


/* e, a Data-In PDU just prepared: move its header and trailer to a slot
 * and mark it zero-copy; false (sent by copy) when no slot is free. */
bool tcp_zc_pin(struct tcp_conn *tc, struct tcp_txpdu *e);
/* e (with a slot) left the ring: its slot waits for the last call. */
void tcp_zc_retire(struct tcp_conn *tc, struct tcp_txpdu *e);
/* d's last PDU left: true if its completion must wait for the kernel
 * (d is then on tc->zc_wait, holding its task). */
bool tcp_zc_hold(struct tcp_conn *tc, struct tcp_txd *d);
/* One sendmsg of the prepared write, MSG_ZEROCOPY if tc->tx_zc. */
ssize_t tcp_zc_sendmsg(struct tcp_conn *tc, const struct msghdr *mh);
/* io_uring engine: the extra flags of the sendmsg being submitted
 * (MSG_ZEROCOPY or 0), then its result: true if it must be redone by
 * copy (ENOBUFS), the engine retrying it as after EINTR. */
int tcp_zc_uring_flags(struct tcp_conn *tc);
bool tcp_zc_uring_result(struct tcp_conn *tc, int res);
/* Read the error queue (EPOLLERR): >0 if notifications were there,
 * 0 if the queue was empty (EPOLLERR means a socket error), <0 error. */
int tcp_zc_reap(struct tcp_conn *tc);
/* Held completions of a task being freed / of a closing connection. */
void tcp_zc_cancel_task(struct tcp_conn *tc, struct idm_task *t);
void tcp_zc_drop(struct tcp_conn *tc);
/* Before the socket closes: reset it if zero-copy calls are not done. */
void tcp_zc_before_close(struct tcp_conn *tc);

#endif
