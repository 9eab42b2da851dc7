/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Finding and loading transport providers: libidm-<name>.so files in
 * IDM_PROVIDER_PATH (colon-separated; ignored for setuid programs because
 * secure_getenv() is), or in the build tree's provider directories for the
 * build tree's own libidm (provider_dirs.c), and then the install
 * directory. A module that fails to load or validate is logged and
 * skipped: one broken provider (say, no RDMA libraries on this host) never
 * takes the others down.
 */
#include "core.h"
#include "domain.h"
#include "last_error.h"
#include "lock.h"
#include "module_keep.h"
#include "provider_dirs.h"
#include "provider_loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* URL schemes kept per provider file for idm_get_provider_status() */
#define IDMP_STATUS_SCHEMES 4
#define IDMP_STATUS_SCHEME_LEN 32

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

/*
 * A provider built against another SDK (another IDM_PROV_ABI) must never
 * run: its view of every shared layout may differ. It cannot: its core
 * services are bound to the version node IDM_PROV_<its ABI>, which this
 * libidm does not have (dlopen fails), and its entry point carries its
 * ABI in its name (dlsym fails). These two read which ABI it was built
 * for, so that the reason says what to do instead of quoting the linker.
 */
#define REBUILD_FMT                                                            \
	"built for provider ABI %d, this libidm has provider ABI %d: rebuild " \
	"it against this libidm (pkg-config libidm-provider)"

/* "...: version `IDM_PROV_2' not found (required by ...)" -> 2, else 0 */
static int abi_of_dlerror(const char *err)
{
	static const char key[] = "version `IDM_PROV_";
	const char *p = err ? strstr(err, key) : NULL;
	long abi;
	char *end;

	if (!p)
		return 0;
	abi = strtol(p + sizeof(key) - 1, &end, 10);
	return *end == '\'' && abi > 0 && abi < 1000 && abi != IDM_PROV_ABI ? (int)abi : 0;
}

/* The ABI whose entry point (idm_provider_entry_v<n>) dl exports, else 0.
 * Looks at the numbers around ours only: an SDK is never far away. */
static int abi_of_entry(void *dl)
{
	char name[64];
	int abi;

	for (abi = 1; abi <= IDM_PROV_ABI + 16; abi++) {
		if (abi == IDM_PROV_ABI)
			continue;
		snprintf(name, sizeof(name), "idm_provider_entry_v%d", abi);
		if (dlsym(dl, name))
			return abi;
	}
	return 0;
}

/* What idm_get_provider_status() reports of one file; the public struct
 * points into the strings copied here (the module may be unloaded). */
struct idmp_prov_status {
	enum idm_provider_state state;
	int error;
	uint32_t abi_version;
	uint64_t caps;
	char name[64];
	char path[512];
	char description[128];
	char reason[256];
	/* the URL schemes its table declared, kept for a provider left out
	 * after it was opened, so that a URL of its scheme can say why it is
	 * not served ("" past the last; a longer scheme is not kept) */
	char schemes[IDMP_STATUS_SCHEMES][IDMP_STATUS_SCHEME_LEN];
};

static struct idmp_prov_status *status_new(struct idm_ctx *ctx, const char *name,
					   const char *path)
{
	struct idmp_prov_status *st;

	/* one slot more than is listed: scratch for the files beyond the
	 * limit, which are still loaded and logged, just not described */
	if (!ctx->status) {
		ctx->status = calloc(IDMP_MAX_PROVIDER_STATUS + 1, sizeof(*ctx->status));
		if (!ctx->status)
			return NULL;
	}
	if (ctx->n_status < IDMP_MAX_PROVIDER_STATUS)
		st = &ctx->status[ctx->n_status++];
	else
		st = &ctx->status[IDMP_MAX_PROVIDER_STATUS];
	memset(st, 0, sizeof(*st));
	snprintf(st->name, sizeof(st->name), "%s", name);
	snprintf(st->path, sizeof(st->path), "%s", path);
	return st;
}

/* Record (and log) why the file at st is left out; st is NULL only when
 * out of memory. Returns err. */
static int IDMP_PRINTF(5, 6) status_skip(struct idm_ctx *ctx, struct idmp_prov_status *st,
					 enum idm_provider_state state, int err,
					 const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (st) {
		st->state = state;
		st->error = err;
		snprintf(st->reason, sizeof(st->reason), "%s", why);
	}
	/* A host without RDMA (init failed) is normal, a broken module or
	 * a full table is not. */
	if (state == IDM_PROVIDER_SKIPPED && (err == -ELIBBAD || err == -E2BIG))
		idm_prov_warn(ctx, "provider %s: %s", st ? st->path : "?", why);
	else if (state == IDM_PROVIDER_SKIPPED)
		idm_prov_info(ctx, "provider %s: not usable here: %s",
			  st ? st->path : "?", why);
	else
		idm_prov_dbg(ctx, "provider %s: %s", st ? st->path : "?", why);
	return err;
}

