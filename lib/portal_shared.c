/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Portals whose socket the core binds itself: IDM_PORTAL_REUSEPORT (one
 * port served by several contexts, SO_REUSEPORT) and IDM_PORTAL_V6ONLY
 * on an IPv6 address (IPV6_V6ONLY). The core sets the options, binds and
 * hands the socket to the provider's listen_fd op, so that a provider
 * needs nothing new for them; a provider without listen_fd (iSER: an
 * RDMA CM id owns its port alone) cannot serve such a portal.
 */
#include "core.h"
#include "last_error.h"
#include "portal_shared.h"

#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static int set_opts(int fd, int family, uint32_t flags)
{
	int one = 1;

	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		return -errno;
	if ((flags & IDM_PORTAL_REUSEPORT) &&
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0)
		return -errno;
	if ((flags & IDM_PORTAL_V6ONLY) && family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
		return -errno;
	return 0;
}

int idmp_listen_core(struct idm_prov_listener *l, const struct sockaddr *sa,
		     socklen_t salen, int backlog, uint32_t flags)
{
	const struct idm_prov_ops *ops = l->prov->ops;
	int fd, r;

	if (!IDM_PROV_OPS_HAS(ops, listen_fd)) {
		idmp_last_error_set("provider %s cannot take a socket the core "
				    "binds (%s)", ops->name,
				    flags & IDM_PORTAL_REUSEPORT ?
				    "IDM_PORTAL_REUSEPORT" : "IDM_PORTAL_V6ONLY");
		return -EOPNOTSUPP;
	}
	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = set_opts(fd, sa->sa_family, flags);
	if (r == 0 && (bind(fd, sa, salen) < 0 || listen(fd, backlog) < 0))
		r = -errno;
	if (r < 0) {
		close(fd);
		return r;
	}
	r = ops->listen_fd(l, fd);
	if (r < 0)
		close(fd); /* listen_fd leaves a refused socket to us */
	return r;
}
