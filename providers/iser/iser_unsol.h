/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_unsol.c: a target task's immediate and unsolicited data. */
#ifndef IDM_ISER_UNSOL_H
#define IDM_ISER_UNSOL_H

#include "iser.h"

/* The command's Control_Notify returned: stage its immediate data if
 * Get_Data did not take it meanwhile. */
void iser_tgt_cmd_done(struct iser_conn *ic, struct idm_task *t);
/* Copy [from, to) of the unsolicited data already here into d's
 * destination. Returns the bytes copied. */
uint32_t iser_unsol_copy(struct iser_task *it, struct iser_dop *d,
			 uint32_t from, uint32_t to);
/* An unsolicited Data-Out PDU. */
int iser_tgt_data_out(struct iser_conn *ic, const uint8_t *bhs,
		      const uint8_t *data, uint32_t dlen);
/* The task ends: drop what is staged. */
void iser_unsol_free(struct iser_task *it);

#endif
