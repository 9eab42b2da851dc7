/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Memory windows: the type-2 windows a connection binds as STags, kept on
 * its free list and recycled; allocated only while the list warms up,
 * deallocated only at the connection's end.
 */
#include "iser_mw.h"

#include <errno.h>
#include <stdlib.h>

int iser_mw_get(struct iser_conn *ic, struct ibv_mw **out)
{
	struct ibv_mw **grown;

	if (ic->n_mw_free) {
		*out = ic->mw_free[--ic->n_mw_free];
		return 0;
	}
	/* Warm-up only: windows are recycled, never freed before teardown. */
	grown = realloc(ic->mw_free, (ic->n_mw + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	ic->mw_free = grown;
	*out = ibv_alloc_mw(ic->dev->pd, IBV_MW_TYPE_2);
	if (!*out)
		return errno ? -errno : -ENOMEM;
	ic->n_mw++;
	return 0;
}

void iser_mw_put(struct iser_conn *ic, struct ibv_mw *mw)
{
	if (mw)
		ic->mw_free[ic->n_mw_free++] = mw;
}

void iser_mws_dealloc(struct iser_conn *ic, bool free_list)
{
	uint32_t i;

	for (i = 0; i < ic->n_mw_free; i++)
		ibv_dealloc_mw(ic->mw_free[i]);
	if (free_list) {
		free(ic->mw_free);
		ic->mw_free = NULL;
	}
	ic->n_mw_free = ic->n_mw = 0;
}
