/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/wakeup.c: idm_ctx_wakeup(), raised from anywhere, consumed by a pass. */
#ifndef LIBIDM_WAKEUP_H
#define LIBIDM_WAKEUP_H

#include "core.h"

/* The pass under way (context lock held) takes a pending wakeup and runs
 * the context's wakeup_fn: 1 if there was one, else 0. */
int idmp_wakeup_take(struct idm_ctx *ctx);

#endif
