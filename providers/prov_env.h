/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Integer knobs from the environment, shared by the providers built with
 * libidm (IDM_TCP_*, IDM_ISER_*). Read once, when a provider loads into a
 * context, never per connection.
 */
#ifndef IDM_PROV_ENV_H
#define IDM_PROV_ENV_H

#include <errno.h>
#include <stdlib.h>

/* NAME's value, or def when it is unset, empty, not a whole decimal
 * number, or outside [lo, hi]. */
static inline int prov_env_int(const char *name, int def, int lo, int hi)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return def;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < lo || n > hi)
		return def;
	return (int)n;
}

#endif
