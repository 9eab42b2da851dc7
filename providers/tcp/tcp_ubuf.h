/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The read buffer of a connection (tc->ubuf): the io_uring engine's
 * reads land in it, and the receive machine copies from it as it would
 * from a socket. Read out the same way by either engine: a connection
 * that moved from an io_uring context to an epoll one may still hold
 * bytes (or the end of the stream) in it.
 */
#ifndef LIBIDM_TCP_UBUF_H
#define LIBIDM_TCP_UBUF_H

#include "tcp.h"

#include <errno.h>
#include <string.h>

/* tcp_ubuf_take: the buffer holds nothing, nor the stream's end */
#define TCP_UBUF_NONE (-2)

/* The buffer, taken with the first read (and again after an idle
 * connection gave it back, tcp_ubuf_trim), sized as the stage is; false
 * if there is none. */
bool tcp_ubuf_fit(struct tcp_conn *tc);
/* The buffer is used up and the read that filled it was full: read
 * again now, with recv() (tcp_ubuf_may_refill says when). */
void tcp_ubuf_refill(struct tcp_conn *tc);
/* Idle connection: give back the buffer if empty. Bytes freed. */
size_t tcp_ubuf_trim(struct tcp_conn *tc);
/* tcp_conn_destroy: the buffer and the io_uring engine's iovecs. */
void tcp_ubuf_free(struct tcp_conn *tc);

static inline bool tcp_ubuf_may_refill(const struct tcp_conn *tc)
{
	return tc->u_beg == tc->u_end && tc->u_full && tc->ubuf && !tc->u_err;
}

/* A read served from the buffer: bytes, 0 at the end of the stream, -1
 * with errno after the read that failed; TCP_UBUF_NONE if it holds none
 * of these (the engine reads the socket). */
static inline ssize_t tcp_ubuf_take(struct tcp_conn *tc,
				    const struct iovec *iov, int cnt)
{
	size_t got = 0;

	if (tc->u_beg < tc->u_end) {
		for (int i = 0; i < cnt && tc->u_beg < tc->u_end; i++) {
			size_t n = tc->u_end - tc->u_beg;

			if (n > iov[i].iov_len)
				n = iov[i].iov_len;
			memcpy(iov[i].iov_base, tc->ubuf + tc->u_beg, n);
			tc->u_beg += (uint32_t)n;
			got += n;
		}
		if (tc->u_beg == tc->u_end)
			tc->u_beg = tc->u_end = 0;
		return (ssize_t)got;
	}
	if (tc->u_err) {
		if (tc->u_err < 0)
			return 0; /* end of stream */
		errno = tc->u_err;
		return -1;
	}
	return TCP_UBUF_NONE;
}

#endif
