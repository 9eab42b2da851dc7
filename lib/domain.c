/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Domains: the scope of memory registration, apart from progress.
 *
 * A context is a progress engine; its domain is what its buffers are
 * registered in. Each context still loads its own instance of every
 * provider (the ops take a context's instance, and its watches, timers
 * and connections are that context's), but the instances of one provider
 * on the contexts of a domain share two things through the domain:
 *
 *  - the slot of idm_buf.reg[] (idm_prov.reg_index), so that a buffer
 *    registered through one context is found registered through another;
 *  - the state ops->dom_open makes (iSER: the devices and their
 *    protection domains), so that the registration is valid on the queue
 *    pairs of every context.
 *
 * The domain counts its creator, its contexts and its buffers, and goes
 * with the last: then no connection can use a registration any more, and
 * each buffer released its own through the domain's instance of the
 * provider, which outlives the contexts' (a context may be destroyed
 * before its buffers). That instance has no context; the module stays
 * mapped through the domain's own dlopen() reference until dom_close.
 *
 * Lock order: a context's lock, then its domain's (a provider registers a
 * buffer from a progress pass). The domain's lock alone guards buffer
 * release, which runs from any thread.
 */
#include "core.h"
#include "domain.h"
#include "lock.h"
#include "module_keep.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

IDM_API int idm_domain_create(const struct idm_domain_attr *attr, idm_domain **out)
{
	struct idm_domain *dom;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (attr && (attr->size < offsetof(struct idm_domain_attr, flags) +
					  sizeof(attr->flags) ||
		     attr->flags))
		return -EINVAL;
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -ENOMEM;
	/* recursive: a provider's dom_lock may nest in a release */
	idmp_mutex_init_recursive(&dom->lock);
	atomic_init(&dom->refs, 1);
	*out = dom;
	return 0;
}

void idmp_domain_ref(struct idm_domain *dom)
{
	atomic_fetch_add_explicit(&dom->refs, 1, memory_order_relaxed);
}

static void domain_free(struct idm_domain *dom)
{
	bool keep = idmp_keep_mapped();

	for (size_t i = 0; i < dom->n_providers; i++) {
		struct idmp_dom_prov *dp = &dom->providers[i];

		if (IDM_PROV_OPS_HAS(dp->inst.ops, dom_close))
			dp->inst.ops->dom_close(dp->priv);
		if (dp->dl && !keep)
			dlclose(dp->dl);
	}
	pthread_mutex_destroy(&dom->lock);
	free(dom);
}

void idmp_domain_unref(struct idm_domain *dom)
{
	if (atomic_fetch_sub_explicit(&dom->refs, 1, memory_order_acq_rel) == 1)
		domain_free(dom);
}

IDM_API void idm_domain_destroy(idm_domain *dom)
{
	if (dom)
		idmp_domain_unref(dom);
}

IDM_API idm_domain *idm_ctx_get_domain(const idm_ctx *ctx)
{
	return ctx ? ctx->dom : NULL;
}

static struct idmp_dom_prov *dom_prov_find(struct idm_domain *dom,
					   const struct idm_prov_ops *src_ops)
{
	for (size_t i = 0; i < dom->n_providers; i++)
		if (dom->providers[i].src_ops == src_ops)
			return &dom->providers[i];
	return NULL;
}

/* The domain's entry for a provider module first bound by a context:
 * its own reference to the module, its own instance, its shared state. */
static int dom_prov_add(struct idm_domain *dom, struct idm_prov *prov,
			const struct idm_prov_ops *src_ops,
			struct idmp_dom_prov **out)
{
	struct idmp_dom_prov *dp;
	int r = 0;

	if (dom->n_providers == IDMP_MAX_PROVIDERS)
		return -E2BIG;
	dp = &dom->providers[dom->n_providers];
	memset(dp, 0, sizeof(*dp));
	if (prov->dl) {
		/* a reference of the domain's own, so that buffers can
		 * release their registrations after the contexts went */
		dp->dl = dlopen(prov->path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
		if (!dp->dl)
			return -ELIBBAD;
	}
	dp->src_ops = src_ops;
	dp->domain = dom;
	dp->inst.ops_copy = prov->ops_copy;
	dp->inst.ops = &dp->inst.ops_copy;
	dp->inst.index = -1;
	dp->inst.reg_index = (int)dom->n_providers;
	dp->inst.dom = dp;
	dp->inst.info = prov->info;
	memcpy(dp->inst.path, prov->path, sizeof(dp->inst.path));
	/* its own copy: the context's instance may go first */
	dp->inst.info.path = dp->inst.path;
	if (IDM_PROV_OPS_HAS(prov->ops, dom_open))
		r = prov->ops->dom_open(prov, &dp->priv);
	if (r < 0) {
		if (dp->dl)
			dlclose(dp->dl);
		return r;
	}
	dom->n_providers++;
	*out = dp;
	return 0;
}

int idmp_domain_bind(struct idm_domain *dom, struct idm_prov *prov,
		     const struct idm_prov_ops *src_ops)
{
	struct idmp_dom_prov *dp;
	int r = 0;

	pthread_mutex_lock(&dom->lock);
	dp = dom_prov_find(dom, src_ops);
	if (!dp)
		r = dom_prov_add(dom, prov, src_ops, &dp);
	if (r == 0) {
		prov->dom = dp;
		prov->reg_index = dp->inst.reg_index;
	}
	pthread_mutex_unlock(&dom->lock);
	return r;
}

void idmp_domain_buf_release(struct idm_buf *b)
{
	struct idm_domain *dom = b->dom;

	pthread_mutex_lock(&dom->lock);
	for (size_t i = 0; i < dom->n_providers; i++) {
		struct idm_prov *inst = &dom->providers[i].inst;

		if (atomic_load_explicit(&b->reg[i], memory_order_acquire) &&
		    inst->ops->buf_release)
			inst->ops->buf_release(inst, b);
		atomic_store_explicit(&b->reg[i], NULL, memory_order_relaxed);
	}
	pthread_mutex_unlock(&dom->lock);
}

/* ---- provider SDK --------------------------------------------------- */

void *idm_prov_dom_priv(const struct idm_prov *prov)
{
	return prov->dom ? prov->dom->priv : NULL;
}

void idm_prov_dom_lock(const struct idm_prov *prov)
{
	if (prov->dom)
		pthread_mutex_lock(&prov->dom->domain->lock);
}

void idm_prov_dom_unlock(const struct idm_prov *prov)
{
	if (prov->dom)
		pthread_mutex_unlock(&prov->dom->domain->lock);
}
