/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The context: made and torn down here; its progress (epoll set, deferred
 * work, progress thread) is lib/progress.c's, its lock lib/lock.c's.
 */
#include "core.h"
#include "conn.h"
#include "domain.h"
#include "lock.h"
#include "log.h"
#include "progress.h"
#include "provider_loader.h"

#include <errno.h>
#include <stdlib.h>

/* The domain named in attr (since 1.3, read when attr->size reaches
 * it), or one of the context's own. */
static int ctx_join_domain(struct idm_ctx *ctx, const struct idm_ctx_attr *attr)
{
	if (attr && attr->size >= offsetof(struct idm_ctx_attr, domain) +
					  sizeof(attr->domain) &&
	    attr->domain) {
		ctx->dom = attr->domain;
		idmp_domain_ref(ctx->dom);
		return 0;
	}
	return idm_domain_create(NULL, &ctx->dom);
}

IDM_API int idm_ctx_create(const struct idm_ctx_attr *attr, idm_ctx **out)
{
	struct idm_ctx *ctx;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (attr && attr->size < offsetof(struct idm_ctx_attr, log_level) +
					 sizeof(attr->log_level))
		return -EINVAL;
	if (attr && (attr->flags & ~(IDM_CTX_PROGRESS_THREAD | IDM_CTX_SHARED_RECV)))
		return -EINVAL;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->epfd = -1;
	ctx->evfd = -1;
	ret = ctx_join_domain(ctx, attr);
	if (ret < 0) {
		free(ctx);
		return ret;
	}
	ctx->flags = attr ? attr->flags : 0;
	/* since 1.3, read when attr->size reaches it */
	if (attr && attr->size >= offsetof(struct idm_ctx_attr, wakeup_arg) +
					  sizeof(attr->wakeup_arg)) {
		ctx->wakeup_fn = attr->wakeup_fn;
		ctx->wakeup_arg = attr->wakeup_arg;
	}

	idmp_mutex_init_recursive(&ctx->lock);

	idmp_log_init(ctx, attr);

	ret = idmp_progress_open(ctx);
	if (ret < 0)
		goto fail;

	*out = ctx;
	if (attr && (attr->flags & IDM_CTX_PROGRESS_THREAD)) {
		ret = idm_ctx_start_progress_thread(ctx);
		if (ret < 0) {
			*out = NULL;
			goto fail;
		}
	}
	return 0;
fail:
	idmp_progress_close(ctx);
	pthread_mutex_destroy(&ctx->lock);
	idmp_domain_unref(ctx->dom);
	free(ctx);
	return ret;
}

IDM_API void idm_ctx_destroy(idm_ctx *ctx)
{
	if (!ctx)
		return;
	if (ctx->thread_running)
		idm_ctx_stop_progress_thread(ctx);

	idmp_ctx_lock(ctx);
	while (ctx->portals)
		idm_portal_destroy(ctx->portals);
	while (ctx->conns)
		idmp_conn_free(ctx->conns);
	idmp_providers_unload(ctx);
	idm_prov_watch_del(ctx, &ctx->ev_watch);
	idmp_ctx_unlock(ctx);

	idmp_progress_close(ctx);
	pthread_mutex_destroy(&ctx->lock);
	idmp_domain_unref(ctx->dom);
	free(ctx);
}
