/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iSER faults in the soft-RoCE guest (suite 'rdma'): either side closing,
 * and the target process killed in the middle of a 16 MiB transfer. Each
 * time the surviving side gets exactly one Connection_Terminate_Notify,
 * within a bounded time, and no callback after it.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iser_pair.h"
#include "rdma_env.h"

#define MIB (1024u * 1024u)

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

/* The target process dies (SIGKILL) while a 16 MiB WRITE is in flight. */
START_TEST(target_killed_mid_transfer)
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
		struct pair t;

		close(fds[0]);
		if (p_init(&t, ip, 16 * MIB) < 0)
			_exit(2);
		port = idm_portal_port(t.portal);
		if (write(fds[1], &port, sizeof(port)) != sizeof(port))
			_exit(3);
		p_keys_default(&t.k);
		for (;;)
			idm_ctx_progress(t.ctx, 100);
	}
	close(fds[1]);
	ck_assert_int_eq(read(fds[0], &port, sizeof(port)), (ssize_t)sizeof(port));
	close(fds[0]);

	p_keys_default(&k);
	ck_assert_msg(p_init(&p, ip, 16 * MIB) == 0, "%s", p.err);
	p.remote_port = port;
	/* the child's target needs the same keys: it builds them itself
	 * from the defaults, as do we */
	ck_assert_msg(p_login(&p, &k, 20000) == 0, "%s", p.err);
	ck_assert_msg(p_io_start(&p, true, 16 * MIB) == 0, "%s", p.err);
	for (int i = 0; i < 3; i++)
		idm_ctx_progress(p.ctx, 10);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	t0 = p_now();
	ck_assert_msg(p_progress_until(&p, i_term, 60000) == 0,
		      "no Connection_Terminate_Notify: %s", p.err);
	dt = p_now() - t0;
	for (int i = 0; i < 10; i++)
		idm_ctx_progress(p.ctx, 50);
	ck_assert_int_eq(p.i_terminated, 1);
	ck_assert_int_eq(p.cb_after_end, 0);
	printf("target killed: initiator notified once after %.2f s (%s)\n", dt,
	       idm_conn_error(p.ic));
	p.task = NULL;
	p_fini(&p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("iser_faults");
	TCase *tc = tcase_create("faults");
	SRunner *sr;
	int failed;

	ip = rdma_test_ip();
	tcase_set_timeout(tc, 200);
	tcase_add_test(tc, target_closes);
	tcase_add_test(tc, initiator_closes_mid_transfer);
	tcase_add_test(tc, target_killed_mid_transfer);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
