/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The shared datamover layer of <libidm/provider.h>: the opcode table
 * (who sends what in which phase), unsolicited and immediate data
 * accounting, and the core's record of a task's in-flight Put_Data /
 * Get_Data ranges.
 */
#include "unit.h"
#include "core.h"
#include "fake_provider.h"

#include <string.h>

START_TEST(opcodes_login_phase)
{
	const enum idm_conn_phase L = IDM_CONN_PHASE_LOGIN;

	/* received by a target: only the Login Request */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, IDM_ISCSI_OP_LOGIN_REQ, L,
					       IDM_PROV_OP_DATA), 0);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, IDM_ISCSI_OP_SCSI_CMD, L,
					       IDM_PROV_OP_DATA), -ENOTCONN);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, IDM_ISCSI_OP_DATA_OUT, L,
					       IDM_PROV_OP_DATA), -ENOTCONN);
	/* received by an initiator: Login Response and Reject */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, IDM_ISCSI_OP_LOGIN_RSP, L,
					       IDM_PROV_OP_DATA), 0);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, IDM_ISCSI_OP_REJECT, L,
					       IDM_PROV_OP_DATA), 0);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, IDM_ISCSI_OP_DATA_IN, L,
					       IDM_PROV_OP_DATA), -ENOTCONN);
	/* sent by the caller during login */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, IDM_ISCSI_OP_REJECT, L, 0), 0);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, IDM_ISCSI_OP_NOP_OUT, L, 0),
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
		bool data = (op & 0x3f) == IDM_ISCSI_OP_DATA_OUT || (op & 0x3f) == IDM_ISCSI_OP_DATA_IN ||
			    (op & 0x3f) == IDM_ISCSI_OP_R2T;

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
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, IDM_ISCSI_OP_LOGIN_REQ, F, 0),
			 -EPROTO);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, IDM_ISCSI_OP_LOGIN_RSP, F,
					       IDM_PROV_OP_DATA), -EPROTO);
	/* wrong direction */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, IDM_ISCSI_OP_SCSI_CMD, F, 0),
			 -EINVAL);
	/* other phases: nothing */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, IDM_ISCSI_OP_NOP_OUT,
					       IDM_CONN_PHASE_FAILED, 0), -ENOTCONN);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, IDM_ISCSI_OP_NOP_OUT,
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
	uint8_t rsp[IDM_ISCSI_BHS_LEN];

	unit_use_providers("good", "fake");
	*ctx = unit_ctx();
	conn = unit_target(*ctx, &portal, false);
	unit_bhs(rsp, IDM_ISCSI_OP_LOGIN_RSP, 0);
	ck_assert_int_eq(idm_enable_datamover(conn, rsp, NULL, 0), 0);
	ck_assert_int_eq(idm_buf_alloc(*ctx, 65536, buf), 0);
	ck_assert_int_eq(idm_prov_task_new(conn, 0x42, t), 0);
	return conn;
}

START_TEST(xfer_recorded_until_completion)
{
	uint8_t r2t[IDM_ISCSI_BHS_LEN], din[IDM_ISCSI_BHS_LEN];
	const struct idm_prov_xfer *x;
	idm_ctx *ctx;
	idm_task *t;
	idm_buf *buf;
	idm_conn *conn = ffp_target(&ctx, &t, &buf);

	unit_bhs(r2t, IDM_ISCSI_OP_R2T, 0x42);
	unit_bhs(din, IDM_ISCSI_OP_DATA_IN, 0x42);
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
	ck_assert_ptr_eq(x->task, t);
	/* the provider's op found it as the newest and wrote its priv */
	ck_assert_ptr_eq(idm_prov_task_xfer_newest(t), x);
	ck_assert_uint_eq(x->priv[0], FAKE_XFER_MARK);
	ck_assert_ptr_eq(idm_prov_xfer_from_priv(idm_prov_xfer_priv(x)), x);
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
	uint8_t din[IDM_ISCSI_BHS_LEN];
	struct fake_stats *st;
	idm_ctx *ctx;
	idm_task *t, *u;
	idm_buf *buf;
	idm_conn *conn = ffp_target(&ctx, &t, &buf);

	st = unit_fake_stats();
	unit_bhs(din, IDM_ISCSI_OP_DATA_IN, 0x42);
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 100, 0), 0);
	ck_assert_int_eq(xfers(t), 1);
	/* freed: the provider cancels (task_free), the core forgets */
	idm_deallocate_task_resources(t);
	ck_assert_int_eq(idm_prov_task_new(conn, 0x43, &u), 0);
	ck_assert_int_eq(xfers(u), 0); /* the recycled task starts empty */
	unit_bhs(din, IDM_ISCSI_OP_DATA_IN, 0x43);
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

