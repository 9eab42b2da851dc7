/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Finding and loading transport providers: libidm-<name>.so files in
 * IDM_PROVIDER_PATH (colon-separated; ignored for setuid programs because
 * secure_getenv() is) and then the install directory. A module that fails
 * to load or validate is logged and skipped: one broken provider (say, no
 * RDMA libraries on this host) never takes the others down.
 */
#include "idm_internal.h"
#include "provider.h"
#include "ctx_priv.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef IDM_PROVIDER_DIR
#define IDM_PROVIDER_DIR "/usr/local/lib/libidm"
#endif

#define PREFIX "libidm-"
#define SUFFIX ".so"

static bool name_allowed(const char *filter, const char *name)
{
	size_t n = strlen(name);
	const char *p = filter;

	if (!filter || !*filter)
		return true;
	while (*p) {
		size_t len = strcspn(p, ",");
		if (len == n && !strncmp(p, name, n))
			return true;
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

static bool valid_name(const char *s)
{
	if (!s || !*s || strlen(s) > 32)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return false;
	return true;
}

/* Validate an ops table; returns 0 or -ELIBBAD with the reason logged. */
int idmp_provider_validate(struct idm_ctx *ctx, const struct idmp_provider_ops *ops,
			   const char *path);
int idmp_provider_validate(struct idm_ctx *ctx, const struct idmp_provider_ops *ops,
			   const char *path)
{
	const char *missing = NULL;

	if (!ops) {
		idmp_warn(ctx, "provider %s: entry point returned no ops", path);
		return -ELIBBAD;
	}
	if (ops->abi_version != IDMP_PROVIDER_ABI) {
		idmp_warn(ctx, "provider %s: ABI %u, libidm needs %u", path,
			  ops->abi_version, IDMP_PROVIDER_ABI);
		return -ELIBBAD;
	}
	if (ops->size < sizeof(struct idmp_provider_ops)) {
		idmp_warn(ctx, "provider %s: ops table of %u bytes, need %zu",
			  path, ops->size, sizeof(struct idmp_provider_ops));
		return -ELIBBAD;
	}
	if (!valid_name(ops->name)) {
		idmp_warn(ctx, "provider %s: invalid name", path);
		return -ELIBBAD;
	}
#define NEED(op)                                                               \
	if (!missing && !ops->op)                                              \
		missing = #op;
	NEED(listen)
	NEED(unlisten)
	NEED(listener_port)
	NEED(connect)
	NEED(send_control)
	NEED(put_data)
	NEED(get_data)
	NEED(enable_datamover)
	NEED(conn_terminate)
	NEED(task_free)
#undef NEED
	if (missing) {
		idmp_warn(ctx, "provider %s (%s): mandatory op %s missing", path,
			  ops->name, missing);
		return -ELIBBAD;
	}
	return 0;
}

static bool keep_mapped(void)
{
	const char *s = secure_getenv("IDM_DLCLOSE");
	return s && !strcmp(s, "0");
}

static void load_file(struct idm_ctx *ctx, const char *path, const char *filter)
{
	const char *base = strrchr(path, '/');
	char name[64];
	size_t n;
	void *dl;
	idmp_provider_entry_fn entry;
	const struct idmp_provider_ops *ops;
	struct idmp_provider *prov;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n <= strlen(PREFIX) + strlen(SUFFIX) ||
	    n - strlen(PREFIX) - strlen(SUFFIX) >= sizeof(name))
		return;
	memcpy(name, base + strlen(PREFIX), n - strlen(PREFIX) - strlen(SUFFIX));
	name[n - strlen(PREFIX) - strlen(SUFFIX)] = '\0';
	if (!name_allowed(filter, name))
		return;
	if (idmp_provider_by_name(ctx, name))
		return; /* an earlier directory wins */
	if (ctx->n_providers >= IDMP_MAX_PROVIDERS) {
		idmp_warn(ctx, "provider %s: too many providers", path);
		return;
	}

	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		idmp_warn(ctx, "provider %s: %s", path, dlerror());
		return;
	}
	entry = (idmp_provider_entry_fn)dlsym(dl, IDMP_PROVIDER_ENTRY_NAME);
	if (!entry) {
		idmp_warn(ctx, "provider %s: no %s symbol (wrong provider ABI?)",
			  path, IDMP_PROVIDER_ENTRY_NAME);
		dlclose(dl);
		return;
	}
	ops = entry();
	if (idmp_provider_validate(ctx, ops, path) < 0) {
		dlclose(dl);
		return;
	}
	if (strcmp(ops->name, name)) {
		idmp_warn(ctx, "provider %s: calls itself \"%s\"", path, ops->name);
		dlclose(dl);
		return;
	}

	prov = &ctx->providers[ctx->n_providers];
	memset(prov, 0, sizeof(*prov));
	prov->ops = ops;
	prov->ctx = ctx;
	prov->dl = dl;
	prov->index = (int)ctx->n_providers;
	snprintf(prov->path, sizeof(prov->path), "%s", path);
	if (ops->init) {
		int r = ops->init(prov);
		if (r < 0) {
			idmp_info(ctx, "provider %s: not usable here: %s", path,
				  idm_strerror(r));
			dlclose(dl);
			return;
		}
	}
	prov->info.name = ops->name;
	prov->info.description = ops->description ? ops->description : "";
	prov->info.path = prov->path;
	prov->info.abi_version = ops->abi_version;
	prov->info.caps = ops->caps;
	ctx->provider_info[ctx->n_providers] = prov->info;
	ctx->n_providers++;
	idmp_dbg(ctx, "provider %s loaded from %s", ops->name, path);
}