/* Copy the schemes of an ops table of this ABI: as many as fit, each
 * whole or not at all (a cut one could match another scheme). */
static void status_keep_schemes(struct idmp_prov_status *st,
				const struct idm_prov_ops *ops)
{
	const char *const *s;
	size_t n = 0;

	if (ops->size < offsetof(struct idm_prov_ops, url_schemes) +
				sizeof(ops->url_schemes))
		return;
	for (s = ops->url_schemes; s && *s && n < IDMP_STATUS_SCHEMES; s++)
		if (strlen(*s) < IDMP_STATUS_SCHEME_LEN)
			strcpy(st->schemes[n++], *s);
}

static void status_opened(struct idmp_prov_status *st,
			  const struct idm_prov_ops *ops)
{
	if (!st || !ops)
		return;
	st->abi_version = ops->abi_version;
	if (ops->abi_version != IDM_PROV_ABI ||
	    ops->size < IDM_PROV_OPS_MIN_SIZE)
		return; /* the rest of the table is not ours to read */
	st->caps = ops->caps;
	if (ops->description)
		snprintf(st->description, sizeof(st->description), "%s",
			 ops->description);
	status_keep_schemes(st, ops);
}

/* Validate an ops table; returns 0 or -ELIBBAD with the reason recorded
 * and logged. */
static int validate(struct idm_ctx *ctx, struct idmp_prov_status *st,
		    const struct idm_prov_ops *ops)
{
	const char *missing = NULL;

	if (!ops)
		return status_skip(ctx, st, IDM_PROVIDER_SKIPPED, -ELIBBAD,
				   "entry point returned no ops");
	if (ops->abi_version != IDM_PROV_ABI)
		return status_skip(ctx, st, IDM_PROVIDER_SKIPPED, -ELIBBAD,
				   "ABI %u, libidm needs %u", ops->abi_version,
				   IDM_PROV_ABI);
	/* the ops added since (adopt, listen_fd) are optional: a provider
	 * built against older headers has a shorter table and still loads */
	if (ops->size < IDM_PROV_OPS_MIN_SIZE)
		return status_skip(ctx, st, IDM_PROVIDER_SKIPPED, -ELIBBAD,
				   "ops table of %u bytes, need %zu", ops->size,
				   (size_t)IDM_PROV_OPS_MIN_SIZE);
	if (!valid_name(ops->name))
		return status_skip(ctx, st, IDM_PROVIDER_SKIPPED, -ELIBBAD,
				   "invalid name");
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
	if (missing)
		return status_skip(ctx, st, IDM_PROVIDER_SKIPPED, -ELIBBAD,
				   "mandatory op %s missing", missing);
	return 0;
}

/* The module checked: its instance in the next slot of ctx, initialised
 * and joined to the context's domain, or skipped (and closed) saying why. */
static void prov_start(struct idm_ctx *ctx, struct idmp_prov_status *st, void *dl,
		       const struct idm_prov_ops *ops, const char *path)
{
	struct idm_prov *prov = &ctx->providers[ctx->n_providers];
	int r;

	memset(prov, 0, sizeof(*prov));
	/* ops newer than the provider's SDK stay NULL */
	memcpy(&prov->ops_copy, ops,
	       ops->size < sizeof(prov->ops_copy) ? ops->size
						  : sizeof(prov->ops_copy));
	prov->ops = &prov->ops_copy;
	prov->ctx = ctx;
	prov->dl = dl;
	prov->index = (int)ctx->n_providers;
	snprintf(prov->path, sizeof(prov->path), "%s", path);
	prov->info.name = ops->name;
	prov->info.description = ops->description ? ops->description : "";
	prov->info.path = prov->path;
	prov->info.abi_version = ops->abi_version;
	prov->info.caps = ops->caps;
	if (ops->init) {
		r = ops->init(prov);
		if (r < 0) {
			if (r == INT_MIN)
				r = -EINVAL;
			status_skip(ctx, st, IDM_PROVIDER_SKIPPED, r, "%s",
				    prov->why[0] ? prov->why : idm_strerror(r));
			dlclose(dl);
			return;
		}
	}
	r = idmp_domain_bind(ctx->dom, prov, ops);
	if (r < 0) {
		if (ops->fini)
			ops->fini(prov);
		status_skip(ctx, st, IDM_PROVIDER_SKIPPED, r,
			    "cannot join the context's domain: %s", idm_strerror(r));
		dlclose(dl);
		return;
	}
	ctx->provider_info[ctx->n_providers] = prov->info;
	ctx->n_providers++;
	if (st)
		st->state = IDM_PROVIDER_LOADED;
	idm_prov_dbg(ctx, "provider %s loaded from %s", ops->name, path);
}