/* Walk, newest and the provider's area, with several records at once
 * (the fake holds them for the test to complete). */
START_TEST(xfer_walk_newest_and_priv)
{
	uint8_t r2t[IDM_ISCSI_BHS_LEN], din[IDM_ISCSI_BHS_LEN];
	const struct idm_prov_xfer *a, *b, *c, *x;
	uint64_t *p;
	const size_t last = IDM_PROV_XFER_PRIV / sizeof(*p) - 1;
	idm_ctx *ctx;
	idm_task *t;
	idm_buf *buf;
	idm_conn *conn = ffp_target(&ctx, &t, &buf);

	unit_fake_stats()->xfer_hold = 1;
	unit_bhs(r2t, IDM_ISCSI_OP_R2T, 0x42);
	unit_bhs(din, IDM_ISCSI_OP_DATA_IN, 0x42);
	ck_assert_ptr_null(idm_prov_task_xfer_newest(t));
	ck_assert_ptr_null(idm_prov_task_xfer_next(t, NULL));
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 100, 0), 0);
	ck_assert_int_eq(idm_get_data(t, r2t, buf, 4096, 0, 4096, 0), 0);
	ck_assert_int_eq(idm_get_data(t, r2t, buf, 8192, 4096, 4096, 0), 0);
	/* oldest first; the newest was the last call */
	a = idm_prov_task_xfer_next(t, NULL);
	b = idm_prov_task_xfer_next(t, a);
	c = idm_prov_task_xfer_next(t, b);
	ck_assert(a && b && c);
	ck_assert_ptr_null(idm_prov_task_xfer_next(t, c));
	ck_assert_int_eq(a->dir, IDM_DATA_IN);
	ck_assert_uint_eq(b->buf_off, 4096);
	ck_assert_uint_eq(c->offset, 4096);
	ck_assert_ptr_eq(idm_prov_task_xfer_newest(t), c);
	/* the provider's area: written by its op, writable to its end,
	 * leads back to its record, and leaves the core's fields alone */
	p = idm_prov_xfer_priv(b);
	ck_assert_uint_eq(p[0], FAKE_XFER_MARK);
	for (size_t i = 1; i <= last; i++)
		ck_assert_uint_eq(p[i], 0);
	p[last] = 9;
	ck_assert_ptr_eq(idm_prov_xfer_from_priv(p), b);
	ck_assert_uint_eq(b->offset, 0);
	ck_assert_uint_eq(b->length, 4096);
	ck_assert_ptr_eq(b->addr, (uint8_t *)idm_buf_addr(buf) + 4096);
	ck_assert_ptr_eq(b->task, t);
	/* completing the middle one unlinks it from the walk */
	idm_prov_data_completion(t, IDM_DATA_OUT, 0, 4096, 0, 0);
	ck_assert_ptr_eq(idm_prov_task_xfer_next(t, a), c);
	ck_assert_ptr_eq(idm_prov_task_xfer_newest(t), c);
	/* its storage serves the next call, priv zeroed again */
	ck_assert_int_eq(idm_get_data(t, r2t, buf, 0, 8192, 100, 0), 0);
	x = idm_prov_task_xfer_newest(t);
	ck_assert_ptr_eq(x, b);
	ck_assert_uint_eq(x->offset, 8192);
	ck_assert_uint_eq(((uint64_t *)idm_prov_xfer_priv(x))[last], 0);
	/* completing the newest makes the one before it the newest */
	idm_prov_data_completion(t, IDM_DATA_OUT, 8192, 100, 0, 0);
	ck_assert_ptr_eq(idm_prov_task_xfer_newest(t), c);
	ck_assert_int_eq(xfers(t), 2);

	unit_fake_stats()->xfer_hold = 0;
	idm_deallocate_task_resources(t);
	ck_assert_ptr_null(idm_prov_task_xfer_next(t, NULL));
	idm_buf_destroy(buf);
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(xfer_no_malloc_once_warm)
{
	uint8_t din[IDM_ISCSI_BHS_LEN];
	const struct idm_prov_xfer *first;
	idm_ctx *ctx;
	idm_task *t;
	idm_buf *buf;
	idm_conn *conn = ffp_target(&ctx, &t, &buf);

	unit_bhs(din, IDM_ISCSI_OP_DATA_IN, 0x42);
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


/* ---- unsolicited and immediate data --------------------------------- */

static struct idm_conn_params keys(bool imm, bool ir2t, uint32_t fbl)
{
	struct idm_conn_params p;

	idm_prov_params_default(&p);
	p.immediate_data = imm;
	p.initial_r2t = ir2t;
	p.first_burst_length = fbl;
	return p;
}

struct unsol_case {
	bool imm, ir2t;
	uint32_t fbl, dsl, edtl, out;
	uint32_t want_imm, want_end;
	bool want_final;
};

START_TEST(unsol_plan)
{
	static const struct unsol_case cases[] = {
		/* ImmediateData=Yes, InitialR2T=Yes: immediate only */
		{ 1, 1, 65536, 8192, 100000, 100000, 8192, 8192, 1 },
		{ 1, 1, 65536, 262144, 100000, 100000, 65536, 65536, 1 },
		{ 1, 1, 65536, 8192, 1000, 1000, 1000, 1000, 1 },
		/* ImmediateData=No, InitialR2T=Yes: nothing unsolicited */
		{ 0, 1, 65536, 8192, 100000, 100000, 0, 0, 1 },
		/* ImmediateData=No, InitialR2T=No: Data-Out up to FBL */
		{ 0, 0, 65536, 8192, 100000, 100000, 0, 65536, 0 },
		{ 0, 0, 65536, 8192, 1000, 1000, 0, 1000, 0 },
		/* both: immediate counts against FirstBurstLength */
		{ 1, 0, 65536, 8192, 100000, 100000, 8192, 65536, 0 },
		{ 1, 0, 65536, 8192, 5000, 5000, 5000, 5000, 1 },
		{ 1, 0, 4096, 8192, 100000, 100000, 4096, 4096, 1 },
		/* the buffer is shorter than EDTL: never read past it */
		{ 1, 0, 65536, 8192, 100000, 3000, 3000, 3000, 1 },
		{ 0, 0, 65536, 8192, 100000, 20000, 0, 20000, 0 },
		/* nothing to write */
		{ 1, 0, 65536, 8192, 0, 0, 0, 0, 1 },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const struct unsol_case *c = &cases[i];
		struct idm_conn_params k = keys(c->imm, c->ir2t, c->fbl);
		struct idm_prov_unsol_plan p;

		idm_prov_unsol_plan(&k, c->dsl, c->edtl, c->out, &p);
		ck_assert_msg(p.imm == c->want_imm, "case %u: imm %u", i, p.imm);
		ck_assert_msg(p.unsol_end == c->want_end, "case %u: end %u", i,
			      p.unsol_end);
		ck_assert_msg(p.cmd_final == c->want_final, "case %u: F %d", i,
			      p.cmd_final);
	}
}
END_TEST

/* What the target expects for each plan the initiator makes agrees. */
START_TEST(unsol_roundtrip)
{
	static const uint32_t fbls[] = { 512, 4096, 65536, 262144 };
	static const uint32_t dsls[] = { 512, 8192, 262144 };
	static const uint32_t edtls[] = { 1, 511, 4096, 65536, 65537, 1u << 20 };

	for (int imm = 0; imm < 2; imm++)
		for (int ir2t = 0; ir2t < 2; ir2t++)
			for (unsigned a = 0; a < 4; a++)
				for (unsigned b = 0; b < 3; b++)
					for (unsigned e = 0; e < 6; e++) {
						struct idm_conn_params k = keys(imm, ir2t, fbls[a]);
						struct idm_prov_unsol_plan p;
						struct idm_prov_unsol u;
						const char *why;

						idm_prov_unsol_plan(&k, dsls[b], edtls[e], edtls[e], &p);
						ck_assert_int_eq(idm_prov_unsol_cmd(&u, &k, true, edtls[e],
										    p.imm, p.cmd_final,
										    &why), 0);
						ck_assert_uint_eq(u.end, p.unsol_end);
						ck_assert_uint_eq(u.rcvd, p.imm);
						ck_assert_uint_le(p.unsol_end, fbls[a]);
						ck_assert_uint_le(p.imm, dsls[b]);
					}
}
END_TEST

START_TEST(unsol_cmd_errors)
{
	struct idm_conn_params k;
	struct idm_prov_unsol u;
	const char *why;

	k = keys(false, true, 65536); /* immediate data with ImmediateData=No */
	ck_assert_int_eq(idm_prov_unsol_cmd(&u, &k, true, 100, 10, true, &why), -EPROTO);
	ck_assert_ptr_nonnull(strstr(why, "ImmediateData=No"));
	k = keys(true, true, 512); /* beyond FirstBurstLength */
	ck_assert_int_eq(idm_prov_unsol_cmd(&u, &k, true, 100000, 1024, true, &why), -EPROTO);
	k = keys(true, true, 65536); /* beyond EDTL */
	ck_assert_int_eq(idm_prov_unsol_cmd(&u, &k, true, 100, 200, true, &why), -EPROTO);
	/* F=0 with InitialR2T=Yes */
	ck_assert_int_eq(idm_prov_unsol_cmd(&u, &k, true, 100000, 100, false, &why), -EPROTO);
	/* F=0 but nothing left */
	k = keys(true, false, 65536);
	ck_assert_int_eq(idm_prov_unsol_cmd(&u, &k, true, 100, 100, false, &why), -EPROTO);
	/* data on a read */
	ck_assert_int_eq(idm_prov_unsol_cmd(&u, &k, false, 100, 10, true, &why), -EPROTO);
	ck_assert_ptr_nonnull(strstr(why, "not a write"));
	ck_assert_int_eq(idm_prov_unsol_cmd(&u, &k, false, 100, 0, true, &why), 0);
	ck_assert_uint_eq(u.end, 0);
	/* the first burst follows */
	ck_assert_int_eq(idm_prov_unsol_cmd(&u, &k, true, 100000, 100, false, &why), 0);
	ck_assert_uint_eq(u.end, 65536);
	ck_assert_uint_eq(u.imm_len, 100);
	ck_assert_uint_eq(u.rcvd, 100);
}
END_TEST

START_TEST(unsol_dataout_accounting)
{
	struct idm_conn_params k = keys(true, false, 8192);
	struct idm_prov_unsol u;
	const char *w;
	char why[160];

	ck_assert_int_eq(idm_prov_unsol_cmd(&u, &k, true, 100000, 1000, false, &w), 0);
	/* in order from the end of the immediate data, DataSN from 0 */
	ck_assert_int_eq(idm_prov_unsol_dataout(&u, 0, 1000, 0, why, sizeof(why)), -EPROTO);
	ck_assert_ptr_nonnull(strstr(why, "expected offset 1000"));
	ck_assert_int_eq(idm_prov_unsol_dataout(&u, 1000, 1000, 1, why, sizeof(why)), -EPROTO);
	ck_assert_ptr_nonnull(strstr(why, "DataSN 1, expected 0"));
	ck_assert_int_eq(idm_prov_unsol_dataout(&u, 1000, 7193, 0, why, sizeof(why)), -EPROTO);
	ck_assert_int_eq(idm_prov_unsol_dataout(&u, 1000, 4096, 0, why, sizeof(why)), 0);
	ck_assert_int_eq(idm_prov_unsol_arrived(&u, 4096, false, why, sizeof(why)), 0);
	ck_assert_uint_eq(u.rcvd, 5096);
	ck_assert_uint_eq(u.datasn, 1);
	/* F before the end of the first burst */
	ck_assert_int_eq(idm_prov_unsol_dataout(&u, 5096, 1000, 1, why, sizeof(why)), 0);
	ck_assert_int_eq(idm_prov_unsol_arrived(&u, 1000, true, why, sizeof(why)), -EPROTO);
	ck_assert_ptr_nonnull(strstr(why, "ended at 6096, expected 8192"));
	/* a huge offset + length does not wrap */
	ck_assert_int_eq(idm_prov_unsol_dataout(&u, 6096, UINT32_MAX, 2, why, sizeof(why)),
			 -EPROTO);
	idm_prov_unsol_free(&u);
}
END_TEST

START_TEST(unsol_staging_and_take)
{
	struct idm_conn_params k = keys(true, false, 8192);
	struct idm_prov_unsol u;
	uint8_t imm[1000], dst[8192];
	const char *w;
	char why[160];
	uint8_t *p;

	for (unsigned i = 0; i < sizeof(imm); i++)
		imm[i] = (uint8_t)i;
	ck_assert_int_eq(idm_prov_unsol_cmd(&u, &k, true, 8192, 1000, false, &w), 0);
	/* during the command's notify a Get_Data takes part of the
	 * immediate data in place: nothing staged */
	u.imm = imm;
	memset(dst, 0, sizeof(dst));
	ck_assert_uint_eq(idm_prov_unsol_take(&u, 0, 600, dst), 600);
	ck_assert_mem_eq(dst, imm, 600);
	ck_assert_ptr_null(u.stage);
	/* the rest is staged when the notify returns: all of it copied */
	ck_assert_uint_eq(idm_prov_unsol_imm_left(&u), 1000);
	ck_assert_int_eq(idm_prov_unsol_cmd_done(&u), 0);
	ck_assert_uint_eq(idm_prov_unsol_imm_left(&u), 0);
	ck_assert_ptr_null(u.imm);
	ck_assert_ptr_nonnull(u.stage);
	ck_assert_uint_eq(u.st_lo, 0);
	ck_assert_uint_eq(u.rcvd, 1000);
	/* an unsolicited Data-Out no Get_Data covers goes to the stage */
	ck_assert_int_eq(idm_prov_unsol_dataout(&u, 1000, 3000, 0, why, sizeof(why)), 0);
	p = idm_prov_unsol_stage(&u, 1000);
	ck_assert_ptr_eq(p, u.stage + 1000);
	memset(p, 0xab, 3000);
	ck_assert_int_eq(idm_prov_unsol_arrived(&u, 3000, false, why, sizeof(why)), 0);
	/* a late Get_Data of [500, 4500) gets what is here: 500..4000 */
	memset(dst, 0, sizeof(dst));
	ck_assert_uint_eq(idm_prov_unsol_take(&u, 500, 4000, dst), 3500);
	ck_assert_mem_eq(dst, imm + 500, 500);
	ck_assert_uint_eq(dst[500], 0xab);
	ck_assert_uint_eq(dst[3499], 0xab);
	ck_assert_uint_eq(dst[3500], 0);
	idm_prov_unsol_free(&u);
	ck_assert_ptr_null(u.stage);
}
END_TEST

START_TEST(unsol_all_taken_stages_nothing)
{
	struct idm_conn_params k = keys(true, true, 65536);
	struct idm_prov_unsol u;
	uint8_t imm[512] = { 1 }, dst[512];
	const char *w;

	ck_assert_int_eq(idm_prov_unsol_cmd(&u, &k, true, 512, 512, true, &w), 0);
	u.imm = imm;
	ck_assert_uint_eq(idm_prov_unsol_take(&u, 0, 512, dst), 512);
	ck_assert_uint_eq(idm_prov_unsol_imm_left(&u), 0); /* nothing to copy */
	ck_assert_int_eq(idm_prov_unsol_cmd_done(&u), 0);
	ck_assert_ptr_null(u.stage); /* the fast path: no copy kept */
	idm_prov_unsol_free(&u);
}
END_TEST

int main(void)
{
	const TTest *const opcode[] = { opcodes_login_phase,
					opcodes_full_feature_phase, NULL };
	const TTest *const xfer[] = { xfer_recorded_until_completion,
				      xfer_dropped_with_task_and_connection,
				      xfer_walk_newest_and_priv,
				      xfer_no_malloc_once_warm, NULL };
	const TTest *const unsol[] = { unsol_plan,
				       unsol_roundtrip,
				       unsol_cmd_errors,
				       unsol_dataout_accounting,
				       unsol_staging_and_take,
				       unsol_all_taken_stages_nothing,
				       NULL };
	Suite *s = suite_create("dm");

	test_case_add(s, "opcode", 0, opcode);
	test_case_add(s, "xfer", 0, xfer);
	test_case_add(s, "unsol", 0, unsol);
	return test_suite_run(s);
}
