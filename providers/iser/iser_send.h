/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_send.c: Sends of iSER messages, and the backlog of Sends that
 * found no free message buffer. */
#ifndef IDM_ISER_SEND_H
#define IDM_ISER_SEND_H

#include "iser.h"

struct iser_msg *iser_tx_get(struct iser_conn *ic);
/* A send message for len bytes: pooled, or one-off when larger than the
 * pooled buffers. NULL when the pool is empty or memory ran out. */
struct iser_msg *iser_tx_msg(struct iser_conn *ic, uint32_t len);
int iser_send_msg(struct iser_conn *ic, struct iser_msg *m, uint32_t len,
		  struct ibv_sge *extra, int n_extra, struct idm_task *task,
		  uint32_t inv_rkey);

/* Backlog of Sends without a buffer (struct iser_pend). */
/* Room for a control message of len bytes at the end of the backlog
 * (the caller encodes it there), or NULL without memory. */
uint8_t *iser_pend_control(struct iser_conn *ic, uint32_t len, uint32_t inv);
/* A SCSI Command waits; ic->role->cmd_post sends it when it may go. */
int iser_pend_cmd(struct iser_conn *ic, const uint8_t *bhs, const void *ahs,
		  size_t ahs_len, struct idm_task *t);
void iser_pend_run(struct iser_conn *ic);
void iser_pend_drop_task(struct iser_conn *ic, struct idm_task *t);
void iser_pend_free_all(struct iser_conn *ic);

#endif
