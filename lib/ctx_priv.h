/* SPDX-License-Identifier: BSD-2-Clause */
/* Core-only helpers shared between the files of lib/ (not for providers). */
#ifndef LIBIDM_CTX_PRIV_H
#define LIBIDM_CTX_PRIV_H

#include "core.h"

/* log.c */
void idmp_log_init(struct idm_ctx *ctx, const struct idm_ctx_attr *attr);

/* error.c: the thread's detail for idm_last_error() */
void idmp_last_error_clear(void);
void idmp_last_error_set(const char *fmt, ...) IDMP_PRINTF(1, 2);

/* resolve.c: getaddrinfo() with the resolver's message kept for
 * idm_last_error(); returns 0 or a negative errno (`fallback` when no
 * errno fits, e.g. an unknown name) */
struct addrinfo;
int idmp_resolve(const char *host, const char *port, const struct addrinfo *hints,
		 struct addrinfo **res, int fallback);

/* provider_dirs.c: where providers are looked for. `path` (colon-separated)
 * is searched first: IDM_PROVIDER_PATH, or, when that is unset and this
 * libidm is the copy in its build tree, the build's provider directories;
 * NULL when neither. Then `install_dir`. */
struct idmp_provider_search {
	const char *path;
	const char *from; /* "IDM_PROVIDER_PATH" or "build tree" */
	const char *install_dir;
};
void idmp_provider_search(struct idmp_provider_search *s);
/* "DIRS (FROM), then DIR (install directory)", for messages */
void idmp_provider_search_describe(const struct idmp_provider_search *s, char *buf,
				   size_t len);
/* the build tree's provider directories if this is its libidm, else NULL */
const char *idmp_build_provider_path(void);

/* ctx.c: a recursive mutex (the context's lock, the domain's) */
void idmp_mutex_init_recursive(pthread_mutex_t *m);

/* domain.c: references (a context's, a buffer's); a context's provider
 * instance joins the domain's entry for its module (src_ops: what the
 * module's entry returned), made on first use with ops->dom_open; a dying
 * buffer's registrations released through the domain's instances */
void idmp_domain_ref(struct idm_domain *dom);
void idmp_domain_unref(struct idm_domain *dom);
int idmp_domain_bind(struct idm_domain *dom, struct idm_prov *prov,
		     const struct idm_prov_ops *src_ops);
void idmp_domain_buf_release(struct idm_buf *b);

/* provider_loader.c */
/* IDM_DLCLOSE=0: provider modules stay mapped (leak checkers' stacks) */
bool idmp_keep_mapped(void);
int idmp_providers_load(struct idm_ctx *ctx);
void idmp_providers_unload(struct idm_ctx *ctx);
struct idm_prov *idmp_provider_by_name(struct idm_ctx *ctx, const char *name);
/* Why a provider of that name is not loaded (found and skipped, or not
 * found): sets idm_last_error() and returns the errno to report. */
int idmp_provider_unusable(struct idm_ctx *ctx, const char *name);
/* No loaded provider serves that URL scheme: the reason of the one left
 * out that declared it (idmp_provider_unusable()), else -ENOENT; sets
 * idm_last_error() either way. */
#define IDMP_STATUS_SCHEMES 4
#define IDMP_STATUS_SCHEME_LEN 32
int idmp_scheme_unserved(struct idm_ctx *ctx, const char *scheme);

/* provider_order.c: the n-th provider "auto" tries (highest
 * ops->auto_order first; those with 0 never), NULL past the last; the
 * loaded provider that serves a URL scheme, or NULL */
struct idm_prov *idmp_provider_auto_nth(struct idm_ctx *ctx, size_t n);
struct idm_prov *idmp_provider_by_scheme(struct idm_ctx *ctx, const char *scheme);

/* conn.c */
/* A context's list of connections: add at the head, remove. */
void idmp_conn_list_add(struct idm_ctx *ctx, struct idm_conn *c);
void idmp_conn_list_del(struct idm_ctx *ctx, struct idm_conn *c);
struct idm_conn *idmp_conn_alloc(struct idm_ctx *ctx, struct idm_prov *prov,
				 enum idm_role role);
/* Free a connection the caller never got (its setup failed). */
void idmp_conn_discard(struct idm_conn *c);
/* Link a new portal into ctx->portals. */
void idmp_portal_link(struct idm_portal *p);

/* portal_shared.c: bind and listen on sa with the socket options of
 * `flags` (IDM_PORTAL_REUSEPORT, IDM_PORTAL_V6ONLY) and hand the socket to
 * the provider's listen_fd op; -EOPNOTSUPP without it */
int idmp_listen_core(struct idm_prov_listener *l, const struct sockaddr *sa,
		     socklen_t salen, int backlog, uint32_t flags);

/* task.c */
/* lib/buf.c: the address of [off, off+len) of b when it lies in one
 * segment, else NULL (the range must be inside the buffer). */
uint8_t *idmp_buf_range_addr(const struct idm_buf *b, size_t off, size_t len);
/* 0, or -EOPNOTSUPP when b has several segments and the provider lacks
 * IDM_CAP_SCATTER_GATHER. */
int idmp_buf_usable(const struct idm_buf *b, const struct idm_prov_ops *ops);
/* May c use b? A buffer of the connection's domain, always; of another
 * one, only where the provider registers no memory (no buf_release: TCP),
 * since a registration is valid in its own domain only. */
bool idmp_buf_fits_conn(const struct idm_buf *b, const struct idm_conn *c);

void idmp_task_pool_destroy(struct idm_conn *conn);
/* Free a connection now, wherever called from (lib/conn.c). */
void idmp_conn_free(struct idm_conn *c);

/* dm_xfer.c: the record of a task's transfers in flight */
struct idmp_xfer *idmp_xfer_add(struct idm_task *t, enum idm_data_dir dir,
				struct idm_buf *b, size_t buf_off, uint32_t offset,
				uint32_t length);
void idmp_xfer_del(struct idm_task *t, struct idmp_xfer *x);
/* Forget the transfer a completion reports, if recorded. */
void idmp_xfer_done(struct idm_task *t, enum idm_data_dir dir, uint32_t offset,
		    uint32_t length);
void idmp_xfer_drop_all(struct idm_task *t);

#endif
