/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Socketpairs in place of TCP connections for the tcp harnesses (see
 * sock_shim.h for why). The calls the shim does not claim go straight to
 * the kernel (syscall()), so the shim needs no dlsym and works whatever
 * the sanitizer runtime intercepts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dup3 */
#endif
#include "sock_shim.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Exported from the executable so that the provider's calls bind here. */
#define SHIM_EXPORT __attribute__((visibility("default")))

int accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags) SHIM_EXPORT;
int connect(int fd, const struct sockaddr *sa, socklen_t len) SHIM_EXPORT;
int getsockname(int fd, struct sockaddr *sa, socklen_t *len) SHIM_EXPORT;
int getpeername(int fd, struct sockaddr *sa, socklen_t *len) SHIM_EXPORT;

static int lfd = -1;	      /* the provider's listener */
static int keep_fd = -1;      /* the connection that keeps it readable */
static int accept_fd = -1;    /* what the next accept4 returns */
static int conn_fd = -1;      /* what the next connect puts in place */
static uint16_t conn_port;
static int shim_fds[2] = { -1, -1 }; /* sockets that pretend to be TCP */
static uint16_t local_port = 40000, peer_port; /* what getsockname/getpeername say */

static void mark_shimmed(int fd, uint16_t peer)
{
	shim_fds[1] = shim_fds[0];
	shim_fds[0] = fd;
	peer_port = peer;
}

static int shimmed(int fd)
{
	return fd >= 0 && (fd == shim_fds[0] || fd == shim_fds[1]);
}

int shim_listener(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct pollfd p;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int fd = 0; fd < 1024 && lfd < 0; fd++) {
		struct sockaddr_in b;
		socklen_t bl = sizeof(b);
		int acc = 0;
		socklen_t al = sizeof(acc);

		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al) == 0 && acc &&
		    syscall(SYS_getsockname, fd, &b, &bl) == 0 && b.sin_family == AF_INET &&
		    b.sin_port == sa.sin_port)
			lfd = fd;
	}
	if (lfd < 0)
		return -ENOENT;
	/* the backlog completes a loopback connect without an accept */
	keep_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (keep_fd < 0)
		return -errno;
	if (syscall(SYS_connect, keep_fd, &sa, sizeof(sa)) < 0 && errno != EINPROGRESS)
		return -errno;
	p = (struct pollfd){ .fd = keep_fd, .events = POLLOUT };
	while (poll(&p, 1, -1) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

void shim_accept_next(int fd)
{
	if (accept_fd >= 0)
		close(accept_fd); /* the last one was never accepted */
	accept_fd = fd;
}

void shim_connect_next(uint16_t port, int fd)
{
	conn_port = port;
	conn_fd = fd;
}

int accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags)
{
	int r;

	if (lfd < 0 || fd != lfd)
		return (int)syscall(SYS_accept4, fd, sa, len, flags);
	if (accept_fd < 0) {
		errno = EAGAIN;
		return -1;
	}
	/* the provider asks for a non-blocking close-on-exec socket, which
	 * the socketpair already is */
	r = accept_fd;
	accept_fd = -1;
	mark_shimmed(r, 40000);
	(void)sa;
	(void)len;
	return r;
}

int connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

	if (conn_fd < 0 || !sa || len < sizeof(*in) || sa->sa_family != AF_INET ||
	    ntohs(in->sin_port) != conn_port)
		return (int)syscall(SYS_connect, fd, sa, len);
	/* the provider's socket becomes the socketpair end: non-blocking
	 * like it (a flag of the open file, which the socketpair end was
	 * created with), close-on-exec by dup3 */
	if (dup3(conn_fd, fd, O_CLOEXEC) < 0)
		return -1;
	conn_fd = -1;
	mark_shimmed(fd, conn_port);
	local_port++;
	return 0;
}

static int fake_name(struct sockaddr *sa, socklen_t *len, uint16_t port)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(port) };

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (!sa || !len) {
		errno = EFAULT;
		return -1;
	}
	memcpy(sa, &in, *len < sizeof(in) ? *len : sizeof(in));
	*len = sizeof(in);
	return 0;
}

/* A shimmed socket has the 127.0.0.1 addresses a TCP one would have, so
 * that what the provider and the caller log or announce (SendTargets'
 * TargetAddress) does not change. */
int getsockname(int fd, struct sockaddr *sa, socklen_t *len)
{
	if (!shimmed(fd))
		return (int)syscall(SYS_getsockname, fd, sa, len);
	return fake_name(sa, len, lfd >= 0 ? 3260 : local_port);
}

int getpeername(int fd, struct sockaddr *sa, socklen_t *len)
{
	if (!shimmed(fd))
		return (int)syscall(SYS_getpeername, fd, sa, len);
	return fake_name(sa, len, peer_port);
}
