/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_engine_epoll.c: the epoll engine: each connection's readv and sendmsg when the
 * core's epoll loop says its socket is ready (the fallback of every other).
 * Reached only through its table, which tcp_engine.c chooses per context.
 */
#ifndef LIBIDM_TCP_ENGINE_EPOLL_H
#define LIBIDM_TCP_ENGINE_EPOLL_H

#include "tcp.h"

extern const struct tcp_engine_ops tcp_engine_epoll;

#endif
