/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Host and port to a socket address for idm_conn_connect() and
 * idm_portal_create(). The errno-style return says little about why a
 * name did not resolve, so the resolver's own message goes to
 * idm_last_error().
 */
#include "core.h"
#include "last_error.h"
#include "resolve.h"

#include <errno.h>
#include <netdb.h>
#include <string.h>

int idmp_resolve(const char *host, const char *port, const struct addrinfo *hints,
		 struct addrinfo **res, int fallback)
{
	int r, err;

	*res = NULL;
	errno = 0;
	r = getaddrinfo(host, port, hints, res);
	err = errno;
	if (r != 0) {
		idmp_last_error_set("cannot resolve %s%s%s: %s",
				    host ? host : "*", port ? ":" : "",
				    port ? port : "",
				    r == EAI_SYSTEM && err ? strerror(err)
							   : gai_strerror(r));
		*res = NULL;
		if (r == EAI_MEMORY)
			return -ENOMEM;
		if (r == EAI_SYSTEM && err)
			return -err;
		return fallback;
	}
	if (!*res || (*res)->ai_addrlen > sizeof(struct sockaddr_storage)) {
		idmp_last_error_set("cannot resolve %s: no usable address",
				    host ? host : "*");
		freeaddrinfo(*res);
		*res = NULL;
		return fallback;
	}
	return 0;
}
