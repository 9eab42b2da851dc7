/* SPDX-License-Identifier: BSD-2-Clause */
/* Transitional, see lib/provider.h. */
#ifndef LIBIDM_INTERNAL_SHIM_H
#define LIBIDM_INTERNAL_SHIM_H
#include "core.h"
#endif
