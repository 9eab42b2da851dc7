/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iSER faults in the soft-RoCE guest (suite 'rdma'): either side closing,
 * a peer whose QP silently vanishes (detected by the transport retries of
 * the keepalive probe, or by its liveness deadline when retries would take
 * too long), the target process killed in the middle of a 16 MiB transfer
 * and the link going down. Each time the surviving side gets exactly one
 * Connection_Terminate_Notify, within the bound documented in doc/iser.md
 * ("Dead peers"), and no callback after it.
 */
#include <arpa/inet.h>
#include <check.h>
#include "check_suite.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iser_pair.h"
#include "rdma_env.h"

#define MIB (1024u * 1024u)
/* doc/iser.md "Dead peers" with the defaults (keepalive 2 s, liveness
 * 6 s): at most 2 x 2 s + 6 s. TCG guests on a loaded machine stretch
 * timers, hence the margin; the measured time is printed. */
#define DEAD_PEER_BOUND_S 10.0
#define TCG_MARGIN_S 8.0

static const char *ip;

static bool i_term(struct pair *p)
{
	return p->i_terminated > 0;
}

static bool t_term(struct pair *p)
{
	return p->t_terminated > 0;
}

START_TEST(target_closes)
{
	struct pair p;
	struct p_keys k;

	p_keys_default(&k);
	ck_assert_msg(p_init(&p, ip, MIB) == 0, "%s", p.err);
	ck_assert_msg(p_login(&p, &k, 10000) == 0, "%s", p.err);
	ck_assert_msg(p_write_read_verify(&p, 100000, 1) == 0, "%s", p.err);
	idm_connection_terminate(p.tc);
	ck_assert_msg(p_progress_until(&p, i_term, 10000) == 0, "%s", p.err);
	ck_assert_int_lt(p.i_reason, 0);
	for (int i = 0; i < 10; i++)
		idm_ctx_progress(p.ctx, 50);
	ck_assert_int_eq(p.i_terminated, 1);
	ck_assert_int_eq(p.t_terminated, 0); /* not raised after Terminate */
	ck_assert_int_eq(p.cb_after_end, 0);
	printf("target closed: initiator notified once (%s)\n",
	       idm_conn_error(p.ic));
	p_fini(&p);
}
END_TEST

START_TEST(initiator_closes_mid_transfer)
{
	struct pair p;
	struct p_keys k;

	p_keys_default(&k);
	ck_assert_msg(p_init(&p, ip, 16 * MIB) == 0, "%s", p.err);
	ck_assert_msg(p_login(&p, &k, 10000) == 0, "%s", p.err);
	ck_assert_msg(p_io_start(&p, false, 16 * MIB) == 0, "%s", p.err);
	idm_ctx_progress(p.ctx, 5);
	idm_connection_terminate(p.ic);
	ck_assert_msg(p_progress_until(&p, t_term, 10000) == 0, "%s", p.err);
	for (int i = 0; i < 10; i++)
		idm_ctx_progress(p.ctx, 50);
	ck_assert_int_eq(p.t_terminated, 1);
	ck_assert_int_eq(p.i_terminated, 0);
	ck_assert_int_eq(p.cb_after_end, 0);
	p.task = NULL; /* ended with the connection */
	p_fini(&p);
}
END_TEST

/* The target process dies (SIGKILL) while a 16 MiB WRITE is in flight:
 * right after the command was sent, or once the target's RDMA Reads are
 * under way. Either way the initiator's write window is still bound. */
