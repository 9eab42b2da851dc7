/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A TCP target out of descriptors must neither spin nor flood its log,
 * and must accept again once descriptors are back.
 *
 * A child process runs a libidm target whose RLIMIT_NOFILE leaves room
 * for ACCEPTABLE connections. The parent opens ACCEPTABLE + EXTRA: the
 * extra ones wait in the listen backlog while accept() fails with EMFILE.
 * For a second the child's CPU time must stay low (a level-triggered
 * listener that is not paused burns the whole second) and the EMFILE
 * warning must come once, not once per wakeup. Then the parent closes the
 * accepted connections; the target, which keeps serving, must accept the
 * waiting ones.
 */
#include <libidm/idm.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#define ACCEPTABLE 4
#define EXTRA	   6 /* more than ACCEPTABLE: some still wait at the end */
#define TOTAL	   (ACCEPTABLE + EXTRA)
/* CPU the target may use in the second it is out of descriptors: ten
 * back-off wakeups cost far less; a spinning loop costs the whole second. */
#define MAX_CPU_MS 100

static int warnings; /* EMFILE warnings the child's context logged */
static int status_fd;

static void log_fn(enum idm_log_level level, const char *msg, void *arg)
{
	(void)arg;
	fprintf(stderr, "target: %s\n", msg);
	if (level <= IDM_LOG_WARN && strstr(msg, "accept"))
		warnings++;
}

static void term_notify(idm_conn *conn, int reason, void *arg)
{
	(void)reason;
	(void)arg;
	(void)conn;
}

static int on_accept(idm_portal *p, idm_conn *conn, void *arg)
{
	static const struct idm_conn_cbs cbs = {
		.size = sizeof(cbs),
		.connection_terminate_notify = term_notify,
	};

	(void)p;
	(void)arg;
	if (idm_conn_set_cbs(conn, &cbs, NULL) < 0)
		return -1;
	/* tell the parent: one byte per accepted connection */
	if (write(status_fd, "a", 1) != 1)
		return -1;
	return 0;
}

/* The highest descriptor open, with every free one below it taken (by
 * /dev/null), so that the first ACCEPTABLE above it are all accept()
 * gets: descriptors inherited from whoever started the test leave
 * holes. -1 on failure. */
static int fill_holes(void)
{
	int hi = 0;

	for (int fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			hi = fd;
	for (;;) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return -1;
		if (fd > hi) {
			close(fd);
			return hi;
		}
	}
}

/* The child: a target with little room for descriptors. Reports its port
 * as "p PORT\n", a byte per accept, and at the end "w N\n" (warnings). */
static int child(int out, int ctl)
{
	struct idm_ctx_attr ca = { .size = sizeof(ca), .log_fn = log_fn,
				   .log_level = IDM_LOG_WARN };
	struct idm_portal_attr pa = { .size = sizeof(pa), .providers = "tcp",
				      .accept = on_accept };
	struct rlimit rl;
	idm_ctx *ctx;
	idm_portal *portal;
	char line[32];
	int r, hi;

	status_fd = out;
	if ((r = idm_ctx_create(&ca, &ctx)) < 0 ||
	    (r = idm_portal_create(ctx, "127.0.0.1", "0", &pa, &portal)) < 0) {
		fprintf(stderr, "target: %s\n", idm_strerror(r));
		return r == -ENOENT ? 77 : 1;
	}
	/* descriptors from here on: ACCEPTABLE sockets and nothing else */
	getrlimit(RLIMIT_NOFILE, &rl);
	hi = fill_holes();
	rl.rlim_cur = (rlim_t)hi + 1 + ACCEPTABLE;
	if (hi < 0 || setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		perror("setrlimit");
		return 1;
	}
	snprintf(line, sizeof(line), "p %d\n", idm_portal_port(portal));
	if (write(out, line, strlen(line)) < 0)
		return 1;
	for (;;) {
		struct pollfd pf = { .fd = ctl, .events = POLLIN };

		idm_ctx_progress(ctx, 20);
		if (poll(&pf, 1, 0) > 0)
			break; /* the parent is done */
	}
	snprintf(line, sizeof(line), "w %d\n", warnings);
	if (write(out, line, strlen(line)) < 0)
		return 1;
	idm_portal_destroy(portal);
	idm_ctx_destroy(ctx);
	return 0;
}

