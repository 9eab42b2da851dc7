/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/lock.c: the locks every file of lib/ takes. */
#ifndef LIBIDM_LOCK_H
#define LIBIDM_LOCK_H

#include "core.h"

/* the context's lock, for the public entry points (recursive) */
void idmp_ctx_lock(struct idm_ctx *ctx);
void idmp_ctx_unlock(struct idm_ctx *ctx);
/* a recursive mutex (the context's lock, the domain's) */
void idmp_mutex_init_recursive(pthread_mutex_t *m);

#endif
