/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the providers say about themselves beyond their ops: the order in
 * which "auto" tries them (ops->auto_order) and the URL schemes they
 * serve (ops->url_schemes). Nothing here knows a provider by name: a
 * provider dropped into the search path takes its place by its table
 * alone.
 */
#include "core.h"
#include "last_error.h"
#include "lock.h"
#include "provider_dirs.h"
#include "provider_loader.h"
#include "provider_order.h"

#include <errno.h>
#include <string.h>

/* a before b in the "auto" order: the higher auto_order first, then by
 * name, so that the order never depends on the search path */
static bool auto_before(const struct idm_prov *a, const struct idm_prov *b)
{
	if (a->ops->auto_order != b->ops->auto_order)
		return a->ops->auto_order > b->ops->auto_order;
	return strcmp(a->ops->name, b->ops->name) < 0;
}

struct idm_prov *idmp_provider_auto_nth(struct idm_ctx *ctx, size_t n)
{
	struct idm_prov *order[IDMP_MAX_PROVIDERS];
	size_t k = 0;

	/* insertion sort of a handful; the fields read are zero in a table
	 * shorter than today's (the loader's copy) */
	for (size_t i = 0; i < ctx->n_providers; i++) {
		struct idm_prov *p = &ctx->providers[i];
		size_t j;

		if (!p->ops->auto_order)
			continue; /* by name only */
		j = k++;
		while (j > 0 && auto_before(p, order[j - 1])) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = p;
	}
	return n < k ? order[n] : NULL;
}

struct idm_prov *idmp_provider_by_scheme(struct idm_ctx *ctx, const char *scheme)
{
	for (size_t i = 0; i < ctx->n_providers; i++) {
		const char *const *s = ctx->providers[i].ops->url_schemes;

		for (; s && *s; s++)
			if (!strcmp(*s, scheme))
				return &ctx->providers[i];
	}
	return NULL;
}

/* The provider a portal or an adopted socket uses when none is named: the
 * one "auto" tries last, the fallback that reaches any address (TCP in
 * the tree). 0, or -ENOENT with idm_last_error() set when no loaded
 * provider takes part in "auto". Providers loaded, locked. */
int idmp_provider_fallback(struct idm_ctx *ctx, struct idm_prov **out)
{
	struct idm_prov *p;
	struct idmp_provider_search search;
	char where[1024];

	*out = NULL;
	for (size_t i = 0; (p = idmp_provider_auto_nth(ctx, i)); i++)
		*out = p;
	if (*out)
		return 0;
	idmp_provider_search(&search);
	idmp_provider_search_describe(&search, where, sizeof(where));
	idmp_last_error_set("no provider loaded takes part in \"auto\" (set "
			    "IDM_PROVIDER_PATH to the directory of the providers); "
			    "searched %s", where);
	return -ENOENT;
}

IDM_API int idm_provider_for_scheme(idm_ctx *ctx, const char *scheme,
				    const char **name)
{
	struct idm_prov *p;
	int r;

	if (name)
		*name = NULL;
	idmp_last_error_clear();
	if (!ctx || !scheme || !name)
		return -EINVAL;
	idmp_ctx_lock(ctx);
	r = idmp_providers_load(ctx);
	if (r == 0) {
		p = idmp_provider_by_scheme(ctx, scheme);
		if (p)
			*name = p->ops->name;
		else
			r = idmp_scheme_unserved(ctx, scheme);
	}
	idmp_ctx_unlock(ctx);
	return r;
}
