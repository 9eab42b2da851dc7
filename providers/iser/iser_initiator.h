/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_initiator.c: the initiator's data mover. */
#ifndef IDM_ISER_INITIATOR_H
#define IDM_ISER_INITIATOR_H

#include "iser.h"

/* Send_Control of a SCSI Command: now, or behind the Send backlog. */
int iser_ini_send_cmd(struct iser_conn *ic, const uint8_t *bhs,
		      const void *ahs, size_t ahs_len, struct idm_task *t);

extern const struct iser_role iser_ini_role;

#endif
