/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_msgpool.c: registered message pools, and a connection's pools
 * through its phases. Calls nothing of the provider but the buffer sizes
 * (iser_keys.c). */
#ifndef IDM_ISER_MSGPOOL_H
#define IDM_ISER_MSGPOOL_H

#include "iser.h"

int iser_pool_init(struct iser_pool *p, struct ibv_pd *pd, uint32_t n,
		   uint32_t size);
void iser_pool_fini(struct iser_pool *p);
struct iser_msg *iser_pool_get(struct iser_pool *p);
/* Back to its pool, or a one-off message freed. */
void iser_pool_put(struct iser_msg *m);
/* A registered message for a control PDU larger than the pooled send
 * buffers (a big Text or NOP payload): rare, so registered per PDU. */
struct iser_msg *iser_msg_oneoff(struct ibv_pd *pd, uint32_t size);

/* The login-phase pools, made with the QP. */
int iser_pools_login(struct iser_conn *ic);
/* Allocate_Connection_Resources: the full feature phase pools. */
int iser_rsrc_ffp_alloc(struct iser_conn *ic);
/* Deallocate_Connection_Resources: false if they must stay (posted). */
bool iser_rsrc_ffp_free(struct iser_conn *ic);
/* Every pool of the connection, at its end. */
void iser_pools_fini(struct iser_conn *ic);

#endif
