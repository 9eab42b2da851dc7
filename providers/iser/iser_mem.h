/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_mem.c: devices and their PDs, caller buffers' MRs, the registered
 * message pools and the memory windows of a connection. Calls nothing of
 * the provider. */
#ifndef IDM_ISER_MEM_H
#define IDM_ISER_MEM_H

#include "iser.h"

/* The context's own device for verbs, made (with a PD) on first use;
 * NULL when no slot or no PD is left. */
struct iser_dev *iser_dev_get(struct iser_prov *ip, struct ibv_context *verbs);
/* The context's own device for verbs if it has one yet, else NULL. */
struct iser_dev *iser_dev_find(struct iser_prov *ip, struct ibv_context *verbs);
/* A device of ip holding from's PD, for connections moved to ip's
 * context that keep the PD they were made in (iser_move.c): from's own
 * entry copied once and counted as a holder of the PD. NULL when ip has
 * no slot left. */
struct iser_dev *iser_dev_borrow(struct iser_prov *ip,
				 const struct iser_dev *from);
void iser_devs_close(struct iser_prov *ip);
/* buf registered in dev's PD (every region, on first use per device,
 * never per I/O), with the device's index in it for iser_buf_sges();
 * NULL when registration failed. */
const struct iser_bufreg *iser_buf_reg(struct iser_prov *ip,
				       struct iser_dev *dev,
				       struct idm_buf *buf, int *di);
/* Ranges below must lie in the buffer (the core checked them). */
/* How many regions [off, off+len) crosses: the SGEs it needs. */
uint32_t iser_buf_pieces(const struct iser_bufreg *r, size_t off,
			 uint32_t len);
/* SGEs for the next at most max pieces of [*off, *off + *len), one per
 * region crossed: returns how many, advances *off and *len past them and
 * sets *bytes to the bytes they cover. */
uint32_t iser_buf_sges(const struct iser_bufreg *r, int di, size_t *off,
		       uint32_t *len, struct ibv_sge *sge, uint32_t max,
		       uint32_t *bytes);
/* Initiator: the MR and address of [off, off+len) of buf, for one STag:
 * 0; -EOPNOTSUPP when the range crosses regions (segments not adjacent
 * in memory: one STag cannot name them), -ENOMEM when registration
 * failed. */
int iser_buf_range_mr(struct iser_prov *ip, struct iser_dev *dev,
		      struct idm_buf *buf, size_t off, uint32_t len,
		      struct ibv_mr **mr, uint8_t **addr);
void iser_buf_release(struct idm_prov *prov, struct idm_buf *buf);

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

/* A type-2 window from the connection's free list (allocated on
 * warm-up), and back. */
int iser_mw_get(struct iser_conn *ic, struct ibv_mw **out);
void iser_mw_put(struct iser_conn *ic, struct ibv_mw *mw);
/* Deallocate the free windows (with free_list, the list itself too). */
void iser_mws_dealloc(struct iser_conn *ic, bool free_list);

#endif
