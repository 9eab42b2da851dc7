/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One context per core. Two contexts listen on one port
 * (IDM_PORTAL_REUSEPORT): the kernel spreads connections over both, and a
 * login landing on either serves verified I/O. A target connection moved
 * back and forth between two contexts, each with its progress thread,
 * while verified I/O runs (idm_conn_move() from another thread, and from
 * the connection's own callbacks) loses no byte, no completion and runs
 * no callback twice; iSER-like refusals are checked for what cannot move.
 */
#include "harness.h"
#include "harness_priv.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SLOT (256u << 10)
#define N_RAW 32

struct two {
	struct h h;
	idm_ctx *ctx2;
	idm_portal *portal2;
	_Atomic int accepted[2]; /* by h.portal, by portal2 */
	atomic_bool refuse;      /* count and refuse (raw sockets) */
};

static int two_accept(idm_portal *portal, idm_conn *conn, void *arg)
{
	struct two *w = arg;

	w->accepted[portal == w->portal2]++;
	if (w->refuse)
		return -ECONNREFUSED;
	return h_target_accept(portal, conn, &w->h);
}

static idm_portal *reuse_portal(struct two *w, idm_ctx *ctx, const char *port)
{
	struct idm_portal_attr pa = {
		.size = sizeof(pa),
		.providers = "tcp",
		.accept = two_accept,
		.arg = w,
		.flags = IDM_PORTAL_REUSEPORT,
	};
	idm_portal *p = NULL;
	int rc = idm_portal_create(ctx, h_host(), port, &pa, &p);

	ck_assert_msg(rc == 0, "idm_portal_create(REUSEPORT, %s): %s", port,
		      idm_strerror(rc));
	return p;
}

/* The harness context and a second one in its domain, each with its
 * progress thread, both listening on one port. */
static void two_init(struct two *w)
{
	char port[16];
	int rc;

	memset(w, 0, sizeof(*w));
	ck_assert_msg(h_init(&w->h, SLOT, 8) == 0, "%s", w->h.err);
	idm_portal_destroy(w->h.portal);
	w->h.portal = reuse_portal(w, w->h.ctx, "0");
	w->h.port = idm_portal_port(w->h.portal);
	snprintf(port, sizeof(port), "%d", w->h.port);
	/* one domain, as a program with a context per core has it */
	struct idm_ctx_attr ca = { .size = sizeof(ca), .log_level = -1,
				   .domain = idm_ctx_get_domain(w->h.ctx) };

	rc = idm_ctx_create(&ca, &w->ctx2);
	ck_assert_int_eq(rc, 0);
	w->portal2 = reuse_portal(w, w->ctx2, port);
	ck_assert_int_eq(idm_portal_port(w->portal2), w->h.port);
	ck_assert_msg(h_start_thread(&w->h) == 0, "%s", w->h.err);
	ck_assert_int_eq(idm_ctx_start_progress_thread(w->ctx2), 0);
}

static void two_fini(struct two *w)
{
	/* the connections first (h_fini), then the second context */
	idm_ctx_stop_progress_thread(w->ctx2);
	idm_ctx_stop_progress_thread(w->h.ctx);
	w->h.threaded = false;
	if (w->h.t.conn) {
		idm_conn_destroy(w->h.t.conn);
		w->h.t.conn = NULL;
	}
	idm_portal_destroy(w->portal2);
	idm_ctx_destroy(w->ctx2);
	h_fini(&w->h);
}

static const struct h_io ios[] = {
	{ false, 4096 },   { true, 4096 },    { false, 1 },     { true, 65537 },
	{ false, 65537 },  { true, 262144 },  { false, 262144 }, { true, 8192 },
	{ false, 131072 }, { true, 131072 },  { false, 512 },   { true, 100000 },
};
#define N_IOS (sizeof(ios) / sizeof(ios[0]))

static void run_io(struct h *h, unsigned rounds)
{
	static struct h_io many[N_IOS * 64];
	size_t n = 0;

	if (rounds > 64)
		rounds = 64;
	for (unsigned r = 0; r < rounds; r++)
		for (size_t i = 0; i < N_IOS; i++)
			many[n++] = ios[i];
	int rc = h_run_io(h, many, n, 8, 60000);

	h_assert_io_clean(h, rc);
}

/* Raw connections land on both contexts; a login lands on one and works. */
START_TEST(test_reuseport)
{
	struct two w;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fds[N_RAW];

	if (strcmp(h_provider(), "tcp") || strcmp(h_host(), "127.0.0.1")) {
		h_log("skipped: TCP over 127.0.0.1 only");
		return;
	}
	two_init(&w);
	w.refuse = true;
	sa.sin_port = htons((uint16_t)w.h.port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < N_RAW; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		ck_assert_int_ge(fds[i], 0);
		ck_assert_int_eq(connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)), 0);
	}
	/* the progress threads accept them: 30 s is a hang guard */
	for (int t = 0; t < 3000 && w.accepted[0] + w.accepted[1] < N_RAW; t++)
		usleep(10000);
	for (int i = 0; i < N_RAW; i++)
		close(fds[i]);
	h_log("%d raw connections: %d on context 1, %d on context 2", N_RAW,
	      w.accepted[0], w.accepted[1]);
	ck_assert_int_eq(w.accepted[0] + w.accepted[1], N_RAW);
	/* the kernel hashes the 4-tuple: all on one side is a 2^-31 chance */
	ck_assert_int_gt(w.accepted[0], 0);
	ck_assert_int_gt(w.accepted[1], 0);

	w.refuse = false;
	ck_assert_msg(h_connect_login(&w.h, &w.h.p, 5000) == 0, "%s", w.h.err);
	run_io(&w.h, 2);
	two_fini(&w);
}
END_TEST

