/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_move.c: ops->conn_move.
 */
#ifndef LIBIDM_TCP_MOVE_H
#define LIBIDM_TCP_MOVE_H

#include "tcp.h"

int tcp_conn_move(struct idm_conn *conn, struct idm_ctx *src);

#endif
