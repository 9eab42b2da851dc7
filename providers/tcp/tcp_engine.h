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
 *
 * Each engine is an ops table (struct tcp_engine_ops, tcp.h) in a file
 * of its own (tcp_engine_epoll.c, tcp_engine_uring.c), chosen once per
 * context (tcp_engine.c) and copied into each connection (tc->eops):
 * the receive machine, the send queue and the connection call an engine
 * only through it, and an engine calls down into them (tcp_rx_run,
 * tcp_tx_prepare, ...), never the other way.
 * The bytes the io_uring engine read ahead (tc->ubuf) are read out the
 * same way by either engine (tcp_ubuf.h): a connection that moved from
 * an io_uring context to an epoll one may still hold some.
 */
#ifndef LIBIDM_TCP_ENGINE_H
#define LIBIDM_TCP_ENGINE_H

#include <libidm/provider.h>

/* IDM_TCP_ENGINE unset or "auto": io_uring where the kernel lets us
 * (1), or epoll (0). bench/run on a 2-core host: io_uring wins with many
 * sessions (4k-randread-64x1: 1.1 syscalls per I/O against 3.0, about
 * 20% less CPU per I/O) but loses at QD1 and for 1 MiB reads, so epoll
 * stays the default for now. */
#define TCP_ENGINE_AUTO_URING 0

struct tcp_conn;
struct tcp_knobs;

/* The context's engine by IDM_TCP_ENGINE (k->eops, k->eng). */
void tcp_engine_init(struct tcp_knobs *k, struct idm_ctx *ctx);
void tcp_engine_fini(struct tcp_knobs *k);
/* tc joins the engine of its context k (NULL: epoll), at bind. */
void tcp_engine_bind(struct tcp_conn *tc, const struct tcp_knobs *k);
/* ops->conn_move: after tc->ctx is the new context. */
void tcp_engine_move(struct tcp_conn *tc);

#endif
