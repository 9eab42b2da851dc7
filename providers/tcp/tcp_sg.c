/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Scatter-gather buffers (idm_buf_create_iov): the few places where the
 * provider touches payload bytes itself - the data digest, the copy of a
 * half-sent PDU of a freed task, the copy of staged unsolicited data -
 * walk the segments of a buffer range instead of one address. Sending and
 * receiving hand the segments to the kernel (tcp_tx.c, tcp_rx.c).
 */
#include "tcp.h"
#include "crc32c.h"

#include <string.h>

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

void tcp_sg_copy_out(uint8_t *dst, const struct idm_buf *b, size_t off, size_t len)
{
	struct iovec v[SG_STEP];
	size_t covered;
	int n;

	while (len && (n = idm_prov_buf_iov(b, off, len, v, SG_STEP, &covered)) > 0) {
		for (int i = 0; i < n; i++) {
			memcpy(dst, v[i].iov_base, v[i].iov_len);
			dst += v[i].iov_len;
		}
		off += covered;
		len -= covered;
	}
}

void tcp_sg_copy_in(const struct idm_buf *b, size_t off, const uint8_t *src, size_t len)
{
	struct iovec v[SG_STEP];
	size_t covered;
	int n;

	while (len && (n = idm_prov_buf_iov(b, off, len, v, SG_STEP, &covered)) > 0) {
		for (int i = 0; i < n; i++) {
			memcpy(v[i].iov_base, src, v[i].iov_len);
			src += v[i].iov_len;
		}
		off += covered;
		len -= covered;
	}
}

uint32_t tcp_sg_unsol_take(struct idm_prov_unsol *u, const struct idm_prov_xfer *x)
{
	struct iovec v[SG_STEP];
	uint32_t got = 0, at = 0;
	size_t covered;
	int n;

	if (x->addr)
		return idm_prov_unsol_take(u, x->offset, x->length, x->addr);
	/* segment by segment: each piece takes its own command offsets */
	while (at < x->length &&
	       (n = idm_prov_buf_iov(x->buf, x->buf_off + at, x->length - at, v, SG_STEP,
				     &covered)) > 0) {
		for (int i = 0; i < n; i++) {
			got += idm_prov_unsol_take(u, x->offset + at, (uint32_t)v[i].iov_len,
						   v[i].iov_base);
			at += (uint32_t)v[i].iov_len;
		}
	}
	return got;
}

void tcp_get_copy_in(const struct idm_prov_xfer *x, uint32_t off, const uint8_t *src,
		     uint32_t n)
{
	size_t d = off - x->offset;

	if (x->addr)
		memcpy(x->addr + d, src, n);
	else
		tcp_sg_copy_in(x->buf, x->buf_off + d, src, n);
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
