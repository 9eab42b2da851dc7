/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_conn.c: the life of an iser_conn, and the handler of the failures
 * its layers raise (ic->on_fail, see iser_fail.c). */
#ifndef IDM_ISER_CONN_H
#define IDM_ISER_CONN_H

#include "iser.h"

/* A connection with its own nonblocking CM event channel. */
struct iser_conn *iser_conn_new(struct iser_prov *ip, struct idm_ctx *ctx,
				const struct iser_role *role);
/* Connection_Terminate: close the transport, take everything back. */
void iser_conn_terminate(struct idm_conn *c);
/* Tear down (if not yet) and free everything, the cm_id included. */
void iser_conn_destroy(struct iser_conn *ic);
/* The core's conn_free: destroy c's iser_conn. */
void iser_conn_free(struct idm_conn *c);

#endif
