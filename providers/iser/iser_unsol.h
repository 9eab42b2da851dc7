/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_unsol.c: a target task's immediate and unsolicited data. */
#ifndef IDM_ISER_UNSOL_H
#define IDM_ISER_UNSOL_H

#include "iser.h"

/* The command's Control_Notify returned: stage its immediate data if
 * Get_Data did not take it meanwhile. */
void iser_tgt_cmd_done(struct iser_conn *ic, struct idm_task *t);
/* An unsolicited Data-Out PDU. < 0 with the reason written to why. */
int iser_tgt_data_out(struct iser_conn *ic, const uint8_t *bhs,
		      const uint8_t *data, uint32_t dlen, char *why,
		      size_t whylen);

#endif
