/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * IDM_PORTAL_REUSEPORT: one port served by several contexts. The core
 * binds the socket itself with SO_REUSEPORT and hands it to the
 * provider's listen_fd op, so that a provider needs nothing new to be
 * shared; a provider without listen_fd (iSER: an RDMA CM id owns its
 * port alone) cannot share a port.
 */
#include "core.h"
#include "ctx_priv.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

int idmp_listen_reuseport(struct idm_prov_listener *l, const struct sockaddr *sa,
			  socklen_t salen, int backlog)
{
	const struct idm_prov_ops *ops = l->prov->ops;
	int one = 1, fd, r;

	if (!IDM_PROV_OPS_HAS(ops, listen_fd)) {
		idmp_last_error_set("provider %s cannot share a port between "
				    "contexts (IDM_PORTAL_REUSEPORT)", ops->name);
		return -EOPNOTSUPP;
	}
	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    bind(fd, sa, salen) < 0 || listen(fd, backlog) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	r = ops->listen_fd(l, fd);
	if (r < 0)
		close(fd); /* listen_fd leaves a refused socket to us */
	return r;
}
