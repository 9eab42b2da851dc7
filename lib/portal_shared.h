/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/portal_shared.c: the listening socket a provider takes. */
#ifndef LIBIDM_PORTAL_SHARED_H
#define LIBIDM_PORTAL_SHARED_H

#include "core.h"

/* Bind and listen on sa with the socket options of `flags`
 * (IDM_PORTAL_REUSEPORT, IDM_PORTAL_V6ONLY) and hand the socket to the
 * provider's listen_fd op; -EOPNOTSUPP without it. */
int idmp_listen_core(struct idm_prov_listener *l, const struct sockaddr *sa,
		     socklen_t salen, int backlog, uint32_t flags);

#endif