/* admit: the provider name in PATH (libidm-NAME.so) and its status entry
 * in *stp (NULL only when out of memory: the file is still tried), and
 * whether this context should try it: false when the name is not a
 * provider's or the status says why it is left out. */
static bool admit(struct idm_ctx *ctx, const char *path, const char *filter,
		  char name[64], struct idmp_prov_status **stp)
{
	const char *base = strrchr(path, '/');
	size_t n, fix = strlen(PREFIX) + strlen(SUFFIX);
	struct idm_prov *first;
	struct idmp_prov_status *st;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n <= fix || n - fix >= 64)
		return false;
	memcpy(name, base + strlen(PREFIX), n - fix);
	name[n - fix] = '\0';
	*stp = st = status_new(ctx, name, path);
	if (!name_allowed(filter, name)) {
		status_skip(ctx, st, IDM_PROVIDER_FILTERED, -ENOENT,
			    "not in IDM_PROVIDERS=%s", filter);
		return false;
	}
	first = idmp_provider_by_name(ctx, name);
	if (first) { /* an earlier directory wins */
		status_skip(ctx, st, IDM_PROVIDER_SHADOWED, -EEXIST,
			    "%s was found first", first->path);
		return false;
	}
	if (ctx->n_providers >= IDMP_MAX_PROVIDERS) {
		status_skip(ctx, st, IDM_PROVIDER_SKIPPED, -E2BIG,
			    "too many providers (%d)", IDMP_MAX_PROVIDERS);
		return false;
	}
	return true;
}

/* open_entry: dlopen PATH and find its entry point for this IDM_PROV_ABI;
 * on failure the status says why (a provider built for another ABI is told
 * to be rebuilt) and NULL is returned with nothing left open. */
static idm_prov_entry_fn open_entry(struct idm_ctx *ctx,
				    struct idmp_prov_status *st,
				    const char *path, void **dlp)
{
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	idm_prov_entry_fn entry;
	int abi;

	if (!dl) {
		const char *err = dlerror();

		abi = abi_of_dlerror(err);
		if (abi > 0)
			status_skip(ctx, st, IDM_PROVIDER_SKIPPED, -ELIBBAD, REBUILD_FMT,
				    abi, IDM_PROV_ABI);
		else
			status_skip(ctx, st, IDM_PROVIDER_SKIPPED, -ELIBBAD, "%s", err);
		return NULL;
	}
	entry = (idm_prov_entry_fn)dlsym(dl, IDM_PROV_ENTRY_NAME);
	if (entry) {
		*dlp = dl;
		return entry;
	}
	abi = abi_of_entry(dl);
	if (abi > 0)
		status_skip(ctx, st, IDM_PROVIDER_SKIPPED, -ELIBBAD, REBUILD_FMT,
			    abi, IDM_PROV_ABI);
	else
		status_skip(ctx, st, IDM_PROVIDER_SKIPPED, -ELIBBAD,
			    "no %s symbol: not a libidm provider",
			    IDM_PROV_ENTRY_NAME);
	dlclose(dl);
	return NULL;
}

static void load_file(struct idm_ctx *ctx, const char *path, const char *filter)
{
	char name[64];
	void *dl = NULL;
	idm_prov_entry_fn entry;
	const struct idm_prov_ops *ops;
	struct idmp_prov_status *st = NULL;

	if (!admit(ctx, path, filter, name, &st))
		return;
	entry = open_entry(ctx, st, path, &dl);
	if (!entry)
		return;
	ops = entry();
	status_opened(st, ops);
	if (validate(ctx, st, ops) < 0) {
		dlclose(dl);
		return;
	}
	if (strcmp(ops->name, name)) {
		status_skip(ctx, st, IDM_PROVIDER_SKIPPED, -ELIBBAD,
			    "calls itself \"%s\"", ops->name);
		dlclose(dl);
		return;
	}
	prov_start(ctx, st, dl, ops, path);
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
		idm_prov_dbg(ctx, "provider directory %s: %s", dir, strerror(errno));
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
	struct idmp_provider_search search;
	const char *filter;

	if (ctx->providers_loaded)
		return 0;
	ctx->providers_loaded = true;
	filter = secure_getenv("IDM_PROVIDERS");
	idmp_provider_search(&search);
	if (search.path) {
		char *copy = strdup(search.path), *save = NULL, *dir;
		if (!copy)
			return -ENOMEM;
		for (dir = strtok_r(copy, ":", &save); dir;
		     dir = strtok_r(NULL, ":", &save))
			scan_dir(ctx, dir, filter);
		free(copy);
	}
	scan_dir(ctx, search.install_dir, filter);
	if (!ctx->n_providers) {
		char where[1024];

		idmp_provider_search_describe(&search, where, sizeof(where));
		idm_prov_warn(ctx, "no provider found (set IDM_PROVIDER_PATH to the "
			      "directory of libidm-<name>.so); searched %s", where);
	}
	return 0;
}

