/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_target.c: the target's data mover. */
#ifndef IDM_ISER_TARGET_H
#define IDM_ISER_TARGET_H

#include "iser.h"

int iser_put_data(struct idm_task *t, const uint8_t *tmpl, struct idm_buf *buf,
		  size_t buf_off, uint32_t offset, uint32_t length,
		  uint32_t flags);
int iser_get_data(struct idm_task *t, const uint8_t *tmpl, struct idm_buf *buf,
		  size_t buf_off, uint32_t offset, uint32_t length,
		  uint32_t flags);
/* Send_Control of a SCSI Response: it ends the initiator's STags. */
int iser_tgt_send_rsp(struct iser_conn *ic, const uint8_t *bhs,
		      const void *ahs, size_t ahs_len, const void *data,
		      size_t data_len, struct idm_task *t);

extern const struct iser_role iser_tgt_role;

#endif