static int cmp_names(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_provider_file(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return n > strlen(PREFIX) + strlen(SUFFIX) &&
	       !strncmp(d->d_name, PREFIX, strlen(PREFIX)) &&
	       !strcmp(d->d_name + n - strlen(SUFFIX), SUFFIX);
}

static void scan_dir(struct idm_ctx *ctx, const char *dir, const char *filter)
{
	struct dirent **list;
	int n = scandir(dir, &list, is_provider_file, cmp_names);

	if (n < 0) {
		idmp_dbg(ctx, "provider directory %s: %s", dir, strerror(errno));
		return;
	}
	for (int i = 0; i < n; i++) {
		char path[512];
		if (snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name) <
		    (int)sizeof(path))
			load_file(ctx, path, filter);
		free(list[i]);
	}
	free(list);
}

int idmp_providers_load(struct idm_ctx *ctx)
{
	const char *env, *filter;

	if (ctx->providers_loaded)
		return 0;
	ctx->providers_loaded = true;
	filter = secure_getenv("IDM_PROVIDERS");
	env = secure_getenv("IDM_PROVIDER_PATH");
	if (env && *env) {
		char *copy = strdup(env), *save = NULL, *dir;
		if (!copy)
			return -ENOMEM;
		for (dir = strtok_r(copy, ":", &save); dir;
		     dir = strtok_r(NULL, ":", &save))
			scan_dir(ctx, dir, filter);
		free(copy);
	}
	scan_dir(ctx, IDM_PROVIDER_DIR, filter);
	if (!ctx->n_providers)
		idmp_warn(ctx, "no provider found (IDM_PROVIDER_PATH=%s, %s)",
			  env ? env : "", IDM_PROVIDER_DIR);
	return 0;
}

void idmp_providers_unload(struct idm_ctx *ctx)
{
	bool keep = keep_mapped();

	for (size_t i = 0; i < ctx->n_providers; i++) {
		struct idmp_provider *prov = &ctx->providers[i];
		if (prov->ops->fini)
			prov->ops->fini(prov);
		if (prov->dl && !keep)
			dlclose(prov->dl);
	}
	ctx->n_providers = 0;
	ctx->providers_loaded = false;
}

struct idmp_provider *idmp_provider_by_name(struct idm_ctx *ctx, const char *name)
{
	for (size_t i = 0; i < ctx->n_providers; i++)
		if (!strcmp(ctx->providers[i].ops->name, name))
			return &ctx->providers[i];
	return NULL;
}

IDM_API int idm_get_providers(idm_ctx *ctx, const struct idm_provider_info **list,
			      size_t *count)
{
	int r;

	if (!ctx || !list || !count)
		return -EINVAL;
	idmp_ctx_lock(ctx);
	r = idmp_providers_load(ctx);
	*list = ctx->provider_info;
	*count = ctx->n_providers;
	idmp_ctx_unlock(ctx);
	return r;
}
