/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Memory: one protection domain per RDMA device shared by all connections,
 * caller buffers registered once per device on first use (never per I/O),
 * and the registered arenas that hold iSER messages.
 */
#include "iser.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct iser_dev *iser_dev_get(struct iser_prov *ip, struct ibv_context *verbs)
{
	struct ibv_device_attr attr;
	struct iser_dev *d;
	int i;

	for (i = 0; i < ip->n_devs; i++)
		if (ip->devs[i].verbs == verbs)
			return &ip->devs[i];
	if (ip->n_devs == ISER_MAX_DEVS || ibv_query_device(verbs, &attr))
		return NULL;
	d = &ip->devs[ip->n_devs];
	memset(d, 0, sizeof(*d));
	d->pd = ibv_alloc_pd(verbs);
	if (!d->pd)
		return NULL;
	d->verbs = verbs;
	d->has_mw = (attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) &&
		    !ip->force_mr;
	d->max_rd_atom = (uint32_t)attr.max_qp_rd_atom;
	/* Soft-RoCE (rxe, vendor ID 0xffffff) re-runs an already executed
	 * bind when it rewinds its send queue for a retransmission or an
	 * RNR retry, and then never sends the WRs behind it: binds must
	 * wait until nothing that can be retransmitted is ahead of them. */
	d->bind_idle = ip->bind_idle < 0 ? attr.vendor_id == 0xffffff
					 : ip->bind_idle > 0;
	d->max_msg = 1u << 30;
	ip->n_devs++;
	return d;
}

void iser_devs_close(struct iser_prov *ip)
{
	int i;

	for (i = 0; i < ip->n_devs; i++)
		ibv_dealloc_pd(ip->devs[i].pd);
	ip->n_devs = 0;
}

struct ibv_mr *iser_buf_mr(struct iser_prov *ip, struct iser_dev *dev,
			   struct idm_buf *buf)
{
	struct iser_bufreg *r = buf->reg[ip->prov->index];
	int access = IBV_ACCESS_LOCAL_WRITE;
	int i;

	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return NULL;
		buf->reg[ip->prov->index] = r;
	}
	for (i = 0; i < ISER_MAX_DEVS && r->e[i].pd; i++)
		if (r->e[i].pd == dev->pd)
			return r->e[i].mr;
	if (i == ISER_MAX_DEVS)
		return NULL;
	/* With memory windows the MR itself grants no remote access: only
	 * the per-I/O windows bound on it do, and they die with the I/O.
	 * Without windows the MR's rkey is the STag (IDM_ISER_STAG=mr). */
	if (dev->has_mw)
		access |= IBV_ACCESS_MW_BIND;
	else
		access |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	r->e[i].mr = ibv_reg_mr(dev->pd, buf->addr, buf->len, access);
	if (!r->e[i].mr)
		return NULL;
	r->e[i].pd = dev->pd;
	return r->e[i].mr;
}

void iser_buf_release(struct idm_prov *prov, struct idm_buf *buf)
{
	struct iser_bufreg *r = buf->reg[prov->index];
	int i;

	if (!r)
		return;
	for (i = 0; i < ISER_MAX_DEVS && r->e[i].pd; i++)
		ibv_dereg_mr(r->e[i].mr);
	free(r);
	buf->reg[prov->index] = NULL;
}

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
