/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The read buffer of a connection (tcp_ubuf.h): its size, its refill,
 * and giving it back.
 */
#include "tcp_ubuf.h"

#include <stdlib.h>
#include <sys/socket.h>

bool tcp_ubuf_fit(struct tcp_conn *tc)
{
	uint32_t cap = tcp_stage_cap(tc->ucap, tc->u_full);
	uint8_t *b;

	if (tc->ubuf && cap == tc->ucap)
		return true;
	/* empty (a read is only asked for then): no bytes to carry */
	b = malloc(cap);
	if (!b)
		return tc->ubuf != NULL; /* a bigger one would have been nice */
	free(tc->ubuf);
	tc->ubuf = b;
	tc->ucap = cap;
	return true;
}

/* The buffer is used up and the read that filled it was full: more is
 * waiting in the socket, so read it now, as the epoll engine would,
 * rather than a round later - a connection streaming data must not wait
 * for the others. (The ring batches the first read after the socket's
 * watch fired, which is where connections meet.) Not while answers to
 * what it held wait to be written under io_uring: the peer's next
 * commands wait on them, so the read goes to the ring with their write
 * (tcp_rx.c, "Answers before the next read"). */
void tcp_ubuf_refill(struct tcp_conn *tc)
{
	ssize_t n;

	(void)tcp_ubuf_fit(tc); /* it filled: doubles if it may (else as it is) */
	do
		n = recv(tc->fd, tc->ubuf, tc->ucap, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	tc->u_full = false;
	if (n > 0) {
		tc->u_beg = 0;
		tc->u_end = (uint32_t)n;
		tc->u_full = (size_t)n == tc->ucap;
	} else if (n == 0) {
		tc->u_err = -1;
	} else if (errno != EAGAIN && errno != EWOULDBLOCK) {
		tc->u_err = errno;
	}
}

size_t tcp_ubuf_trim(struct tcp_conn *tc)
{
	size_t freed = tc->ucap;

	if (tc->u_beg != tc->u_end || tc->u_want_rx || !tc->ubuf)
		return 0;
	free(tc->ubuf);
	tc->ubuf = NULL;
	tc->ucap = 0;
	tc->u_beg = tc->u_end = 0;
	return freed;
}

void tcp_ubuf_free(struct tcp_conn *tc)
{
	free(tc->ubuf);
	free(tc->u_iov);
	tc->ubuf = NULL;
	tc->u_iov = NULL;
}
