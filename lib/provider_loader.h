/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/provider_loader.c: loading the providers of a context. */
#ifndef LIBIDM_PROVIDER_LOADER_H
#define LIBIDM_PROVIDER_LOADER_H

#include "core.h"

int idmp_providers_load(struct idm_ctx *ctx);
void idmp_providers_unload(struct idm_ctx *ctx);
struct idm_prov *idmp_provider_by_name(struct idm_ctx *ctx, const char *name);
/* Why a provider of that name is not loaded (found and skipped, or not
 * found): sets idm_last_error() and returns the errno to report. */
int idmp_provider_unusable(struct idm_ctx *ctx, const char *name);
/* No loaded provider serves that URL scheme: the reason of the one left
 * out that declared it (idmp_provider_unusable()), else -ENOENT; sets
 * idm_last_error() either way. */
int idmp_scheme_unserved(struct idm_ctx *ctx, const char *scheme);

#endif
