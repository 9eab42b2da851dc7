/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sockets the caller set up itself: a connected socket it accepted or
 * connected (idm_conn_adopt_fd()) and a listening socket it bound
 * (idm_portal_create_fd(), e.g. from systemd socket activation). The core
 * checked that each is an IPv4/IPv6 stream socket in the right state;
 * from there they take the same path as the provider's own sockets:
 * tcp_conn_new() / tcp_conn_start() like an accepted connection,
 * tcp_listener_start() like a listener. On failure the descriptor is left
 * to the caller with its flags as they were.
 */
#include "tcp.h"
#include "tcp_adopt.h"
#include "tcp_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>

/* O_NONBLOCK (the provider never blocks in recv/send) and FD_CLOEXEC (a
 * program forking its helpers does not leak the connection into them).
 * *old gets what to restore on failure. */
static int own_fd_flags(int fd, int old[2])
{
	old[0] = fcntl(fd, F_GETFL);
	old[1] = fcntl(fd, F_GETFD);
	if (old[0] < 0 || old[1] < 0)
		return -errno;
	if (fcntl(fd, F_SETFL, old[0] | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, old[1] | FD_CLOEXEC) < 0) {
		int r = -errno;

		(void)fcntl(fd, F_SETFL, old[0]);
		return r;
	}
	return 0;
}

static void restore_fd_flags(int fd, const int old[2])
{
	(void)fcntl(fd, F_SETFL, old[0]);
	(void)fcntl(fd, F_SETFD, old[1]);
}

int tcp_adopt(struct idm_conn *conn, int fd)
{
	struct sockaddr_storage local, peer;
	socklen_t llen = sizeof(local), plen = sizeof(peer);
	struct tcp_conn *tc;
	int old[2], r;

	r = own_fd_flags(fd, old);
	if (r < 0)
		return r;
	tc = tcp_conn_new(idm_prov_conn_ctx(conn), fd);
	if (!tc) {
		restore_fd_flags(fd, old);
		return -ENOMEM;
	}
	tcp_conn_bind(tc, conn);
	r = tcp_conn_start(tc);
	if (r < 0) {
		tc->fd = -1; /* still the caller's: do not close it */
		tcp_conn_destroy(tc);
		restore_fd_flags(fd, old);
		return r;
	}
	tcp_tune_socket(fd, idm_prov_priv(idm_prov_conn_provider(conn)));
	if (getsockname(fd, (struct sockaddr *)&local, &llen) < 0)
		llen = 0;
	if (getpeername(fd, (struct sockaddr *)&peer, &plen) < 0)
		plen = 0;
	idm_prov_conn_set_names(conn, llen ? (struct sockaddr *)&local : NULL,
				plen ? (struct sockaddr *)&peer : NULL);
	idm_prov_conn_set_priv(conn, tc);
	return 0;
}

int tcp_listen_fd(struct idm_prov_listener *l, int fd)
{
	int old[2], r;

	r = own_fd_flags(fd, old);
	if (r < 0)
		return r;
	r = tcp_listener_start(l, fd);
	if (r < 0)
		restore_fd_flags(fd, old);
	return r;
}
