/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_txd.c: the send queue's descriptors, their pool and its bound.
 */
#ifndef LIBIDM_TCP_TXD_H
#define LIBIDM_TCP_TXD_H

#include "tcp.h"

/* NULL when out of memory; counted into the queue until tcp_txd_put. */
struct tcp_txd *tcp_txd_get(struct tcp_conn *tc);
void tcp_txd_put(struct tcp_conn *tc, struct tcp_txd *d);
/* d no longer holds its task (its count of queued txds drops). */
void tcp_txd_forget_task(struct tcp_txd *d);
/* d joined the queue (tcp_tx_queue): input stops above the high mark. */
void tcp_txd_queued(struct tcp_conn *tc);
/* Send_Control from the caller: -EAGAIN when the send queue is full. */
int tcp_txd_admit(struct tcp_conn *tc, const uint8_t *bhs, size_t ahs_len,
		  size_t data_len);
/* d's Data-In left (and, zero-copy, the kernel let go of its
 * pages): report it to the core. false: the connection closed under the
 * callback. */
bool tcp_txd_datain_complete(struct tcp_conn *tc, struct tcp_txd *d);
void tcp_txd_free_pool(struct tcp_conn *tc);

#endif
