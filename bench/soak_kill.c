/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Killing a session's connection under load, two ways:
 *
 * - abort: idm_connection_terminate() without a Logout, as an initiator
 *   does when it gives up on a connection (the path of a command timeout
 *   or a failed ping). libidm raises no callback for it.
 * - shutdown: shutdown(2) of the connection's TCP socket behind libidm's
 *   back, as when the peer or the network drops it: the provider finds
 *   out by itself and raises Connection_Terminate_Notify.
 *
 * Either way the target sees the connection go with commands in flight,
 * and the session engine (examples/initiator/recovery.c) logs in again,
 * reinstating the session (same ISID, TSIH 0), and sends those commands
 * again.
 */
#include "soak.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

/* "ip:port" / "[ip6]:port" as libidm names the ends of a connection. */
static void sa_name(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		buf[0] = '\0';
	}
}

/* The descriptor of the TCP socket between these two ends, or -1 (iSER
 * has none). libidm does not hand out its descriptors, so look for it. */
static int find_socket(const char *local, const char *peer)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int found = -1;

	if (!d)
		return -1;
	while (found < 0 && (de = readdir(d))) {
		struct sockaddr_storage a, b;
		socklen_t al = sizeof(a), bl = sizeof(b);
		char an[80], bn[80];
		char *end;
		long fd = strtol(de->d_name, &end, 10);

		if (*end || end == de->d_name || fd == dirfd(d))
			continue;
		if (getsockname((int)fd, (struct sockaddr *)&a, &al) < 0 ||
		    getpeername((int)fd, (struct sockaddr *)&b, &bl) < 0)
			continue;
		sa_name(&a, an, sizeof(an));
		sa_name(&b, bn, sizeof(bn));
		if (!strcmp(an, local) && !strcmp(bn, peer))
			found = (int)fd;
	}
	closedir(d);
	return found;
}

enum soak_kill_how soak_kill(struct soak_sess *ss, bool try_shutdown)
{
	struct ini_session *s = &ss->s;

	if (try_shutdown && s->conn) {
		int fd = find_socket(idm_conn_local_name(s->conn),
				     idm_conn_peer_name(s->conn));

		if (fd >= 0 && shutdown(fd, SHUT_RDWR) == 0)
			return SOAK_KILL_SHUTDOWN;
	}
	ini_session_conn_lost(s, -ECONNABORTED,
			      "connection killed by the soak (aborted)");
	return SOAK_KILL_ABORT;
}
