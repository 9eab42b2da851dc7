/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_reg.c: the registration lookup of caller buffers (their MRs in a
 * device's PD) and the SGEs and STag MRs of their ranges. Calls nothing
 * of the provider.
 *
 * iser_buf_reg() is the one way in: it answers with the registration and
 * the device's slot in it, however the registration is stored. The
 * functions below it work on that answer alone, never on the buffer, so
 * a registration cache keyed by address range can stand behind
 * iser_buf_reg() and iser_buf_release() without a caller changing. */
#ifndef IDM_ISER_REG_H
#define IDM_ISER_REG_H

#include "iser.h"

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
/* The counters of dev's registration cache into st (nothing without
 * one): the device's figures, shared by its connections. */
void iser_reg_stats(const struct iser_dev *dev, struct idm_prov_stats *st);
/* ops->buf_release: the buffer's MRs in every device's PD go. */
void iser_buf_release(struct idm_prov *prov, struct idm_buf *buf);

#endif
