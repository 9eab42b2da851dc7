/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Memory: one protection domain per RDMA device shared by all connections
 * of every context of the domain (struct iser_dom),
 * caller buffers registered once per device on first use (never per I/O),
 * the registered arenas that hold iSER messages (login phase: small, RFC
 * 7145 section 11; full feature phase: sized from the negotiated keys),
 * and the memory windows a connection recycles as STags.
 */
#include "iser_mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

static struct iser_dom *iser_dom(const struct iser_prov *ip)
{
	return idm_prov_dom_priv(ip->prov);
}

int iser_dom_open(struct idm_prov *prov, void **priv)
{
	(void)prov;
	*priv = calloc(1, sizeof(struct iser_dom));
	return *priv ? 0 : -ENOMEM;
}

/* The domain goes after its contexts and buffers: no QP, MR or SRQ is
 * left in these PDs. */
void iser_dom_close(void *priv)
{
	struct iser_dom *dom = priv;

	for (int i = 0; i < dom->n_devs; i++)
		ibv_dealloc_pd(dom->devs[i].pd);
	free(dom);
}

int iser_dev_index(const struct iser_prov *ip, const struct iser_dev *dev)
{
	return (int)(dev - iser_dom(ip)->devs);
}

static struct iser_dev *dev_open(struct iser_prov *ip, struct iser_dom *dom,
				 struct ibv_context *verbs)
{
	struct ibv_device_attr attr;
	struct iser_dev *d;

	if (dom->n_devs == ISER_MAX_DEVS || ibv_query_device(verbs, &attr))
		return NULL;
	d = &dom->devs[dom->n_devs];
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
	d->max_sge = attr.max_sge > 0 ? (uint32_t)attr.max_sge : 1;
	d->max_sge_rd = attr.max_sge_rd > 0 ? (uint32_t)attr.max_sge_rd
					    : d->max_sge;
	d->max_srq_wr = attr.max_srq_wr > 0 ? (uint32_t)attr.max_srq_wr : 0;
	dom->n_devs++;
	return d;
}

/* librdmacm opens each device once per process, so every context's
 * cm_ids on a device share its ibv_context: one PD per device serves
 * every context of the domain. */
struct iser_dev *iser_dev_get(struct iser_prov *ip, struct ibv_context *verbs)
{
	struct iser_dom *dom = iser_dom(ip);
	struct iser_dev *d = NULL;
	int i;

	idm_prov_dom_lock(ip->prov);
	for (i = 0; i < dom->n_devs && !d; i++)
		if (dom->devs[i].verbs == verbs)
			d = &dom->devs[i];
	if (!d)
		d = dev_open(ip, dom, verbs);
	idm_prov_dom_unlock(ip->prov);
	return d;
}

/* The buffer's segments, in order, as regions: segments adjacent in
 * memory merge. Counts them when rgn is NULL. */
static int buf_regions(const struct idm_buf *buf, struct iser_rgn *rgn)
{
	const struct iovec *iov;
	int k = idm_buf_segments(buf, &iov), n = 0;
	const uint8_t *end = NULL;
	size_t off = 0;

	for (int i = 0; i < k; i++) {
		uint8_t *a = iov[i].iov_base;

		if (n && a == end) {
			if (rgn)
				rgn[n - 1].len += iov[i].iov_len;
		} else {
			if (rgn)
				rgn[n] = (struct iser_rgn){a, off, iov[i].iov_len};
			n++;
		}
		end = a + iov[i].iov_len;
		off += iov[i].iov_len;
	}
	return n;
}

/* The buffer's regions, found once (not per I/O). */
static struct iser_bufreg *bufreg_new(struct idm_buf *buf)
{
	struct iser_bufreg *r;
	int n;

	if (idm_buf_addr(buf))
		n = 1; /* one segment: the path of every plain buffer */
	else if ((n = buf_regions(buf, NULL)) <= 0)
		return NULL;
	r = calloc(1, sizeof(*r) + (size_t)n * sizeof(r->rgn[0]) +
			      (size_t)n * ISER_MAX_DEVS * sizeof(r->mr[0]));
	if (!r)
		return NULL;
	r->n_rgn = (uint32_t)n;
	r->mr = (struct ibv_mr **)(void *)&r->rgn[n];
	if (idm_buf_addr(buf))
		r->rgn[0] = (struct iser_rgn){idm_buf_addr(buf), 0, idm_buf_len(buf)};
	else if (buf_regions(buf, r->rgn) != n) {
		free(r);
		return NULL;
	}
	return r;
}

static void bufreg_dereg(struct iser_bufreg *r, int d)
{
	for (uint32_t j = 0; j < r->n_rgn; j++) {
		struct ibv_mr **mr = &r->mr[(size_t)d * r->n_rgn + j];

		if (*mr)
			ibv_dereg_mr(*mr);
		*mr = NULL;
	}
}

/* The slot holding pd in r, else the first free one (the slots fill in
 * order); ISER_MAX_DEVS when neither. */
static int bufreg_slot(const struct iser_bufreg *r, const struct ibv_pd *pd)
{
	int i;

	for (i = 0; i < ISER_MAX_DEVS; i++) {
		struct ibv_pd *p = atomic_load_explicit(&r->pd[i],
							memory_order_acquire);

		if (p == pd || !p)
			break;
	}
	return i;
}

/* The slot of pd in r, -1 when not registered there yet. */
static int bufreg_find(const struct iser_bufreg *r, const struct ibv_pd *pd)
{
	int i = bufreg_slot(r, pd);

	return i < ISER_MAX_DEVS && atomic_load_explicit(&r->pd[i],
							 memory_order_acquire) == pd
		       ? i : -1;
}

