/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_engine_uring.c: the io_uring engine: the reads and writes of a
 * progress pass in one io_uring_enter (without liburing, a table whose open says so).
 * Reached only through its table, which tcp_engine.c chooses per context.
 */
#ifndef LIBIDM_TCP_ENGINE_URING_H
#define LIBIDM_TCP_ENGINE_URING_H

#include "tcp.h"

extern const struct tcp_engine_ops tcp_engine_uring;

#endif
