/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_dop.c: a target task's Put/Get_Data ranges in progress. */
#ifndef IDM_ISER_DOP_H
#define IDM_ISER_DOP_H

#include "iser.h"

/* Inside put_data()/get_data(): iSER's part of the record the core made
 * for the call, with every byte still to do; NULL when ISER_TASK_DOPS
 * ranges of t are in progress already. */
struct iser_dop *iser_dop_new(struct idm_task *t);
/* n more bytes of d are done (status < 0: they failed). */
void iser_dop_progress(struct iser_conn *ic, struct iser_dop *d, uint32_t n,
		       int status);
/* d is complete: tell the caller (the core then recycles d). */
void iser_dop_finish(struct iser_conn *ic, struct iser_dop *d);
/* d has nothing left to wait for: finish it from the event loop. */
void iser_dop_defer(struct iser_conn *ic, struct iser_dop *d);
/* The task ends: cancel deferred completions of its ranges (the core
 * drops the records, without notification). */
void iser_dops_cancel(struct iser_conn *ic, struct idm_task *t);

#endif