static long cpu_ms(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	p = strrchr(buf, ')');
	/* after "pid (comm)": state is field 3, utime 14, stime 15 */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			 &ut, &st) != 2)
		return -1;
	return (long)((ut + st) * 1000 / (unsigned long)sysconf(_SC_CLK_TCK));
}

/* Accept bytes from the child until `want` in total or the deadline. */
static int wait_accepts(int in, int have, int want, int ms)
{
	while (have < want) {
		struct pollfd pf = { .fd = in, .events = POLLIN };
		char c;

		if (poll(&pf, 1, ms) <= 0)
			break;
		if (read(in, &c, 1) != 1)
			break;
		if (c == 'a')
			have++;
	}
	return have;
}

int main(void)
{
	int up[2], down[2], s[TOTAL], port = 0, got, fails = 0, warn = -1;
	long cpu0, cpu1;
	char line[32];
	size_t n = 0;
	pid_t pid;

	signal(SIGPIPE, SIG_IGN);
	if (pipe(up) < 0 || pipe(down) < 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		_exit(child(up[1], down[0]));
	}
	close(up[1]);
	close(down[0]);
	/* "p PORT\n" */
	while (n < sizeof(line) - 1 && read(up[0], line + n, 1) == 1 &&
	       line[n] != '\n')
		n++;
	line[n] = '\0';
	if (sscanf(line, "p %d", &port) != 1) {
		int st = 0;

		waitpid(pid, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
			printf("SKIP: the tcp provider is not available\n");
			return 77;
		}
		fprintf(stderr, "FAIL: the target did not start\n");
		return 1;
	}
	for (int i = 0; i < TOTAL; i++) {
		struct sockaddr_in sa = { .sin_family = AF_INET,
					  .sin_port = htons((uint16_t)port) };

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		s[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s[i] < 0 ||
		    connect(s[i], (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			perror("connect");
			return 1;
		}
	}
	got = wait_accepts(up[0], 0, ACCEPTABLE, 2000);
	printf("accepted %d of %d while %d fit\n", got, TOTAL, ACCEPTABLE);
	if (got != ACCEPTABLE) {
		fprintf(stderr, "FAIL: expected exactly %d accepts\n", ACCEPTABLE);
		fails++;
	}
	/* out of descriptors with connections waiting: does it spin? */
	cpu0 = cpu_ms(pid);
	got = wait_accepts(up[0], got, TOTAL, 1000);
	cpu1 = cpu_ms(pid);
	printf("target CPU in 1 s out of descriptors: %ld ms (limit %d)\n",
	       cpu1 - cpu0, MAX_CPU_MS);
	if (cpu0 < 0 || cpu1 - cpu0 > MAX_CPU_MS) {
		fprintf(stderr, "FAIL: the target busy-loops on EMFILE\n");
		fails++;
	}
	/* descriptors come back: the waiting connections get in */
	for (int i = 0; i < ACCEPTABLE; i++)
		close(s[i]);
	got = wait_accepts(up[0], got, 2 * ACCEPTABLE, 3000);
	printf("accepted %d after closing %d\n", got, ACCEPTABLE);
	if (got != 2 * ACCEPTABLE) {
		fprintf(stderr, "FAIL: the target did not accept again\n");
		fails++;
	}
	if (write(down[1], "q", 1) != 1)
		fails++;
	n = 0;
	for (;;) {
		char c;

		if (read(up[0], &c, 1) != 1)
			break;
		if (c == 'a')
			continue;
		if (n < sizeof(line) - 1)
			line[n++] = c;
		if (c == '\n')
			break;
	}
	line[n] = '\0';
	if (sscanf(line, "w %d", &warn) != 1 || warn < 1 || warn > 2) {
		fprintf(stderr,
			"FAIL: %d accept warnings logged, want 1 (rate-limited)\n",
			warn);
		fails++;
	}
	for (int i = ACCEPTABLE; i < TOTAL; i++)
		close(s[i]);
	{
		int st = 0;

		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fails++;
	}
	printf("%s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
