/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Whether a provider module is ever unmapped. Both holders of a module
 * handle ask (the loader for a context's, the domain for its own), so the
 * answer lives below both of them.
 */
#include "core.h"
#include "module_keep.h"

#include <stdlib.h>
#include <string.h>

bool idmp_keep_mapped(void)
{
	const char *s = secure_getenv("IDM_DLCLOSE");
	return s && !strcmp(s, "0");
}
