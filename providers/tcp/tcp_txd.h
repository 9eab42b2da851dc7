/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_txd.c: the send queue's descriptors, their pool and its bound.
 */
#ifndef LIBIDM_TCP_TXD_H
#define LIBIDM_TCP_TXD_H

#include "tcp.h"

#include <string.h>

/* Until tcp_conn_bind: nothing is queued before the core made the conn. */
extern const struct idm_prov_send_limits tcp_txd_default_limits;

static inline const struct idm_prov_send_limits *
tcp_txd_limits(const struct tcp_conn *tc)
{
	return tc->limits ? tc->limits : &tcp_txd_default_limits;
}

/* Input crossed a mark of the queue: stop it (EPOLLIN off), resume it
 * (and read what is already staged). */
void tcp_txd_rx_stop(struct tcp_conn *tc);
void tcp_txd_rx_resume(struct tcp_conn *tc);

/* NULL when out of memory; counted into the queue until tcp_txd_put.
 * Inline, as tcp_txd_put: a few per PDU on the hot path. */
static inline struct tcp_txd *tcp_txd_get(struct tcp_conn *tc)
{
	struct tcp_txd *d = idm_pool_get(&tc->txd_pool);
	uint8_t *cbuf;
	size_t ccap;

	if (!d)
		return NULL;
	tc->q_entries++;
	/* keep the control buffer for reuse, reset the rest */
	cbuf = d->cbuf;
	ccap = d->ccap;
	memset(d, 0, sizeof(*d));
	d->cbuf = cbuf;
	d->ccap = ccap;
	return d;
}

/* d no longer holds its task (its count of queued txds drops). */
static inline void tcp_txd_forget_task(struct tcp_txd *d)
{
	d->tt->ntxd--;
	d->task = NULL;
	d->tt = NULL;
}

static inline void tcp_txd_put(struct tcp_conn *tc, struct tcp_txd *d)
{
	if (d->task)
		tcp_txd_forget_task(d);
	tc->q_entries--;
	tc->q_bytes -= d->qbytes;
	d->qbytes = 0;
	idm_pool_put(&tc->txd_pool, d);
	if (tc->rx_stopped &&
	    idm_prov_sq_resume_input(tcp_txd_limits(tc), tc->q_entries,
				     tc->q_bytes))
		tcp_txd_rx_resume(tc);
}

/* d joined the queue (tcp_tx_queue): input stops above the high mark. */
static inline void tcp_txd_queued(struct tcp_conn *tc)
{
	if (!tc->rx_stopped &&
	    idm_prov_sq_stop_input(tcp_txd_limits(tc), tc->q_entries,
				   tc->q_bytes))
		tcp_txd_rx_stop(tc);
}

/* Send_Control from the caller: -EAGAIN when the send queue is full. */
int tcp_txd_admit(struct tcp_conn *tc, const uint8_t *bhs, size_t ahs_len,
		  size_t data_len);
/* d's Data-In left (and, zero-copy, the kernel let go of its
 * pages): report it to the core. false: the connection closed under the
 * callback. */
bool tcp_txd_datain_complete(struct tcp_conn *tc, struct tcp_txd *d);
void tcp_txd_free_pool(struct tcp_conn *tc);

#endif
