/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/module_keep.c: whether provider modules are ever unmapped. */
#ifndef LIBIDM_MODULE_KEEP_H
#define LIBIDM_MODULE_KEEP_H

#include "core.h"

/* IDM_DLCLOSE=0: provider modules stay mapped (leak checkers' stacks) */
bool idmp_keep_mapped(void);

#endif
