/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_control.c: control PDUs as iSER messages. */
#ifndef IDM_ISER_CONTROL_H
#define IDM_ISER_CONTROL_H

#include "iser.h"

/* Send_Control of any PDU but an initiator's SCSI Command, in order
 * behind the Send backlog; inv: an rkey the Send invalidates (0: none). */
int iser_ctl_send(struct iser_conn *ic, const uint8_t *bhs, const void *ahs,
		  size_t ahs_len, const void *data, size_t data_len,
		  uint32_t inv);
/* Initiator, Enable_Datamover: the iSER Hello when the keys want it. */
int iser_ctl_hello(struct iser_conn *ic);

#endif
