/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/provider_order.c: the providers' order and schemes. */
#ifndef LIBIDM_PROVIDER_ORDER_H
#define LIBIDM_PROVIDER_ORDER_H

#include "core.h"

/* the n-th provider "auto" tries (highest ops->auto_order first; those
 * with 0 never), NULL past the last */
struct idm_prov *idmp_provider_auto_nth(struct idm_ctx *ctx, size_t n);
/* the loaded provider that serves a URL scheme, or NULL */
struct idm_prov *idmp_provider_by_scheme(struct idm_ctx *ctx, const char *scheme);
/* The provider a portal or an adopted socket uses when none is named: the
 * last one "auto" tries (the fallback that reaches any address). 0, or
 * -ENOENT with idm_last_error() set when no loaded provider takes part in
 * "auto". Providers loaded, locked. */
int idmp_provider_fallback(struct idm_ctx *ctx, struct idm_prov **out);

#endif
