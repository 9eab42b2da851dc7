/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A target task's Put_Data and Get_Data ranges in progress (struct
 * iser_dop, at most ISER_TASK_DOPS at once): bytes still to place or
 * send, and the one Data_Completion_Notify each owes, from its RDMA
 * completion, from unsolicited data arriving, or deferred to the event
 * loop when nothing is left to wait for (never from inside the call).
 */
#include "iser_dop.h"

#include <stddef.h>
#include <string.h>

void iser_dop_finish(struct iser_conn *ic, struct iser_dop *d)
{
	struct idm_task *t = d->task;
	struct iser_task *it = iser_task(t);
	enum idm_data_dir dir = d->dir;
	uint32_t off = d->offset, len = d->length, sn = d->sn;
	int status = d->status;
	bool ack = d->ack;

	d->used = false;
	idm_prov_defer_cancel(ic->ctx, &d->done);
	idm_prov_data_completion(t, dir, off, len, sn, status);
	/* no RDMA Read allowed (ORD 0): acknowledge on local completion,
	 * which ERL 1 permits (7.3.5) */
	if (ack && status == 0 && idm_prov_task_active(t))
		idm_prov_data_ack(t, it->datasn);
}

void iser_dop_progress(struct iser_conn *ic, struct iser_dop *d, uint32_t n,
		       int status)
{
	if (!d->used)
		return;
	if (status < 0 && d->status == 0)
		d->status = status;
	d->remaining = n > d->remaining ? 0 : d->remaining - n;
	if (d->remaining == 0)
		iser_dop_finish(ic, d);
}

static void dop_deferred(struct idm_prov_defer *df)
{
	struct iser_dop *d = (struct iser_dop *)((char *)df -
					offsetof(struct iser_dop, done));
	struct idm_task *t = d->task;
	struct iser_conn *ic = iser_conn(idm_task_conn(t));

	if (d->used && ic && ic->state == ISER_UP)
		iser_dop_finish(ic, d);
}

struct iser_dop *iser_dop_new(struct idm_task *t, enum idm_data_dir dir,
			      uint32_t offset, uint32_t length, uint8_t *dst)
{
	struct iser_task *it = iser_task(t);
	int i;

	for (i = 0; i < ISER_TASK_DOPS; i++) {
		struct iser_dop *d = &it->dops[i];

		if (d->used)
			continue;
		memset(d, 0, sizeof(*d));
		d->used = true;
		d->dir = dir;
		d->offset = offset;
		d->length = length;
		d->remaining = length;
		d->dst = dst;
		d->task = t;
		return d;
	}
	return NULL;
}

void iser_dop_defer(struct iser_conn *ic, struct iser_dop *d)
{
	idm_prov_defer(ic->ctx, &d->done, dop_deferred);
}

void iser_dops_cancel(struct iser_conn *ic, struct iser_task *it)
{
	int i;

	for (i = 0; i < ISER_TASK_DOPS; i++) {
		idm_prov_defer_cancel(ic->ctx, &it->dops[i].done);
		it->dops[i].used = false;
	}
}
