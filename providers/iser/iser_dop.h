/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_dop.c: a target task's Put/Get_Data ranges in progress. */
#ifndef IDM_ISER_DOP_H
#define IDM_ISER_DOP_H

#include "iser.h"

/* A free range of t, or NULL when ISER_TASK_DOPS are in progress. */
struct iser_dop *iser_dop_new(struct idm_task *t, enum idm_data_dir dir,
			      uint32_t offset, uint32_t length, uint8_t *dst);
/* n more bytes of d are done (status < 0: they failed). */
void iser_dop_progress(struct iser_conn *ic, struct iser_dop *d, uint32_t n,
		       int status);
/* d is complete: free it and tell the caller. */
void iser_dop_finish(struct iser_conn *ic, struct iser_dop *d);
/* d has nothing left to wait for: finish it from the event loop. */
void iser_dop_defer(struct iser_conn *ic, struct iser_dop *d);
/* The task ends: forget its ranges without notification. */
void iser_dops_cancel(struct iser_conn *ic, struct iser_task *it);

#endif