void idmp_providers_unload(struct idm_ctx *ctx)
{
	bool keep = idmp_keep_mapped();

	for (size_t i = 0; i < ctx->n_providers; i++) {
		struct idm_prov *prov = &ctx->providers[i];
		if (prov->ops->fini)
			prov->ops->fini(prov);
		if (prov->dl && !keep)
			dlclose(prov->dl);
	}
	ctx->n_providers = 0;
	ctx->providers_loaded = false;
	free(ctx->status);
	ctx->status = NULL;
	ctx->n_status = 0;
}

struct idm_prov *idmp_provider_by_name(struct idm_ctx *ctx, const char *name)
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

int idmp_scheme_unserved(struct idm_ctx *ctx, const char *scheme)
{
	for (size_t i = 0; i < ctx->n_status; i++) {
		const struct idmp_prov_status *st = &ctx->status[i];

		if (st->state != IDM_PROVIDER_SKIPPED)
			continue;
		for (size_t k = 0; k < IDMP_STATUS_SCHEMES && st->schemes[k][0]; k++)
			if (!strcmp(st->schemes[k], scheme))
				return idmp_provider_unusable(ctx, st->name);
	}
	idmp_last_error_set("no provider serves URL scheme \"%s\"", scheme);
	return -ENOENT;
}

int idmp_provider_unusable(struct idm_ctx *ctx, const char *name)
{
	const struct idmp_prov_status *st = NULL;

	/* the first skipped file of that name tells most: a shadowed or
	 * filtered one only matters when nothing was tried */
	for (size_t i = 0; i < ctx->n_status; i++) {
		if (strcmp(ctx->status[i].name, name))
			continue;
		if (!st || (st->state != IDM_PROVIDER_SKIPPED &&
			    ctx->status[i].state == IDM_PROVIDER_SKIPPED))
			st = &ctx->status[i];
	}
	if (!st) {
		struct idmp_provider_search search;
		char where[1024];

		idmp_provider_search(&search);
		idmp_provider_search_describe(&search, where, sizeof(where));
		/* the hint first: idm_last_error() keeps 255 bytes */
		idmp_last_error_set("no provider \"%s\" (set IDM_PROVIDER_PATH to the "
				    "directory of libidm-%s.so); searched %s",
				    name, name, where);
		return -ENOENT;
	}
	idmp_last_error_set("provider %s %s: %s (%s)", name,
			    st->state == IDM_PROVIDER_SKIPPED ? "not usable here"
							      : "not loaded",
			    st->reason, st->path);
	return st->state == IDM_PROVIDER_SKIPPED && st->error < 0 ? st->error
								   : -ENOENT;
}

IDM_API int idm_get_provider_status(idm_ctx *ctx, size_t index,
				    struct idm_provider_status *out)
{
	struct idm_provider_status st;
	const struct idmp_prov_status *s;
	int r = 0;

	if (!ctx || !out || out->size == 0)
		return -EINVAL;
	idmp_ctx_lock(ctx);
	idmp_providers_load(ctx);
	if (index >= ctx->n_status) {
		r = -ENOENT;
		goto out;
	}
	s = &ctx->status[index];
	memset(&st, 0, sizeof(st));
	st.size = out->size < sizeof(st) ? out->size : (uint32_t)sizeof(st);
	st.state = s->state;
	st.name = s->name;
	st.path = s->path;
	st.description = s->description;
	st.abi_version = s->abi_version;
	st.caps = s->caps;
	st.error = s->state == IDM_PROVIDER_LOADED ? 0 : s->error;
	st.reason = s->reason;
	/* a caller built against an older, shorter struct gets its part */
	memcpy(out, &st, st.size);
out:
	idmp_ctx_unlock(ctx);
	return r;
}
