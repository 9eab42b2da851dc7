/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_srq.c: the shared receive queue of a context and device. Calls
 * only iser_pd.c and iser_msgpool.c. */
#ifndef IDM_ISER_SRQ_H
#define IDM_ISER_SRQ_H

#include "iser.h"

/* Attach ic (before its QP is made: ic->srq is then set for the QP's
 * init attributes) to its device's shared queue, made on first use. */
int iser_srq_attach(struct iser_conn *ic);
/* ic's connection would post `want` receive buffers of its own: count
 * them in the queue's size and grow it. */
int iser_srq_want(struct iser_conn *ic, uint32_t want);
/* Is m a buffer of a shared queue? */
static inline bool iser_srq_msg(const struct iser_msg *m)
{
	return m->pool && m->pool->srq;
}
/* Post m, a shared buffer, back on its queue: 0 or a negative errno
 * (then m is kept off the queue, counted lost). */
int iser_srq_repost(struct iser_msg *m);
/* ic's QP took a buffer of the queue (a receive completion): grow the
 * queue when few are left. Returns true when none is posted any more:
 * the next Send to any attached connection meets receiver-not-ready. */
bool iser_srq_took(struct iser_conn *ic);
/* ic's QP is gone: it no longer counts; the last one destroys the queue
 * and every buffer (none may be held any more). */
void iser_srq_detach(struct iser_conn *ic);

#endif
