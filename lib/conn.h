/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/conn.c: a connection's life in its context. */
#ifndef LIBIDM_CONN_H
#define LIBIDM_CONN_H

#include "core.h"

/* A context's list of connections: add at the head, remove. */
void idmp_conn_list_add(struct idm_ctx *ctx, struct idm_conn *c);
void idmp_conn_list_del(struct idm_ctx *ctx, struct idm_conn *c);
struct idm_conn *idmp_conn_alloc(struct idm_ctx *ctx, struct idm_prov *prov,
				 enum idm_role role);
/* Free a connection the caller never got (its setup failed). */
void idmp_conn_discard(struct idm_conn *c);
/* Free a connection now, wherever called from. */
void idmp_conn_free(struct idm_conn *c);

#endif
