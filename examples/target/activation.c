/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Socket activation without libsystemd. The protocol (sd_listen_fds(3)):
 * the manager passes N descriptors from fd 3 on and sets LISTEN_PID to
 * the pid it started and LISTEN_FDS to N. LISTEN_PID guards against the
 * variables leaking into a process they were not meant for (a child of
 * ours), so a mismatch means "not activated".
 */
#include "activation.h"
#include "ex_log.h"
#include "target.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

/* A whole decimal number in [1, max], or -1. */
static long parse_count(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 1 || v > max)
		return -1;
	return v;
}

int activation_fds(int max)
{
	const char *pid_s = getenv("LISTEN_PID"), *fds_s = getenv("LISTEN_FDS");
	long pid, n;
	int r = 0;

	if (!pid_s || !fds_s)
		goto out;
	pid = parse_count(pid_s, 0x7fffffffL);
	if (pid != (long)getpid())
		goto out; /* meant for another process */
	n = parse_count(fds_s, max);
	if (n < 0) {
		ex_err("socket activation: bad LISTEN_FDS '%s' (1 to %d sockets)",
		       fds_s, max);
		r = -1;
		goto out;
	}
	for (int fd = ACTIVATION_FD_START; fd < ACTIVATION_FD_START + n; fd++) {
		int fl = fcntl(fd, F_GETFD);

		if (fl < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0) {
			ex_err("socket activation: descriptor %d: not open", fd);
			r = -1;
			goto out;
		}
	}
	r = (int)n;
out:
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return r;
}

bool activation_is_listener(int fd)
{
	int v = 0;
	socklen_t len = sizeof(v);

	return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == 0 && v;
}

/* A connection the service manager accepted for us (systemd Accept=yes):
 * the same admission as one from a portal. */
int activation_adopt(int fd)
{
	/* conn_accept() sets the real callbacks: none can run before it
	 * does, callbacks come from idm_ctx_progress() only */
	static const struct idm_conn_cbs none = { .size = sizeof(none) };
	struct idm_conn_attr ca = {
		.size = sizeof(ca),
		.provider = "tcp",
		.cbs = &none,
	};
	idm_conn *ic;
	int r = idm_conn_adopt_fd(g_loop->ctx, fd, IDM_ROLE_TARGET, &ca, &ic);

	if (r < 0)
		return r;
	r = conn_accept(NULL, ic, NULL);
	if (r < 0)
		idm_conn_destroy(ic); /* closes fd: libidm owns it now */
	return r;
}
