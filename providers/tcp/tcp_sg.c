/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Scatter-gather buffers (idm_buf_create_iov): the data digest walks the
 * segments of a buffer range instead of one address, and a Data-In source
 * takes the address path when its range lies in one segment. Sending and
 * receiving hand the segments to the kernel (tcp_tx.c, tcp_rx.c); the
 * provider's own copies use the SDK's idm_prov_buf_copy_in/out.
 */
#include "tcp.h"
#include "tcp_sg.h"
#include "crc32c.h"

/* iovecs asked from the core per step: the walk resumes after them */
#define SG_STEP 16

uint32_t tcp_sg_crc32c(uint32_t crc, const struct idm_buf *b, size_t off, size_t len)
{
	struct iovec v[SG_STEP];
	size_t covered;
	int n;

	while (len && (n = idm_prov_buf_iov(b, off, len, v, SG_STEP, &covered)) > 0) {
		for (int i = 0; i < n; i++)
			crc = tcp_crc32c(crc, v[i].iov_base, v[i].iov_len);
		off += covered;
		len -= covered;
	}
	return crc;
}

void tcp_txd_set_src(struct tcp_txd *d, const struct idm_buf *buf, size_t buf_off,
		     uint32_t length)
{
	struct iovec v;
	size_t covered;

	/* one segment holds it all (always so for a plain buffer): the
	 * address path, no segment walk per PDU */
	if (idm_prov_buf_iov(buf, buf_off, length, &v, 1, &covered) == 1 &&
	    covered == length) {
		d->base = v.iov_base;
		d->sg = NULL;
	} else {
		d->base = NULL;
		d->sg = buf;
		d->sg_off = buf_off;
	}
}