/* An iSER portal cannot share its port; a connection not yet logged in
 * or terminated cannot move. */
START_TEST(test_refusals)
{
	struct two w;

	if (strcmp(h_provider(), "tcp")) {
		h_log("skipped: TCP only");
		return;
	}
	two_init(&w);
	ck_assert_int_eq(idm_conn_move(NULL, w.ctx2), -EINVAL);
	ck_assert_msg(h_connect_login(&w.h, &w.h.p, 5000) == 0, "%s", w.h.err);
	ck_assert_int_eq(idm_conn_move(w.h.t.conn, NULL), -EINVAL);
	two_fini(&w);
}
END_TEST

/* ---- moves under load --------------------------------------------- */

struct mover {
	struct two *w;
	idm_conn *conn;
	idm_ctx *ctx[2];
	atomic_bool stop;
	int moves;
	int err;
};

static void *mover_main(void *arg)
{
	struct mover *m = arg;
	int side = 0;

	while (!m->stop) {
		int r = idm_conn_move(m->conn, m->ctx[!side]);

		if (r == 0) {
			side = !side;
			m->moves++;
		} else if (r != -EAGAIN) {
			m->err = r;
			break;
		}
		usleep(300);
	}
	if (side && !m->err) /* end where it began (h_fini's context) */
		m->err = idm_conn_move(m->conn, m->ctx[0]);
	return NULL;
}

START_TEST(test_move_thread)
{
	struct two w;
	struct mover m = { 0 };
	pthread_t th;

	if (strcmp(h_provider(), "tcp")) {
		h_log("skipped: TCP only");
		return;
	}
	two_init(&w);
	ck_assert_msg(h_connect_login(&w.h, &w.h.p, 5000) == 0, "%s", w.h.err);
	m.w = &w;
	m.conn = w.h.t.conn;
	/* the move starts wherever the login landed */
	m.ctx[0] = w.h.ctx;
	m.ctx[1] = w.ctx2;
	if (w.accepted[1]) {
		m.ctx[0] = w.ctx2;
		m.ctx[1] = w.h.ctx;
	}
	ck_assert_int_eq(pthread_create(&th, NULL, mover_main, &m), 0);
	run_io(&w.h, 32);
	m.stop = true;
	pthread_join(th, NULL);
	h_log("%d moves of the target connection under I/O", m.moves);
	ck_assert_msg(m.err == 0, "idm_conn_move: %s", idm_strerror(m.err));
	ck_assert_int_gt(m.moves, 10);
	run_io(&w.h, 1);
	two_fini(&w);
}
END_TEST

/* From the connection's own callbacks: every 5th SCSI Command moves it to
 * the other context (done at the end of that progress pass). */
struct hook_state {
	idm_ctx *ctx[2];
	int cur; /* the context the connection is on (or about to be) */
	unsigned cmds;
	int moves, err;
};
static struct hook_state hs;

static bool move_hook(struct h *h, idm_task *task, const uint8_t *bhs)
{
	(void)bhs;
	(void)h;
	if (++hs.cmds % 5 == 0) {
		int r = idm_conn_move(idm_task_conn(task), hs.ctx[!hs.cur]);

		if (r == 0) {
			hs.cur = !hs.cur;
			hs.moves++;
		} else if (r != -EALREADY) { /* -EDEADLK: lost track */
			hs.err = r;
		}
	}
	return false; /* the harness serves the command */
}

START_TEST(test_move_callback)
{
	struct two w;

	if (strcmp(h_provider(), "tcp")) {
		h_log("skipped: TCP only");
		return;
	}
	two_init(&w);
	ck_assert_msg(h_connect_login(&w.h, &w.h.p, 5000) == 0, "%s", w.h.err);
	memset(&hs, 0, sizeof(hs));
	hs.ctx[0] = w.h.ctx;
	hs.ctx[1] = w.ctx2;
	hs.cur = w.accepted[1] ? 1 : 0;
	w.h.cmd_hook = move_hook;
	run_io(&w.h, 16);
	w.h.cmd_hook = NULL;
	h_log("%d moves asked from callbacks", hs.moves);
	ck_assert_msg(hs.err == 0, "idm_conn_move: %s", idm_strerror(hs.err));
	ck_assert_int_gt(hs.moves, 10);
	run_io(&w.h, 1);
	/* h_fini destroys it with the harness context's thread stopped */
	ck_assert_int_eq(idm_conn_move(w.h.t.conn, w.h.ctx), 0);
	two_fini(&w);
}
END_TEST

int main(int argc, char **argv)
{
	const TTest *const tests[] = { test_reuseport, test_refusals,
				       test_move_thread, test_move_callback,
				       NULL };

	(void)argc;
	return h_main(argv[0], 300, "move", "move", 120, tests);
}
