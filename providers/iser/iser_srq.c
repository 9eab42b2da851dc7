/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The shared receive queue (IDM_CTX_SHARED_RECV): one per context (the
 * provider instance) and device (the device is the domain's, the queue
 * this context's: its buffers are posted and taken by this context's
 * thread only), made when the first connection of the
 * context on that device is, destroyed with the last one. Each connection
 * that would post window x Sends-per-command buffers of its own (RFC 7145
 * 8.1, iser_sizes_ffp) instead adds that many to the queue's size, up to
 * a cap in bytes and count (iser_srq_cap, iser_keys.h): idle connections
 * share the buffers rather than each pinning its own.
 *
 * Decisions:
 * - A QP is attached from its creation (a QP cannot be attached later),
 *   so the login phase uses the shared buffers too; they are all of one
 *   size, large enough for a RecvDataSegmentLength of ISER_SRQ_DSL. A
 *   connection that declared more fails at Enable_Datamover with the
 *   reason (iser_recv.c); the caller turns the option on knowing it.
 * - Low water: checked on every receive completion (iser_srq_took), not
 *   with the SRQ limit event. Async events come on the device context's
 *   one fd, which librdmacm shares between every context of the process:
 *   an event read here would be lost to whoever owns it.
 * - The queue never shrinks while a connection is attached: buffers
 *   posted cannot be taken back one by one. It goes when the last QP is.
 * - Teardown: a QP attached to an SRQ gets no flush completion for
 *   receives it did not take, so the drain cannot wait for them. The
 *   buffers belong to the queue, not to the connection: one a dying QP
 *   took without a completion we saw stays the queue's memory until the
 *   queue goes (never freed under the device), only off the queue
 *   (counted in `lost`, made up by the low-water growth).
 */
#include "iser_srq.h"
#include "iser_msgpool.h"
#include "iser_pd.h"

#include <errno.h>
#include <stdlib.h>

static struct iser_srq *srq_new(struct iser_dev *dev)
{
	struct ibv_srq_init_attr a = {0};
	struct iser_srq *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->dev = dev;
	s->msg_size = iser_srq_msg_size();
	s->cap = iser_srq_cap(s->msg_size, dev->max_srq_wr);
	a.attr.max_wr = s->cap;
	a.attr.max_sge = 1;
	s->srq = ibv_create_srq(dev->pd, &a);
	if (!s->srq) {
		free(s);
		return NULL;
	}
	return s;
}

static void srq_free(struct iser_srq *s)
{
	struct iser_srq_chunk *c;

	ibv_destroy_srq(s->srq);
	while ((c = s->chunks)) {
		s->chunks = c->next;
		iser_pool_fini(&c->pool);
		free(c);
	}
	free(s);
}

int iser_srq_repost(struct iser_msg *m)
{
	struct iser_srq *s = m->pool->srq;
	struct ibv_sge sge = {.addr = (uintptr_t)m->mem, .length = m->size,
			      .lkey = m->lkey};
	struct ibv_recv_wr wr = {.wr_id = (uintptr_t)m, .sg_list = &sge,
				 .num_sge = 1};
	struct ibv_recv_wr *bad;
	int r = ibv_post_srq_recv(s->srq, &wr, &bad);

	if (r) {
		iser_pool_put(m);
		s->lost++;
		return -r;
	}
	s->posted++;
	return 0;
}

/* One more registered chunk of n buffers, all posted. */
static int srq_add(struct iser_srq *s, uint32_t n)
{
	struct iser_srq_chunk *c = calloc(1, sizeof(*c));
	struct iser_msg *m;
	int r;

	if (!c)
		return -ENOMEM;
	r = iser_pool_init(&c->pool, s->dev->pd, n, s->msg_size);
	if (r < 0) {
		free(c);
		return r;
	}
	c->pool.srq = s;
	c->next = s->chunks;
	s->chunks = c;
	s->have += n;
	while ((m = iser_pool_get(&c->pool))) {
		r = iser_srq_repost(m);
		if (r < 0)
			return r;
	}
	return 0;
}

static int srq_grow(struct iser_srq *s)
{
	uint32_t t = iser_srq_target(s->want, s->have, s->posted, s->cap);

	return t > s->have ? srq_add(s, t - s->have) : 0;
}

int iser_srq_attach(struct iser_conn *ic)
{
	struct iser_dev *dev = ic->dev;
	struct iser_srq **slot = &ic->ip->srq[iser_dev_index(ic->ip, dev)];
	struct iser_sizes login;

	if (!*slot) {
		*slot = srq_new(dev);
		if (!*slot)
			return errno ? -errno : -ENOMEM;
		(*slot)->slot = slot;
	}
	ic->srq = *slot;
	ic->srq->n_conns++;
	/* until Enable_Datamover: what its login would post */
	iser_sizes_login(&login);
	return iser_srq_want(ic, login.rx_depth);
}

int iser_srq_want(struct iser_conn *ic, uint32_t want)
{
	struct iser_srq *s = ic->srq;

	s->want = s->want - ic->srq_want + want;
	ic->srq_want = want;
	return srq_grow(s);
}

bool iser_srq_took(struct iser_conn *ic)
{
	struct iser_srq *s = ic->srq;

	s->posted--;
	if (srq_grow(s) < 0)
		idm_prov_dbg(ic->ctx, "iser: cannot grow the shared receive "
			     "queue (%u buffers)", s->have);
	if (s->posted)
		return false;
	s->dry++;
	return true;
}

void iser_srq_detach(struct iser_conn *ic)
{
	struct iser_srq *s = ic->srq;

	if (!s)
		return;
	ic->srq = NULL;
	s->want -= ic->srq_want;
	ic->srq_want = 0;
	if (--s->n_conns)
		return;
	idm_prov_dbg(ic->ctx, "iser: shared receive queue: %u buffers of %u "
		     "bytes at most, ran dry %u times, %u lost to torn down QPs",
		     s->have, s->msg_size, s->dry, s->lost);
	*s->slot = NULL;
	srq_free(s);
}
