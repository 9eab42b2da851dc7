/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/portal.c: a context's portals. */
#ifndef LIBIDM_PORTAL_H
#define LIBIDM_PORTAL_H

#include "core.h"

/* Link a new portal into ctx->portals. */
void idmp_portal_link(struct idm_portal *p);

#endif
