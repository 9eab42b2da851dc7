/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The shared datamover layer of <libidm/provider.h>: the opcode table
 * (who sends what in which phase), unsolicited and immediate data
 * accounting, and the core's record of a task's in-flight Put_Data /
 * Get_Data ranges.
 */
#include "unit.h"
#include "core.h"

#include <string.h>

START_TEST(opcodes_login_phase)
{
	const enum idm_conn_phase L = IDM_CONN_PHASE_LOGIN;

	/* received by a target: only the Login Request */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, ISCSI_OP_LOGIN_REQ, L,
					       IDM_PROV_OP_DATA), 0);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, ISCSI_OP_SCSI_CMD, L,
					       IDM_PROV_OP_DATA), -ENOTCONN);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, ISCSI_OP_DATA_OUT, L,
					       IDM_PROV_OP_DATA), -ENOTCONN);
	/* received by an initiator: Login Response and Reject */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, ISCSI_OP_LOGIN_RSP, L,
					       IDM_PROV_OP_DATA), 0);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, ISCSI_OP_REJECT, L,
					       IDM_PROV_OP_DATA), 0);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, ISCSI_OP_DATA_IN, L,
					       IDM_PROV_OP_DATA), -ENOTCONN);
	/* sent by the caller during login */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, ISCSI_OP_REJECT, L, 0), 0);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, ISCSI_OP_NOP_OUT, L, 0),
			 -ENOTCONN);
}
END_TEST

START_TEST(opcodes_full_feature_phase)
{
	const enum idm_conn_phase F = IDM_CONN_PHASE_FFP;
	static const uint8_t ini_ops[] = { 0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x10 };
	static const uint8_t tgt_ops[] = { 0x20, 0x21, 0x22, 0x24, 0x25,
					   0x26, 0x31, 0x32, 0x3f };

	for (unsigned op = 0; op < 256; op++) {
		bool by_i = memchr(ini_ops, (int)(op & 0x3f), sizeof(ini_ops)) != NULL;
		bool by_t = memchr(tgt_ops, (int)(op & 0x3f), sizeof(tgt_ops)) != NULL;
		bool data = (op & 0x3f) == ISCSI_OP_DATA_OUT || (op & 0x3f) == ISCSI_OP_DATA_IN ||
			    (op & 0x3f) == ISCSI_OP_R2T;

		/* what a provider receives: the datamover's PDUs included */
		ck_assert_msg((idm_prov_opcode_check(IDM_ROLE_INITIATOR, (uint8_t)op, F,
						     IDM_PROV_OP_DATA) == 0) == by_i,
			      "from the initiator, opcode 0x%02x", op);
		ck_assert_msg((idm_prov_opcode_check(IDM_ROLE_TARGET, (uint8_t)op, F,
						     IDM_PROV_OP_DATA) == 0) == by_t,
			      "from the target, opcode 0x%02x", op);
		/* what a caller sends: not the datamover's */
		ck_assert_msg((idm_prov_opcode_check(IDM_ROLE_INITIATOR, (uint8_t)op, F, 0) ==
			       0) == (by_i && !data),
			      "Send_Control by the initiator, opcode 0x%02x", op);
		ck_assert_msg((idm_prov_opcode_check(IDM_ROLE_TARGET, (uint8_t)op, F, 0) ==
			       0) == (by_t && !data),
			      "Send_Control by the target, opcode 0x%02x", op);
	}
	/* a Login PDU in full feature phase is a protocol error */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, ISCSI_OP_LOGIN_REQ, F, 0),
			 -EPROTO);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, ISCSI_OP_LOGIN_RSP, F,
					       IDM_PROV_OP_DATA), -EPROTO);
	/* wrong direction */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, ISCSI_OP_SCSI_CMD, F, 0),
			 -EINVAL);
	/* other phases: nothing */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, ISCSI_OP_NOP_OUT,
					       IDM_CONN_PHASE_FAILED, 0), -ENOTCONN);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, ISCSI_OP_NOP_OUT,
					       IDM_CONN_PHASE_CONNECTING, 0), -ENOTCONN);
}
END_TEST


/* ---- the record of transfers in flight ------------------------------ */

static int count_xfer(struct idm_task *t, const struct idm_prov_xfer *x, void *arg)
{
	(void)t;
	(void)x;
	++*(int *)arg;
	return 0;
}

static int xfers(idm_task *t)
{
	int n = 0;

	idm_prov_task_foreach_xfer(t, count_xfer, &n);
	return n;
}

/* A target connection in full feature phase on the fake provider, with
 * the task of ITT 0x42 and a 64 KiB buffer. */
static idm_conn *ffp_target(idm_ctx **ctx, idm_task **t, idm_buf **buf)
{
	idm_portal *portal;
	idm_conn *conn;
	uint8_t rsp[ISCSI_BHS_LEN];

	unit_use_providers("good", "fake");
	*ctx = unit_ctx();
	conn = unit_target(*ctx, &portal, false);
	unit_bhs(rsp, ISCSI_OP_LOGIN_RSP, 0);
	ck_assert_int_eq(idm_enable_datamover(conn, rsp, NULL, 0), 0);
	ck_assert_int_eq(idm_buf_alloc(*ctx, 65536, buf), 0);
	ck_assert_int_eq(idm_prov_task_new(conn, 0x42, t), 0);
	return conn;
}

