/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Protection domains: one per RDMA device, shared by all connections of
 * every context of the domain (struct iser_dom), made when the device is
 * first met and kept until the domain closes. What the device can do
 * (memory windows, SGE and queue limits) is read once here.
 */
#include "iser_pd.h"
#include "iser_mrcache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* The registrar of a device's cache: the rights bufreg_add_pd gives
 * with memory windows (the MR grants no remote access by itself). */
static int cache_reg(void *arg, void *addr, size_t len, void **h)
{
	struct iser_dev *d = arg;
	struct ibv_mr *mr = ibv_reg_mr(d->pd, addr, len,
				       IBV_ACCESS_LOCAL_WRITE |
					       IBV_ACCESS_MW_BIND);

	if (!mr)
		return errno ? -errno : -ENOMEM;
	*h = mr;
	return 0;
}

static void cache_dereg(void *arg, void *h)
{
	(void)arg;
	ibv_dereg_mr(h);
}

static const struct iser_mrc_ops cache_ops = {cache_reg, cache_dereg};

/* The domain goes after its contexts and buffers: no QP, MR or SRQ is
 * left in these PDs but the idle registrations of the caches. */
void iser_dom_close(void *priv)
{
	struct iser_dom *dom = priv;

	for (int i = 0; i < dom->n_devs; i++) {
		iser_mrc_free(dom->devs[i].mrc);
		ibv_dealloc_pd(dom->devs[i].pd);
	}
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
	d->max_mw = (uint32_t)attr.max_mw;
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
	/* Only with windows: a plain MR's rkey is the STag, and a cached
	 * one would open the whole cached range to the peer for as long as
	 * it is cached. No cache (out of memory): per buffer, as before. */
	if (d->has_mw && ip->mr_cache_bytes)
		d->mrc = iser_mrc_new(&cache_ops, d, ip->mr_cache_bytes,
				      ISER_MRC_MAX_ENTRIES);
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
