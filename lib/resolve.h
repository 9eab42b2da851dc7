/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/resolve.c: name resolution with the resolver's message kept. */
#ifndef LIBIDM_RESOLVE_H
#define LIBIDM_RESOLVE_H

#include "core.h"

/* getaddrinfo() with the resolver's message kept for idm_last_error();
 * returns 0 or a negative errno (`fallback` when no errno fits, e.g. an
 * unknown name) */
struct addrinfo;
int idmp_resolve(const char *host, const char *port, const struct addrinfo *hints,
		 struct addrinfo **res, int fallback);

#endif
