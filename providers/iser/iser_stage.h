/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_stage.c: an initiator connection's staging area for command
 * ranges of scatter-gather buffers that cross regions. Calls nothing of
 * the provider. */
#ifndef IDM_ISER_STAGE_H
#define IDM_ISER_STAGE_H

#include "iser.h"

/* Make the connection's staging area if it has none (its first scattered
 * command): 0, -EOPNOTSUPP when IDM_ISER_STAGING_MB=0, -ENOMEM when the
 * memory or its registration cannot be had. */
int iser_stage_open(struct iser_conn *ic);
/* Reserve adjacent units for len bytes (1 <= len <= the area's size):
 * true and *slot set, or false when too few are free together now. */
bool iser_stage_take(struct iser_conn *ic, uint32_t len, uint16_t *slot);
/* Give the units of *slot back (nothing when 0) and clear it. */
void iser_stage_put(struct iser_conn *ic, uint16_t *slot);
/* The first byte of slot's units, and the MR they lie in. */
uint8_t *iser_stage_addr(const struct iser_conn *ic, uint16_t slot);
struct ibv_mr *iser_stage_mr(const struct iser_conn *ic);
/* Deregister and free the area (no window bound on it any more). */
void iser_stage_close(struct iser_conn *ic);

#endif
