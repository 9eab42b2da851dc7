/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Message pools: the registered arenas that hold iSER messages (login
 * phase: small, RFC 7145 section 11; full feature phase: sized from the
 * negotiated keys), the rare one-off message larger than a pooled one,
 * and a connection's pools through its phases.
 */
#include "iser_msgpool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int iser_pool_init(struct iser_pool *p, struct ibv_pd *pd, uint32_t n,
		   uint32_t size)
{
	uint32_t i;

	memset(p, 0, sizeof(*p));
	p->msgs = calloc(n, sizeof(*p->msgs));
	if (!p->msgs)
		return -ENOMEM;
	if (posix_memalign(&p->mem, 4096, (size_t)n * size)) {
		free(p->msgs);
		p->msgs = NULL;
		return -ENOMEM;
	}
	p->mr = ibv_reg_mr(pd, p->mem, (size_t)n * size, IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr) {
		int e = errno ? -errno : -ENOMEM;

		free(p->mem);
		free(p->msgs);
		memset(p, 0, sizeof(*p));
		return e;
	}
	p->n = n;
	p->size = size;
	for (i = n; i-- > 0;) {
		struct iser_msg *m = &p->msgs[i];

		m->mem = (uint8_t *)p->mem + (size_t)i * size;
		m->size = size;
		m->lkey = p->mr->lkey;
		m->pool = p;
		m->next = p->free;
		p->free = m;
	}
	p->n_free = n;
	return 0;
}

void iser_pool_fini(struct iser_pool *p)
{
	if (p->mr)
		ibv_dereg_mr(p->mr);
	free(p->mem);
	free(p->msgs);
	memset(p, 0, sizeof(*p));
}

struct iser_msg *iser_pool_get(struct iser_pool *p)
{
	struct iser_msg *m = p->free;

	if (m) {
		p->free = m->next;
		p->n_free--;
		m->next = NULL;
	}
	return m;
}

struct iser_msg *iser_msg_oneoff(struct ibv_pd *pd, uint32_t size)
{
	struct iser_msg *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->mem = malloc(size);
	if (m->mem)
		m->own_mr = ibv_reg_mr(pd, m->mem, size, IBV_ACCESS_LOCAL_WRITE);
	if (!m->own_mr) {
		free(m->mem);
		free(m);
		return NULL;
	}
	m->size = size;
	m->lkey = m->own_mr->lkey;
	return m;
}

void iser_pool_put(struct iser_msg *m)
{
	struct iser_pool *p = m->pool;

	if (!p) {
		ibv_dereg_mr(m->own_mr);
		free(m->mem);
		free(m);
		return;
	}
	m->next = p->free;
	p->free = m;
	p->n_free++;
}

int iser_pools_login(struct iser_conn *ic)
{
	struct iser_sizes login;
	int r;

	iser_sizes_login(&login);
	r = iser_pool_init(&ic->rx_login, ic->dev->pd, login.rx_depth,
			   login.rx_msg);
	if (r == 0)
		r = iser_pool_init(&ic->tx_login, ic->dev->pd, login.tx_depth,
				   login.tx_msg);
	return r;
}

/* Allocate_Connection_Resources: the full feature phase pools, sized
 * from the negotiated keys and registered, but nothing posted yet, so that
 * Deallocate_Connection_Resources can still give them back. */
int iser_rsrc_ffp_alloc(struct iser_conn *ic)
{
	struct idm_conn *c = ic->conn;
	int r;

	if (ic->ffp_alloc)
		return 0;
	if (!ic->qp || ic->state == ISER_DOWN)
		return -ENOTCONN;
	iser_sizes_ffp(&ic->ffp, ic->params, idm_conn_role(c), ic->ip->rx_depth,
		       idm_prov_conn_cmd_window(c));
	if (ic->ffp.rx_depth > ISER_RX_CAP)
		ic->ffp.rx_depth = ISER_RX_CAP;
	/* with a shared receive queue the connection has no receive
	 * buffers of its own (iser_srq.c) */
	r = ic->srq ? 0 : iser_pool_init(&ic->rx_ffp, ic->dev->pd,
					 ic->ffp.rx_depth, ic->ffp.rx_msg);
	if (r < 0)
		return r;
	r = iser_pool_init(&ic->tx_ffp, ic->dev->pd, ic->ffp.tx_depth,
			   ic->ffp.tx_msg);
	if (r < 0) {
		iser_pool_fini(&ic->rx_ffp);
		return r;
	}
	ic->ffp_alloc = true;
	return 0;
}

/* Deallocate_Connection_Resources: possible until the receives are
 * posted (a live QP cannot hand posted receives back; after that the
 * pools go with the connection). Returns false if they stay. */
bool iser_rsrc_ffp_free(struct iser_conn *ic)
{
	if (!ic->ffp_alloc)
		return true;
	if (ic->ffp_rsrc)
		return false;
	iser_pool_fini(&ic->rx_ffp);
	iser_pool_fini(&ic->tx_ffp);
	ic->ffp_alloc = false;
	return true;
}

/* Message memory outlives the QP until conn_free: a handler that ran a
 * callback which terminated the connection may still return its message
 * to the pool. */
void iser_pools_fini(struct iser_conn *ic)
{
	iser_pool_fini(&ic->rx_login);
	iser_pool_fini(&ic->tx_login);
	iser_pool_fini(&ic->rx_ffp);
	iser_pool_fini(&ic->tx_ffp);
	ic->ffp_rsrc = false;
	ic->ffp_alloc = false;
}
