/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/log.c: the context's log, set from its attributes. */
#ifndef LIBIDM_LOG_H
#define LIBIDM_LOG_H

#include "core.h"

void idmp_log_init(struct idm_ctx *ctx, const struct idm_ctx_attr *attr);

#endif
