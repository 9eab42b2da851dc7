/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The locks: a context's (recursive, taken by every public entry point
 * and by the progress pass around dispatch) and the recursive mutex
 * initialiser the domain shares. A file of its own so that every other
 * file of lib/ can lock without calling into the context's own file.
 */
#include "core.h"
#include "lock.h"

void idmp_ctx_lock(struct idm_ctx *ctx)
{
	pthread_mutex_lock(&ctx->lock);
}

void idmp_ctx_unlock(struct idm_ctx *ctx)
{
	pthread_mutex_unlock(&ctx->lock);
}

void idmp_mutex_init_recursive(pthread_mutex_t *m)
{
	pthread_mutexattr_t ma;

	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(m, &ma);
	pthread_mutexattr_destroy(&ma);
}
