/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Transitional: the iSER provider still reads the core's objects while it
 * moves onto <libidm/provider.h>. Delete this file (and lib/idm_internal.h)
 * once no provider includes them.
 */
#ifndef LIBIDM_PROVIDER_SHIM_H
#define LIBIDM_PROVIDER_SHIM_H
#include "core.h"
#endif