/* Register the buffer's regions in dev's PD, in the first free slot;
 * under the domain's lock (two contexts may meet here). */
static int bufreg_add_pd(struct iser_bufreg *r, const struct iser_dev *dev)
{
	int access = IBV_ACCESS_LOCAL_WRITE;
	int i = bufreg_slot(r, dev->pd);

	if (i == ISER_MAX_DEVS)
		return -1;
	if (atomic_load_explicit(&r->pd[i], memory_order_acquire))
		return i; /* another context was first */
	/* With memory windows the MR itself grants no remote access: only
	 * the per-I/O windows bound on it do, and they die with the I/O.
	 * Without windows the MR's rkey is the STag (IDM_ISER_STAG=mr). */
	if (dev->has_mw)
		access |= IBV_ACCESS_MW_BIND;
	else
		access |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	for (uint32_t j = 0; j < r->n_rgn; j++) {
		struct ibv_mr *mr = ibv_reg_mr(dev->pd, r->rgn[j].addr,
					       r->rgn[j].len, access);

		if (!mr) {
			bufreg_dereg(r, i);
			return -1;
		}
		r->mr[(size_t)i * r->n_rgn + j] = mr;
	}
	atomic_store_explicit(&r->pd[i], dev->pd, memory_order_release);
	return i;
}

static struct iser_bufreg *bufreg_get_locked(struct iser_prov *ip,
					     const struct iser_dev *dev,
					     struct idm_buf *buf, int *di)
{
	struct iser_bufreg *r = idm_prov_buf_reg(buf, ip->prov);

	if (!r) {
		r = bufreg_new(buf);
		if (!r)
			return NULL;
		idm_prov_buf_set_reg(buf, ip->prov, r);
	}
	*di = bufreg_add_pd(r, dev);
	return *di < 0 ? NULL : r;
}

/* Per I/O: a lookup without a lock once the buffer is registered on the
 * device; the first use per device registers, under the domain's lock. */
const struct iser_bufreg *iser_buf_reg(struct iser_prov *ip,
				       struct iser_dev *dev,
				       struct idm_buf *buf, int *di)
{
	struct iser_bufreg *r = idm_prov_buf_reg(buf, ip->prov);

	if (r && (*di = bufreg_find(r, dev->pd)) >= 0)
		return r;
	idm_prov_dom_lock(ip->prov);
	r = bufreg_get_locked(ip, dev, buf, di);
	idm_prov_dom_unlock(ip->prov);
	return r;
}

/* The region holding buffer offset off (off < buffer length). */
static uint32_t rgn_find(const struct iser_bufreg *r, size_t off)
{
	uint32_t lo = 0, hi = r->n_rgn;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (r->rgn[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The first piece of [off, off+len): its address and its bytes, up to
 * the end of the region off is in. */
static uint32_t iser_buf_piece(const struct iser_bufreg *r, size_t off,
			       uint32_t len, uint8_t **addr)
{
	const struct iser_rgn *g = &r->rgn[rgn_find(r, off)];
	size_t in = off - g->off;

	*addr = g->addr + in;
	return g->len - in < len ? (uint32_t)(g->len - in) : len;
}

uint32_t iser_buf_pieces(const struct iser_bufreg *r, size_t off,
			 uint32_t len)
{
	if (r->n_rgn == 1 || len == 0)
		return 1;
	return rgn_find(r, off + len - 1) - rgn_find(r, off) + 1;
}

uint32_t iser_buf_sges(const struct iser_bufreg *r, int di, size_t *off,
		       uint32_t *len, struct ibv_sge *sge, uint32_t max,
		       uint32_t *bytes)
{
	uint32_t n = 0;

	*bytes = 0;
	while (*len && n < max) {
		uint8_t *a;
		uint32_t k = iser_buf_piece(r, *off, *len, &a);
		uint32_t j = rgn_find(r, *off);

		sge[n].addr = (uintptr_t)a;
		sge[n].length = k;
		sge[n].lkey = r->mr[(size_t)di * r->n_rgn + j]->lkey;
		n++;
		*bytes += k;
		*off += k;
		*len -= k;
	}
	return n;
}

int iser_buf_range_mr(struct iser_prov *ip, struct iser_dev *dev,
		      struct idm_buf *buf, size_t off, uint32_t len,
		      struct ibv_mr **mr, uint8_t **addr)
{
	const struct iser_bufreg *r;
	const struct iser_rgn *g;
	int di;

	r = iser_buf_reg(ip, dev, buf, &di);
	if (!r)
		return -ENOMEM;
	g = &r->rgn[rgn_find(r, off)];
	/* one STag names one MR: a range across regions has none */
	if (off - g->off > g->len || len > g->len - (off - g->off))
		return -EOPNOTSUPP;
	*mr = r->mr[(size_t)di * r->n_rgn + (uint32_t)(g - r->rgn)];
	*addr = g->addr + (off - g->off);
	return 0;
}

void iser_buf_release(struct idm_prov *prov, struct idm_buf *buf)
{
	struct iser_bufreg *r = idm_prov_buf_reg(buf, prov);
	int i;

	if (!r)
		return;
	for (i = 0; i < ISER_MAX_DEVS && atomic_load(&r->pd[i]); i++)
		bufreg_dereg(r, i);
	free(r);
	idm_prov_buf_set_reg(buf, prov, NULL);
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
