/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/error.c: the thread's detail for idm_last_error(). */
#ifndef LIBIDM_LAST_ERROR_H
#define LIBIDM_LAST_ERROR_H

#include "core.h"

void idmp_last_error_clear(void);
void idmp_last_error_set(const char *fmt, ...) IDMP_PRINTF(1, 2);

#endif