START_TEST(xfer_recorded_until_completion)
{
	uint8_t r2t[ISCSI_BHS_LEN], din[ISCSI_BHS_LEN];
	const struct idm_prov_xfer *x;
	idm_ctx *ctx;
	idm_task *t;
	idm_buf *buf;
	idm_conn *conn = ffp_target(&ctx, &t, &buf);

	unit_bhs(r2t, ISCSI_OP_R2T, 0x42);
	unit_bhs(din, ISCSI_OP_DATA_IN, 0x42);
	ck_assert_int_eq(xfers(t), 0);
	ck_assert_int_eq(idm_get_data(t, r2t, buf, 1024, 4096, 8192, 0), 0);
	/* recorded before the provider saw it: where the bytes go */
	x = idm_prov_task_xfer_cover(t, IDM_DATA_OUT, 4096, 8192);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(x->dir, IDM_DATA_OUT);
	ck_assert_uint_eq(x->offset, 4096);
	ck_assert_uint_eq(x->length, 8192);
	ck_assert_ptr_eq(x->buf, buf);
	ck_assert_uint_eq(x->buf_off, 1024);
	ck_assert_ptr_eq(x->addr, (uint8_t *)idm_buf_addr(buf) + 1024);
	ck_assert_ptr_eq(idm_prov_task_xfer_cover(t, IDM_DATA_OUT, 8192, 100), x);
	ck_assert_ptr_null(idm_prov_task_xfer_cover(t, IDM_DATA_OUT, 4000, 200));
	ck_assert_ptr_null(idm_prov_task_xfer_cover(t, IDM_DATA_OUT, 12288, 1));
	ck_assert_ptr_null(idm_prov_task_xfer_cover(t, IDM_DATA_IN, 4096, 1));
	/* the fake moves one transfer at a time: the refused one is not kept */
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 100, 0), -EBUSY);
	ck_assert_int_eq(xfers(t), 1);
	/* the completion forgets it */
	ck_assert(unit_progress_until(ctx, &unit_ev.completions));
	ck_assert_int_eq(xfers(t), 0);
	ck_assert_ptr_null(idm_prov_task_xfer_cover(t, IDM_DATA_OUT, 4096, 8192));
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 100, 0), 0);
	ck_assert_ptr_nonnull(idm_prov_task_xfer_cover(t, IDM_DATA_IN, 0, 100));

	idm_deallocate_task_resources(t);
	idm_buf_destroy(buf);
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(xfer_dropped_with_task_and_connection)
{
	uint8_t din[ISCSI_BHS_LEN];
	struct fake_stats *st;
	idm_ctx *ctx;
	idm_task *t, *u;
	idm_buf *buf;
	idm_conn *conn = ffp_target(&ctx, &t, &buf);

	st = unit_fake_stats();
	unit_bhs(din, ISCSI_OP_DATA_IN, 0x42);
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 100, 0), 0);
	ck_assert_int_eq(xfers(t), 1);
	/* freed: the provider cancels (task_free), the core forgets */
	idm_deallocate_task_resources(t);
	ck_assert_int_eq(idm_prov_task_new(conn, 0x43, &u), 0);
	ck_assert_int_eq(xfers(u), 0); /* the recycled task starts empty */
	unit_bhs(din, ISCSI_OP_DATA_IN, 0x43);
	ck_assert_int_eq(idm_put_data(u, din, buf, 0, 0, 100, 0), 0);

	/* the provider's close path: task_free for each, records gone, the
	 * task stays the caller's until it frees it; nothing is notified */
	int frees = st->task_free;
	idm_prov_conn_release_tasks(conn);
	ck_assert_int_eq(st->task_free, frees + 1);
	ck_assert_int_eq(xfers(u), 0);
	ck_assert_int_ge(idm_ctx_progress(ctx, 20), 0);
	ck_assert_int_eq(unit_ev.completions, 0);
	ck_assert_ptr_eq(idm_prov_task_find(conn, 0x43), u);

	idm_deallocate_task_resources(u);
	idm_buf_destroy(buf);
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(xfer_no_malloc_once_warm)
{
	uint8_t din[ISCSI_BHS_LEN];
	const struct idm_prov_xfer *first;
	idm_ctx *ctx;
	idm_task *t;
	idm_buf *buf;
	idm_conn *conn = ffp_target(&ctx, &t, &buf);

	unit_bhs(din, ISCSI_OP_DATA_IN, 0x42);
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 100, 0), 0);
	first = idm_prov_task_xfer_cover(t, IDM_DATA_IN, 0, 100);
	for (int i = 0; i < 100; i++) {
		ck_assert(unit_progress_until(ctx, &unit_ev.completions));
		unit_ev.completions = 0;
		ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 100, 0), 0);
		/* the same record again: from the pool, not malloc */
		ck_assert_ptr_eq(idm_prov_task_xfer_cover(t, IDM_DATA_IN, 0, 100), first);
	}
	idm_deallocate_task_resources(t);
	idm_buf_destroy(buf);
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

static Suite *dm_suite(void)
{
	Suite *s = suite_create("dm");
	TCase *tc = tcase_create("opcode");

	tcase_add_test(tc, opcodes_login_phase);
	tcase_add_test(tc, opcodes_full_feature_phase);
	suite_add_tcase(s, tc);
	tc = tcase_create("xfer");
	tcase_add_test(tc, xfer_recorded_until_completion);
	tcase_add_test(tc, xfer_dropped_with_task_and_connection);
	tcase_add_test(tc, xfer_no_malloc_once_warm);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(dm_suite());
}
