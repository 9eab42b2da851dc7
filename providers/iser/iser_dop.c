/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A target task's Put_Data and Get_Data ranges in progress. The ranges
 * are the core's transfer records (at most ISER_TASK_DOPS per task);
 * iSER keeps in each record's priv area (struct iser_dop) only what its
 * RDMA needs: bytes still to place or send, the DataSN/R2TSN, and the
 * one Data_Completion_Notify each owes, from its RDMA completion, from
 * unsolicited data arriving, or deferred to the event loop when nothing
 * is left to wait for (never from inside the call).
 */
#include "iser_dop.h"

#include <stddef.h>
#include <string.h>

void iser_dop_finish(struct iser_conn *ic, struct iser_dop *d)
{
	const struct idm_prov_xfer *x = idm_prov_xfer_from_priv(d);
	struct idm_task *t = x->task;
	struct iser_task *it = iser_task(t);
	enum idm_data_dir dir = x->dir;
	uint32_t off = x->offset, len = x->length, sn = d->sn;
	int status = d->status;
	bool ack = d->ack;

	if (d->done.queued) /* rarely armed; we hold the context lock */
		idm_prov_defer_cancel(ic->ctx, &d->done);
	/* recycles x and d: only the copies above are read after it */
	idm_prov_data_completion(t, dir, off, len, sn, status);
	/* no RDMA Read allowed (ORD 0): acknowledge on local completion,
	 * which ERL 1 permits (7.3.5) */
	if (ack && status == 0 && idm_prov_task_active(t))
		idm_prov_data_ack(t, it->datasn);
}

void iser_dop_progress(struct iser_conn *ic, struct iser_dop *d, uint32_t n,
		       int status)
{
	if (status < 0 && d->status == 0)
		d->status = status;
	d->remaining = n > d->remaining ? 0 : d->remaining - n;
	if (d->remaining == 0)
		iser_dop_finish(ic, d);
}

static void dop_deferred(struct idm_prov_defer *df)
{
	struct iser_dop *d = IDM_PROV_CONTAINER_OF(df, struct iser_dop, done);
	struct idm_task *t = idm_prov_xfer_from_priv(d)->task;
	struct iser_conn *ic = iser_conn(idm_task_conn(t));

	if (ic && ic->state == ISER_UP)
		iser_dop_finish(ic, d);
}

struct iser_dop *iser_dop_new(struct idm_task *t)
{
	/* the core recorded this call last: the others came before it */
	struct idm_prov_xfer *nx = idm_prov_task_xfer_newest(t);
	const struct idm_prov_xfer *x = NULL;
	struct iser_dop *d;
	int n = 0;

	if (!nx)
		return NULL;
	while ((x = idm_prov_task_xfer_next(t, x)) && x != nx)
		n++;
	if (n >= ISER_TASK_DOPS)
		return NULL;
	d = idm_prov_xfer_priv(nx);
	d->remaining = nx->length;
	return d;
}

void iser_dop_defer(struct iser_conn *ic, struct iser_dop *d)
{
	idm_prov_defer(ic->ctx, &d->done, dop_deferred);
}

void iser_dops_cancel(struct iser_conn *ic, struct idm_task *t)
{
	const struct idm_prov_xfer *x = NULL;

	while ((x = idm_prov_task_xfer_next(t, x)))
		idm_prov_defer_cancel(ic->ctx,
				      &((struct iser_dop *)idm_prov_xfer_priv(x))->done);
}
