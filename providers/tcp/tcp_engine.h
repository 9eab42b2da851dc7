/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The I/O engine of a context's TCP connections (IDM_TCP_ENGINE).
 *
 * epoll: each connection reads (readv) and writes (sendmsg) itself when
 * the core's epoll loop says its socket is ready: a syscall per read and
 * per write of each connection.
 *
 * io_uring: readiness still comes from the core's epoll loop (the socket
 * watches are the same, so idm_ctx_get_fd() and connection moves do not
 * change), but the reads and writes of all connections that want one in a
 * progress pass go to the kernel together, in one io_uring_enter at the
 * end of the pass. Every operation carries MSG_DONTWAIT, so the kernel
 * completes it inside that call (data, a short count or -EAGAIN) and
 * never touches the memory it names afterwards: no operation outlives the
 * call that submitted it, and closing a connection, freeing a task or
 * moving a connection never races the kernel. Reads land in a buffer of
 * the connection's own (ubuf), from which the receive machine copies as
 * it would from a socket; writes take the same iovecs sendmsg did. A
 * read that filled the buffer is followed by a plain recv when the
 * buffer is used up (more is waiting), and a large payload is read in
 * place by readv, both as under epoll.
 *
 * A context whose ring cannot be made (no io_uring in the kernel, a
 * seccomp profile refusing it, the memlock limit) uses epoll and says why
 * once (tcp_engine_init).
 */
#ifndef LIBIDM_TCP_ENGINE_H
#define LIBIDM_TCP_ENGINE_H

#include <libidm/provider.h>

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

/* IDM_TCP_ENGINE unset or "auto": io_uring where the kernel lets us
 * (1), or epoll (0). bench/run on a 2-core host: io_uring wins with many
 * sessions (4k-randread-64x1: 1.1 syscalls per I/O against 3.0, about
 * 20% less CPU per I/O) but loses at QD1 and for 1 MiB reads, so epoll
 * stays the default for now. */
#define TCP_ENGINE_AUTO_URING 0

struct tcp_conn;
struct tcp_knobs;
struct tcp_uring;

/* The context's engine by IDM_TCP_ENGINE (k->uring: NULL for epoll). */
void tcp_engine_init(struct tcp_knobs *k, struct idm_ctx *ctx);
void tcp_engine_fini(struct tcp_knobs *k);

/* The receive machine's read: like readv() on the socket (bytes, 0 at
 * end of stream, -1 with errno, EAGAIN when nothing is there yet). With
 * io_uring, EAGAIN queues a read for the end of the pass; its completion
 * runs the receive machine again. */
ssize_t tcp_engine_readv(struct tcp_conn *tc, const struct iovec *iov, int cnt);
/* The send queue has something to write (io_uring only). */
void tcp_uring_want_tx(struct tcp_conn *tc);
/* The send ring changed under an unsubmitted write (a task's PDUs
 * cancelled, the queue dropped): prepare the write again. */
void tcp_uring_tx_changed(struct tcp_conn *tc);
/* The connection closed or goes to another context: off the lists. */
void tcp_uring_forget(struct tcp_conn *tc);
/* A write result left pending by a move to an epoll context: act on it
 * (tcp_tx_flush, first). Returns whether the flush may go on. */
bool tcp_uring_settle_tx(struct tcp_conn *tc);
/* ops->conn_move: after tc->ctx is the new context. */
void tcp_uring_move(struct tcp_conn *tc);
/* Idle connection: give back the read buffer if empty. */
size_t tcp_uring_trim(struct tcp_conn *tc);
/* tcp_conn_destroy: the connection's engine memory. */
void tcp_uring_free(struct tcp_conn *tc);

#endif