static void target_killed(bool after_rdma_started)
{
	struct pair p;
	struct p_keys k;
	int fds[2], port = 0, status;
	pid_t pid;
	double t0, dt;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* A fresh process: verbs fds inherited over fork() are
		 * refused by the kernel ("changed security contexts"). */
		char fd[16];

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(fds[0]);
		snprintf(fd, sizeof(fd), "%d", fds[1]);
		execl("/proc/self/exe", "test_iser_faults", "--serve-target", fd,
		      (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	ck_assert_int_eq(read(fds[0], &port, sizeof(port)), (ssize_t)sizeof(port));

	p_keys_default(&k);
	ck_assert_msg(p_init(&p, ip, 16 * MIB) == 0, "%s", p.err);
	p.remote_port = port;
	/* the child's target needs the same keys: it builds them itself
	 * from the defaults, as do we */
	ck_assert_msg(p_login(&p, &k, 20000) == 0, "%s", p.err);
	ck_assert_msg(p_io_start(&p, true, 16 * MIB) == 0, "%s", p.err);
	if (after_rdma_started) {
		/* the target says when its Get_Data returned; the RDMA
		 * Reads of 16 MiB then take about 0.5 s in the guest */
		struct pollfd pfd = {.fd = fds[0], .events = POLLIN};

		t0 = p_now();
		while (poll(&pfd, 1, 0) != 1) {
			ck_assert_msg(p_now() - t0 < 30, "the target never started");
			idm_ctx_progress(p.ctx, 5);
		}
	} else {
		for (int i = 0; i < 3; i++)
			idm_ctx_progress(p.ctx, 10);
	}
	close(fds[0]);
	t0 = p_now();
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ck_assert_msg(p_progress_until(&p, i_term, 60000) == 0,
		      "no Connection_Terminate_Notify: %s", p.err);
	dt = p_now() - t0;
	for (int i = 0; i < 10; i++)
		idm_ctx_progress(p.ctx, 50);
	ck_assert_int_eq(p.i_terminated, 1);
	ck_assert_int_eq(p.cb_after_end, 0);
	printf("target killed %s: initiator notified once after %.2f s (%s)\n",
	       after_rdma_started ? "during its RDMA Reads" : "after the command",
	       dt, idm_conn_error(p.ic));
	ck_assert_msg(dt < DEAD_PEER_BOUND_S + TCG_MARGIN_S,
		      "detection took %.1f s", dt);
	p.task = NULL;
	/* with windows still bound to the QP this took 50 s in rxe (see
	 * quiesce() in iser_conn.c) */
	t0 = p_now();
	p_fini(&p);
	dt = p_now() - t0;
	printf("target killed: connection destroyed after %.2f s more\n", dt);
	ck_assert_msg(dt < 10, "destroying the connection took %.1f s", dt);
}

START_TEST(target_killed_after_command)
{
	target_killed(false);
}
END_TEST

START_TEST(target_killed_mid_transfer)
{
	target_killed(true);
}
END_TEST

/* ---- a peer whose QP vanishes without a word ----------------------------
 * A bare librdmacm passive side accepts the iSER connection, then destroys
 * its QP but keeps its cm_id: no DREQ is sent, the packets of the
 * initiator's keepalive probe are dropped by the peer device, and only the
 * probe's retries or its liveness deadline can end the connection. */

struct silent {
	struct rdma_event_channel *ech;
	struct rdma_cm_id *lid, *id;
	bool established;
	idm_ctx *ctx;
	idm_conn *c;
	bool connected;
	int connect_status;
	int terminated, reason, cb_after_end;
};

static void s_connected(idm_conn *c, int status, void *arg)
{
	struct silent *s = arg;

	(void)c;
	s->connected = true;
	s->connect_status = status;
}

static void s_control(idm_conn *c, idm_pdu *pdu, void *arg)
{
	struct silent *s = arg;

	(void)c;
	(void)pdu;
	if (s->terminated)
		s->cb_after_end++;
}

static void s_term(idm_conn *c, int reason, void *arg)
{
	struct silent *s = arg;

	(void)c;
	if (s->terminated)
		s->cb_after_end++;
	s->terminated++;
	s->reason = reason;
}

static const struct idm_conn_cbs s_cbs = {
	.size = sizeof(struct idm_conn_cbs),
	.connected = s_connected,
	.control_notify = s_control,
	.connection_terminate_notify = s_term,
};

/* The passive side's CM events; returns false on a failure. */
static bool s_cm_events(struct silent *s)
{
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(s->ech, &ev) == 0) {
		enum rdma_cm_event_type type = ev->event;
		struct rdma_cm_id *id = ev->id;

		rdma_ack_cm_event(ev);
		if (type == RDMA_CM_EVENT_CONNECT_REQUEST && !s->id) {
			struct ibv_qp_init_attr qa = {
				.cap = {.max_send_wr = 4, .max_recv_wr = 4,
					.max_send_sge = 1, .max_recv_sge = 1},
				.qp_type = IBV_QPT_RC,
			};
			/* the iSER word: no ZBVA, no Send with Invalidate */
			uint8_t word[4] = {0xc0, 0, 0, 0};
			struct rdma_conn_param cp = {
				.private_data = word, .private_data_len = 4,
				.responder_resources = 1, .initiator_depth = 1,
				.retry_count = 6, .rnr_retry_count = 6,
			};

			s->id = id;
			if (rdma_create_qp(id, NULL, &qa) || rdma_accept(id, &cp))
				return false;
		} else if (type == RDMA_CM_EVENT_ESTABLISHED && id == s->id) {
			s->established = true;
		}
	}
	return errno == EAGAIN || errno == EWOULDBLOCK;
}

/* Connect, let it idle for a few probe periods, kill the peer's QP and
 * return the seconds until the one notification. */
static double silent_peer_run(struct silent *s, const char *note)
{
	struct idm_conn_attr ca = {.size = sizeof(ca), .provider = "iser",
				   .cbs = &s_cbs};
	struct sockaddr_in sa = {.sin_family = AF_INET};
	char port[16];
	double t0, dt;

	memset(s, 0, sizeof(*s));
	ca.arg = s;
	ck_assert_int_eq(inet_pton(AF_INET, ip, &sa.sin_addr), 1);
	s->ech = rdma_create_event_channel();
	ck_assert_ptr_nonnull(s->ech);
	ck_assert_int_eq(fcntl(s->ech->fd, F_SETFL,
			       fcntl(s->ech->fd, F_GETFL) | O_NONBLOCK), 0);
	ck_assert_int_eq(rdma_create_id(s->ech, &s->lid, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(rdma_bind_addr(s->lid, (struct sockaddr *)&sa), 0);
	ck_assert_int_eq(rdma_listen(s->lid, 1), 0);
	snprintf(port, sizeof(port), "%u", ntohs(rdma_get_src_port(s->lid)));

	ck_assert_int_eq(idm_ctx_create(NULL, &s->ctx), 0);
	ck_assert_int_eq(idm_conn_connect(s->ctx, ip, port, &ca, &s->c), 0);
	t0 = p_now();
	while (!(s->connected && s->established) && p_now() - t0 < 20) {
		ck_assert(s_cm_events(s));
		idm_ctx_progress(s->ctx, 20);
	}
	ck_assert_msg(s->connected && s->connect_status == 0 && s->established,
		      "connect: %d (%s)", s->connect_status,
		      idm_conn_error(s->c));
	/* idle but alive: the probes are answered */
	t0 = p_now();
	while (p_now() - t0 < 3) {
		ck_assert(s_cm_events(s));
		idm_ctx_progress(s->ctx, 50);
	}
	ck_assert_int_eq(s->terminated, 0);

	rdma_destroy_qp(s->id);
	t0 = p_now();
	while (!s->terminated && p_now() - t0 < 90) {
		s_cm_events(s);
		idm_ctx_progress(s->ctx, 50);
	}
	dt = p_now() - t0;
	for (int i = 0; i < 10; i++)
		idm_ctx_progress(s->ctx, 20);
	printf("silent peer (%s): %d notification(s) after %.2f s (%s)\n",
	       note, s->terminated, dt, idm_conn_error(s->c));
	ck_assert_int_eq(s->terminated, 1);
	ck_assert_int_lt(s->reason, 0);
	ck_assert_int_eq(s->cb_after_end, 0);
	return dt;
}

static void silent_peer_fini(struct silent *s)
{
	if (s->c)
		idm_conn_destroy(s->c);
	if (s->ctx)
		idm_ctx_destroy(s->ctx);
	if (s->id)
		rdma_destroy_id(s->id);
	if (s->lid)
		rdma_destroy_id(s->lid);
	if (s->ech)
		rdma_destroy_event_channel(s->ech);
	unsetenv("IDM_ISER_ACK_TIMEOUT");
	unsetenv("IDM_ISER_KEEPALIVE_MS");
	unsetenv("IDM_ISER_LIVENESS_MS");
}

/* Default options: the probe's retries, (6 + 1) x 67 ms, end it. */
START_TEST(silent_peer_retries)
{
	struct silent s;
	double dt;

	dt = silent_peer_run(&s, "defaults");
	ck_assert_msg(strstr(idm_conn_error(s.c), "keepalive probe failed"),
		      "%s", idm_conn_error(s.c));
	ck_assert_msg(dt < DEAD_PEER_BOUND_S + TCG_MARGIN_S,
		      "detection took %.1f s", dt);
	silent_peer_fini(&s);
}
END_TEST

/* Retries that would take 7 x 4.6 min: the liveness deadline ends it,
 * within 2 x keepalive + liveness. */
START_TEST(silent_peer_deadline)
{
	struct silent s;
	double dt;

	setenv("IDM_ISER_ACK_TIMEOUT", "26", 1);
	setenv("IDM_ISER_KEEPALIVE_MS", "1000", 1);
	setenv("IDM_ISER_LIVENESS_MS", "3000", 1);
	dt = silent_peer_run(&s, "ACK timeout 4.6 min, keepalive 1 s, liveness 3 s");
	ck_assert_msg(strstr(idm_conn_error(s.c), "not completed after"),
		      "%s", idm_conn_error(s.c));
	ck_assert_msg(dt >= 2.5, "deadline fired early: %.2f s", dt);
	ck_assert_msg(dt < 2 * 1 + 3 + TCG_MARGIN_S, "detection took %.1f s", dt);
	silent_peer_fini(&s);
}
END_TEST

static bool both_term(struct pair *p)
{
	return p->i_terminated > 0 && p->t_terminated > 0;
}

/* The RDMA link goes away under an idle, logged-in connection: nothing is
 * being sent, so only the provider's keepalive can notice. Both sides must
 * report it once, within the documented bound (doc/iser.md). Runs last: it
 * takes the link down and brings it back. */
START_TEST(link_down_idle)
{
	struct pair p;
	struct p_keys k;
	double t0, dt;
	char cmd[128];
	const char *dev = getenv("IDM_RDMA_NETDEV");

	if (!dev)
		dev = "rdma0";
	p_keys_default(&k);
	ck_assert_msg(p_init(&p, ip, MIB) == 0, "%s", p.err);
	ck_assert_msg(p_login(&p, &k, 10000) == 0, "%s", p.err);
	ck_assert_msg(p_write_read_verify(&p, 100000, 3) == 0, "%s", p.err);
	/* idle: the probes must keep it alive */
	t0 = p_now();
	while (p_now() - t0 < 6)
		idm_ctx_progress(p.ctx, 100);
	ck_assert_int_eq(p.i_terminated + p.t_terminated, 0);
	snprintf(cmd, sizeof(cmd), "ip link set %s down", dev);
	ck_assert_int_eq(system(cmd), 0);
	t0 = p_now();
	p_progress_until(&p, both_term, 60000);
	dt = p_now() - t0;
	snprintf(cmd, sizeof(cmd), "ip link set %s up", dev);
	ck_assert_int_eq(system(cmd), 0);
	printf("link down while idle: initiator %d, target %d notifications "
	       "after %.2f s (%s | %s)\n", p.i_terminated, p.t_terminated, dt,
	       idm_conn_error(p.ic), idm_conn_error(p.tc));
	ck_assert_int_eq(p.i_terminated, 1);
	ck_assert_int_eq(p.t_terminated, 1);
	ck_assert_msg(dt < DEAD_PEER_BOUND_S + TCG_MARGIN_S,
		      "detection took %.1f s", dt);
	ck_assert_int_eq(p.cb_after_end, 0);
	p_fini(&p);
}
END_TEST

/* Child mode of target_killed_mid_transfer: serve a target until killed,
 * after telling the parent the port through fd. */
static int serve_target(int fd)
{
	struct pair t;
	int port;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (p_init(&t, ip, 16 * MIB) < 0)
		return 2;
	p_keys_default(&t.k);
	port = idm_portal_port(t.portal);
	if (write(fd, &port, sizeof(port)) != sizeof(port))
		return 3;
	t.cmd_fd = fd;
	for (;;)
		idm_ctx_progress(t.ctx, 100);
}

int main(int argc, char **argv)
{
	Suite *s;
	TCase *tc;

	ip = rdma_test_ip();
	if (argc == 3 && !strcmp(argv[1], "--serve-target"))
		return serve_target(atoi(argv[2]));
	s = suite_create("iser_faults");
	tc = tcase_create("faults");
	tcase_set_timeout(tc, 200);
	tcase_add_test(tc, target_closes);
	tcase_add_test(tc, initiator_closes_mid_transfer);
	tcase_add_test(tc, silent_peer_retries);
	tcase_add_test(tc, silent_peer_deadline);
	suite_add_tcase(s, tc);
	/* These may leave the guest's rxe unusable for new connections for
	 * a while (after the link flaps, new connections time out): meson
	 * runs them after every other RDMA test. */
	tc = tcase_create("destructive");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, target_killed_after_command);
	tcase_add_test(tc, target_killed_mid_transfer);
	tcase_add_test(tc, link_down_idle);
	suite_add_tcase(s, tc);
	return test_suite_run(s);
}
