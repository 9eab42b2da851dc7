/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_move.c: a connection handed to another context. */
#ifndef IDM_ISER_MOVE_H
#define IDM_ISER_MOVE_H

#include "iser.h"

/* ops->conn_move: conn now belongs to idm_prov_conn_ctx(conn); its
 * watches and deferred items go there from src (a context of the same
 * domain: the core checked). 0; -EOPNOTSUPP (on a shared receive queue),
 * -EBUSY (still connecting), -ENOTCONN, or the errno of a watch that
 * could not be added; on failure nothing moved. */
int iser_conn_move(struct idm_conn *conn, struct idm_ctx *src);

#endif
