/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_tx.c: the send queue, its ring of prepared PDUs, cancel.
 */
#ifndef LIBIDM_TCP_TX_H
#define LIBIDM_TCP_TX_H

#include "tcp.h"

void tcp_tx_queue(struct tcp_conn *tc, struct tcp_txd *d);
int tcp_tx_ctrl(struct tcp_conn *tc, const uint8_t *bhs, const void *ahs,
		size_t ahs_len, const void *data, size_t data_len,
		struct idm_task *task, const uint8_t *ext_data,
		uint32_t ext_len);
/* The same with the external data at sg_off of a scatter-gather buffer
 * (a SCSI Command's immediate data spanning segments). */
int tcp_tx_ctrl_sg(struct tcp_conn *tc, const uint8_t *bhs, const void *ahs,
		   size_t ahs_len, struct idm_task *task, const struct idm_buf *sg,
		   size_t sg_off, uint32_t len);
void tcp_tx_kick(struct tcp_conn *tc);
/* One write in two halves (the epoll engine's flush calls both in turn,
 * the io_uring engine with its submission between): the iovecs of what
 * is ready (count; 0: nothing to write; <0: the connection failed), then
 * what the write did (n bytes, or -1 with err). Returns true when more
 * may be written now. short_write: fewer bytes went than were given. */
int tcp_tx_prepare(struct tcp_conn *tc, struct iovec *iov);
bool tcp_tx_sent(struct tcp_conn *tc, ssize_t n, int err, bool short_write);
/* tcp_tx_sent of n >= 0 bytes in its two steps: the bytes counted into
 * the ring (no callback runs: the io_uring engine does it as the write
 * completes, so that a task cancelled before step two sees what went
 * out), then the PDUs that left retired, completions and all. */
void tcp_tx_account(struct tcp_conn *tc, size_t n);
bool tcp_tx_retire(struct tcp_conn *tc, bool short_write);
void tcp_tx_cancel_task(struct tcp_conn *tc, struct idm_task *t);
void tcp_tx_drop_all(struct tcp_conn *tc);
/* ops->conn_stats: the send queue's depth, counted when asked */
void tcp_tx_stats(struct idm_conn *conn, struct idm_prov_stats *st);

/* PDUs wait to be written: queued, or in the send ring and not all sent
 * (a write is due; answers go before the next read, tcp_rx.c) */
static inline bool tcp_tx_pending(const struct tcp_conn *tc)
{
	return tc->r_count || !idm_sq_empty(&tc->gen);
}

#endif
