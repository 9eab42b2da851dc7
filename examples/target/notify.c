/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sd_notify protocol by hand: one datagram of "KEY=VALUE\n" lines to
 * the AF_UNIX socket named by NOTIFY_SOCKET ('@' for the abstract
 * namespace). Written here so that the target does not need libsystemd.
 */
#include "notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int notify_send(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[256];
	size_t plen;
	socklen_t salen;
	struct timespec ts;
	int fd, n, r = 0;

	if (!path || !*path)
		return 0;
	plen = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || plen >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, plen);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen +
			    (path[0] == '/' ? 1 : 0));
	/* RELOADING=1 wants MONOTONIC_USEC (systemd 253, Type=notify-reload) */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (!strcmp(state, "RELOADING=1"))
		n = snprintf(msg, sizeof(msg), "%s\nMONOTONIC_USEC=%llu\n", state,
			     (unsigned long long)ts.tv_sec * 1000000ull +
				     (unsigned long long)ts.tv_nsec / 1000);
	else
		n = snprintf(msg, sizeof(msg), "%s\n", state);
	if (n < 0 || (size_t)n >= sizeof(msg))
		return -EINVAL;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, msg, (size_t)n, MSG_NOSIGNAL, (struct sockaddr *)&sa, salen) < 0)
		r = -errno;
	close(fd);
	return r;
}
