/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/conn_move.c: a connection moving between contexts. */
#ifndef LIBIDM_CONN_MOVE_H
#define LIBIDM_CONN_MOVE_H

#include "core.h"

/* Lock the context a connection is on, which another thread may be
 * moving it away from; returns the context locked. */
struct idm_ctx *idmp_conn_lock(const struct idm_conn *c);

#endif
