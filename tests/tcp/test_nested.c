/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Progress of one context from a callback of another (since 1.3), as a
 * synchronous API layered on libidm does it (libiscsi's iscsi-ls logs in
 * to a target from inside its discovery callback): harness a's target, in
 * the control_notify of a SCSI Command, logs harness b's initiator in to
 * b's target on a second context, running b's progress to completion
 * with a's lock held. Then a's command completes and both connections
 * carry verified I/O. Inside the callback a's own progress stays
 * -EDEADLK.
 */
#include "harness.h"

#include <check.h>
#include <errno.h>

static struct h a, b;
static int nested_login_rc = 1, nested_own_rc = 1, hook_runs;

static bool login_from_callback(struct h *h, idm_task *task, const uint8_t *bhs)
{
	(void)task;
	(void)bhs;
	if (hook_runs++)
		return false;
	nested_own_rc = idm_ctx_progress(h->ctx, 0);
	nested_login_rc = h_connect_login(&b, &b.p, 10000);
	return false; /* the harness serves the command as usual */
}

START_TEST(test_login_on_another_ctx_from_callback)
{
	static const struct h_io io[] = { { true, 65536 }, { false, 65536 } };
	int rc;

	ck_assert_msg(h_init(&a, 256u << 10, 4) == 0, "%s", a.err);
	ck_assert_msg(h_connect_login(&a, &a.p, 10000) == 0, "%s", a.err);
	ck_assert_msg(h_init(&b, 256u << 10, 4) == 0, "%s", b.err);
	a.cmd_hook = login_from_callback;

	rc = h_run_io(&a, io, 1, 1, 20000);
	a.cmd_hook = NULL;
	ck_assert_int_eq(hook_runs, 1);
	ck_assert_int_eq(nested_own_rc, -EDEADLK);
	ck_assert_msg(nested_login_rc == 0, "nested login: %s", b.err);
	ck_assert(b.i.ffp && b.t.ffp);
	h_assert_io_clean(&a, rc);

	/* both contexts carry on as usual */
	h_assert_io_clean(&a, h_run_io(&a, io, 2, 2, 20000));
	h_assert_io_clean(&b, h_run_io(&b, io, 2, 2, 20000));
	h_fini(&b);
	h_fini(&a);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { test_login_on_another_ctx_from_callback, NULL };

	return h_main("test_nested", 110, "tcp_nested", "nested", 60, tests);
}
