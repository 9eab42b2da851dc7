/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/progress.c: the context's epoll set, deferred work and passes. */
#ifndef LIBIDM_PROGRESS_H
#define LIBIDM_PROGRESS_H

#include "core.h"

/* The epoll set and the eventfd of a new context (epfd and evfd preset
 * to -1): 0 or a negative errno; close them either way with
 * idmp_progress_close() (after idm_prov_watch_del() of ev_watch, if
 * the context was made). */
int idmp_progress_open(struct idm_ctx *ctx);
void idmp_progress_close(struct idm_ctx *ctx);
/* The context whose progress pass this thread is in (callbacks), or NULL;
 * the innermost one when a callback runs another context's progress. */
struct idm_ctx *idmp_pass_ctx(void);
/* Whether this thread is inside a pass of ctx, innermost or not. */
bool idmp_in_pass(const struct idm_ctx *ctx);

#endif
