/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_rx.c: the receive machine, and where it places a data segment.
 */
#ifndef LIBIDM_TCP_RX_H
#define LIBIDM_TCP_RX_H

#include "tcp.h"

void tcp_rx_run(struct tcp_conn *tc);
/* The task is going away: stop placing the PDU being received for it. */
void tcp_rx_forget_task(struct tcp_conn *tc, struct idm_task *t);
void tcp_rx_deliver(struct tcp_conn *tc, struct idm_task *task);
void tcp_rx_defer_fn(struct idm_prov_defer *d);

/* Payloads up to this are copied out of a read buffer of `cap` bytes,
 * longer ones read in place (see TCP_STAGE). */
static inline uint32_t tcp_rx_copy_max(uint32_t cap)
{
	return cap / 4 > TCP_COPY_MIN ? cap / 4 : TCP_COPY_MIN;
}


/* The data segment being received goes straight into byte boff of buf;
 * addr: their address when it lies in one segment, else NULL. */
static inline void tcp_rx_place(struct tcp_conn *tc, const struct idm_buf *buf,
				size_t boff, uint8_t *addr)
{
	tc->rdst = DST_PLACE;
	tc->rptr = addr;
	tc->rbuf = addr ? NULL : buf;
	tc->rboff = boff;
}

/* ... into Get_Data range x, from byte `off` of the write data on. */
static inline void tcp_rx_place_get(struct tcp_conn *tc, const struct idm_prov_xfer *x,
				    uint32_t off)
{
	size_t d = off - x->offset;

	tcp_rx_place(tc, x->buf, x->buf_off + d, x->addr ? x->addr + d : NULL);
}

#endif
