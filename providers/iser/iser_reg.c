/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Registration lookup: a caller buffer's regions and their MRs in each
 * device's PD, registered once per device on first use (never per I/O),
 * found without a lock afterwards, and the SGEs and STag MRs of a range
 * of the buffer. The registrations hang on the buffer (idm_prov_buf_reg)
 * for the lock-free lookup of its next I/O; on devices with memory
 * windows they come from the device's registration cache
 * (iser_mrcache.c), so a new buffer on memory registered before
 * registers nothing, and releasing a buffer only hands its entries back.
 */
#include "iser_reg.h"
#include "iser_mrcache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

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
			      (size_t)n * ISER_MAX_DEVS * sizeof(r->mr[0]) +
			      (size_t)n * ISER_MAX_DEVS * sizeof(r->ent[0]));
	if (!r)
		return NULL;
	r->n_rgn = (uint32_t)n;
	r->mr = (struct ibv_mr **)(void *)&r->rgn[n];
	r->ent = (struct iser_mrc_ent **)(void *)&r->mr[(size_t)n * ISER_MAX_DEVS];
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
		size_t k = (size_t)d * r->n_rgn + j;

		if (r->ent[k])
			iser_mrc_put(r->mrc[d], r->ent[k]);
		else if (r->mr[k])
			ibv_dereg_mr(r->mr[k]);
		r->mr[k] = NULL;
		r->ent[k] = NULL;
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
	/* Through the cache (windows only, iser_pd.c): the memory's cached
	 * registration, made with these same rights, or a new one */
	r->mrc[i] = dev->mrc;
	for (uint32_t j = 0; j < r->n_rgn; j++) {
		size_t k = (size_t)i * r->n_rgn + j;
		struct ibv_mr *mr = NULL;

		if (dev->mrc) {
			if (iser_mrc_get(dev->mrc, r->rgn[j].addr,
					 r->rgn[j].len, &r->ent[k]) == 0)
				mr = r->ent[k]->h;
		} else {
			mr = ibv_reg_mr(dev->pd, r->rgn[j].addr, r->rgn[j].len,
					access);
		}
		if (!mr) {
			bufreg_dereg(r, i);
			return -1;
		}
		r->mr[k] = mr;
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

void iser_reg_stats(const struct iser_dev *dev, struct idm_prov_stats *st)
{
	struct iser_mrc_stats m;

	if (!dev || !dev->mrc)
		return;
	iser_mrc_stats(dev->mrc, &m);
	st->mr_cache_hits = m.hits;
	st->mr_cache_misses = m.misses;
	st->mr_cache_evictions = m.evictions;
	st->mr_cache_invalidations = m.invalidations;
	st->mr_cache_uncached = m.uncached;
	st->mr_cache_pinned_bytes = m.pinned_bytes;
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
