/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Connections on the fake provider: the login and full feature phase
 * states, the checks Send_Control, Put_Data and Get_Data make before a
 * provider sees anything, the notifications (never inside the call that
 * caused them), Connection_Terminate (silent) and peer failure (exactly
 * one Connection_Terminate_Notify).
 */
#include "unit.h"
#include "core.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static idm_ctx *setup(void)
{
	unit_use_providers("good", "fake");
	return unit_ctx();
}

START_TEST(initiator_login_then_ffp)
{
	idm_ctx *ctx = setup();
	idm_conn *conn = unit_initiator(ctx, false);
	struct fake_stats *st = unit_fake_stats();
	static uint8_t data[16384];
	uint8_t bhs[IDM_ISCSI_BHS_LEN];
	idm_task *t;

	ck_assert_str_eq(idm_conn_provider(conn), "fake");
	ck_assert_str_eq(idm_conn_peer_name(conn), "127.0.0.1:3260");
	ck_assert_str_eq(idm_conn_error(conn), "");
	ck_assert_ptr_null(idm_conn_get_arg(conn));

	/* login phase: Login Requests only */
	unit_bhs(bhs, IDM_ISCSI_OP_LOGIN_REQ | IDM_ISCSI_OP_IMMEDIATE, 0);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, "a=b", 4, NULL, 0), 0);
	ck_assert_int_eq(st->send_control, 1);
	ck_assert_uint_eq(st->last_data_len, 4);
	unit_bhs(bhs, IDM_ISCSI_OP_NOP_OUT, 1);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 0, NULL, 0), -ENOTCONN);
	/* wrong direction and the data mover's own opcodes */
	unit_bhs(bhs, IDM_ISCSI_OP_LOGIN_RSP, 0);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 0, NULL, 0), -EINVAL);
	unit_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, 0);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 0, NULL, 0), -EINVAL);
	/* malformed arguments */
	unit_bhs(bhs, IDM_ISCSI_OP_LOGIN_REQ, 0);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 0, NULL, 1), -EINVAL);
	ck_assert_int_eq(idm_send_control(conn, bhs, data, 3, NULL, 0, NULL, 0), -EINVAL);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 4, NULL, 0, NULL, 0), -EINVAL);
	ck_assert_int_eq(idm_send_control(conn, bhs, data, 1024, NULL, 0, NULL, 0), -EINVAL);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 1, NULL, 0), -EINVAL);
	ck_assert_int_eq(idm_send_control(conn, NULL, NULL, 0, NULL, 0, NULL, 0), -EINVAL);
	ck_assert_int_eq(st->send_control, 1); /* none reached the provider */

	/* no tasks before full feature phase */
	ck_assert_int_eq(idm_task_create(conn, 1, &t), -ENOTCONN);

	/* Enable_Datamover: the initiator passes no response */
	unit_bhs(bhs, IDM_ISCSI_OP_LOGIN_RSP, 0);
	ck_assert_int_eq(idm_enable_datamover(conn, bhs, NULL, 0), -EINVAL);
	/* the command window: before the resources, any value */
	ck_assert_int_eq(idm_conn_set_cmd_window(conn, 0), 0);
	ck_assert_int_eq(idm_conn_set_cmd_window(conn, 0xffffffffu), 0);
	ck_assert_int_eq(idm_conn_set_cmd_window(conn, 128), 0);
	ck_assert_int_eq(idm_allocate_connection_resources(conn), 0);
	ck_assert_int_eq(idm_allocate_connection_resources(conn), 0); /* idempotent */
	/* ... and not once they are sized */
	ck_assert_int_eq(idm_conn_set_cmd_window(conn, 64), -EBUSY);
	ck_assert_int_eq(st->alloc_conn_rsrc, 1);
	ck_assert_int_eq(idm_enable_datamover(conn, NULL, NULL, 0), 0);
	ck_assert_int_eq(st->enable_datamover, 1);
	ck_assert_int_eq(st->alloc_conn_rsrc, 1);
	ck_assert_int_eq(idm_enable_datamover(conn, NULL, NULL, 0), -EALREADY);
	/* in full feature phase the resources stay */
	idm_deallocate_connection_resources(conn);
	ck_assert_int_eq(st->free_conn_rsrc, 0);

	/* full feature phase: no more login, data within the target's limit */
	unit_bhs(bhs, IDM_ISCSI_OP_LOGIN_REQ, 0);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 0, NULL, 0), -EPROTO);
	unit_bhs(bhs, IDM_ISCSI_OP_NOP_OUT | IDM_ISCSI_OP_IMMEDIATE, 2);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, data, 8192, NULL, 0), 0);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, data, 8193, NULL, 0), -EMSGSIZE);
	ck_assert_int_eq(idm_notice_key_values(conn, "MaxRecvDataSegmentLength=16384", 31), 0);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, data, 16384, NULL, 0), 0);

	/* SCSI Command: only with its task, whose ITT it carries */
	ck_assert_int_eq(idm_task_create(conn, 7, &t), 0);
	unit_bhs(bhs, IDM_ISCSI_OP_SCSI_CMD, 7);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 0, NULL, 0), -EINVAL);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, data, 8, t, 0), -EINVAL);
	unit_bhs(bhs, IDM_ISCSI_OP_SCSI_CMD, 8);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 0, t, 0), -EINVAL);
	unit_bhs(bhs, IDM_ISCSI_OP_SCSI_CMD, 7);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 0, t, 0), 0);
	ck_assert_int_eq(st->send_control, 4);

	/* Put_Data / Get_Data are the target's */
	ck_assert_int_eq(idm_put_data(t, bhs, NULL, 0, 0, 1, 0), -EINVAL);
	idm_deallocate_task_resources(t);
	ck_assert_int_eq(st->task_free, 1);
	idm_conn_destroy(conn);
	ck_assert_int_eq(st->conn_free, 1);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(connect_refused)
{
	struct idm_conn_attr attr = {
		.size = sizeof(attr),
		.provider = "fake",
		.cbs = &unit_cbs,
		.arg = &attr,
	};
	uint8_t bhs[IDM_ISCSI_BHS_LEN];
	idm_ctx *ctx = setup();
	idm_conn *conn;

	memset(&unit_ev, 0, sizeof(unit_ev));
	/* the fake refuses port 1 */
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "1", &attr, &conn), 0);
	ck_assert_int_eq(unit_ev.connected, 0);
	ck_assert(unit_progress_until(ctx, &unit_ev.connected));
	ck_assert_int_eq(unit_ev.connected_status, -ECONNREFUSED);
	ck_assert_ptr_eq(idm_conn_get_arg(conn), &attr);
	ck_assert_str_ne(idm_conn_error(conn), "");
	unit_bhs(bhs, IDM_ISCSI_OP_LOGIN_REQ, 0);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 0, NULL, 0), -ENOTCONN);
	ck_assert_int_lt(idm_enable_datamover(conn, NULL, NULL, 0), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_ge(idm_ctx_progress(ctx, 0), 0);
	ck_assert_int_eq(unit_ev.terminate, 0); /* connected() said it all */
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

/* A connect() that reports its failure and then returns it too (the fake
 * does that for port 2): the core frees the connection at once, so it
 * must drop the queued report, or the next progress pass reads freed
 * memory (the ASan build catches it). Nothing is reported. */
START_TEST(connect_reports_then_fails)
{
	struct idm_conn_attr attr = unit_conn_attr("fake");
	idm_ctx *ctx = setup();
	idm_conn *conn = (idm_conn *)&attr;
	struct fake_stats *st;

	memset(&unit_ev, 0, sizeof(unit_ev));
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "2", &attr, &conn),
			 -ECONNREFUSED);
	ck_assert_ptr_null(conn);
	st = unit_fake_stats(); /* loaded by the connect */
	ck_assert_int_eq(st->connect, 1);
	ck_assert_int_eq(st->conn_free, 1);
	/* the eventfd kick of the cancelled item may still wake one pass */
	for (int i = 0; i < 3; i++)
		ck_assert_int_ge(idm_ctx_progress(ctx, 0), 0);
	ck_assert_int_eq(idm_ctx_progress(ctx, 0), 0);
	ck_assert_int_eq(unit_ev.connected, 0);
	ck_assert_int_eq(unit_ev.terminate, 0);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(connect_arguments)
{
	struct idm_conn_attr attr = {.size = sizeof(attr), .provider = "fake", .cbs = &unit_cbs};
	struct idm_conn_cbs nocbs = {.size = 0};
	idm_ctx *ctx = setup();
	idm_conn *conn = (idm_conn *)&attr;

	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "3260", NULL, &conn), -EINVAL);
	ck_assert_ptr_null(conn);
	ck_assert_int_eq(idm_conn_connect(ctx, NULL, "3260", &attr, &conn), -EINVAL);
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", NULL, &attr, &conn), -EINVAL);
	ck_assert_int_eq(idm_conn_connect(NULL, "127.0.0.1", "3260", &attr, &conn), -EINVAL);
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "3260", &attr, NULL), -EINVAL);
	ck_assert_int_lt(idm_conn_connect(ctx, "127.0.0.1", "notaport", &attr, &conn), 0);
	ck_assert_int_lt(idm_conn_connect(ctx, "not an address", "3260", &attr, &conn), 0);
	attr.connect_timeout_ms = -1;
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "3260", &attr, &conn), -EINVAL);
	attr.connect_timeout_ms = 0;
	attr.size = 8;
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "3260", &attr, &conn), -EINVAL);
	attr.size = sizeof(attr);
	attr.cbs = NULL;
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "3260", &attr, &conn), -EINVAL);
	attr.cbs = &nocbs;
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "3260", &attr, &conn), -EINVAL);
	ck_assert_ptr_null(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(target_put_get_data)
{
	idm_ctx *ctx = setup();
	idm_portal *portal;
	idm_conn *conn = unit_target(ctx, &portal, false);
	struct fake_stats *st = unit_fake_stats();
	uint8_t din[IDM_ISCSI_BHS_LEN], r2t[IDM_ISCSI_BHS_LEN], bhs[IDM_ISCSI_BHS_LEN];
	idm_buf *buf, *other;
	idm_ctx *ctx2;
	idm_task *t;

	ck_assert_int_eq(idm_portal_port(portal), 3260);
	ck_assert_int_eq(idm_buf_alloc(ctx, 65536, &buf), 0);

	/* login phase: Login Responses (and Reject) only; the final one goes
	 * with Enable_Datamover */
	unit_bhs(bhs, IDM_ISCSI_OP_LOGIN_RSP, 0);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 0, NULL, 0), 0);
	unit_bhs(bhs, IDM_ISCSI_OP_NOP_IN, 0);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 0, NULL, 0), -ENOTCONN);
	unit_bhs(bhs, IDM_ISCSI_OP_R2T, 0);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 0, NULL, 0), -EINVAL);
	unit_bhs(bhs, IDM_ISCSI_OP_LOGIN_REQ, 0);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 0, NULL, 0), -EINVAL);
	ck_assert_int_eq(idm_enable_datamover(conn, NULL, NULL, 0), -EINVAL);
	ck_assert_int_eq(idm_enable_datamover(conn, bhs, NULL, 0), -EINVAL);
	unit_bhs(bhs, IDM_ISCSI_OP_LOGIN_RSP, 0);
	ck_assert_int_eq(idm_enable_datamover(conn, bhs, NULL, 3), -EINVAL);
	ck_assert_int_eq(idm_enable_datamover(conn, bhs, "k=v", 4), 0);

	ck_assert_int_eq(idm_prov_task_new(conn, 0x42, &t), 0);
	unit_bhs(din, IDM_ISCSI_OP_DATA_IN, 0x42);
	unit_bhs(r2t, IDM_ISCSI_OP_R2T, 0x42);

	/* Put_Data: completion follows from progress, not from the call */
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 65536, 0), 0);
	ck_assert_int_eq(unit_ev.completions, 0);
	ck_assert(unit_progress_until(ctx, &unit_ev.completions));
	ck_assert_int_eq(unit_ev.last_dir, IDM_DATA_IN);
	ck_assert_uint_eq(unit_ev.last_offset, 0);
	ck_assert_uint_eq(unit_ev.last_length, 65536);
	ck_assert_int_eq(unit_ev.last_status, 0);

	/* Get_Data into the second half at a data offset */
	ck_assert_int_eq(idm_get_data(t, r2t, buf, 32768, 4096, 32768, 0), 0);
	ck_assert_int_eq(unit_ev.completions, 1);
	for (int i = 0; i < 200 && unit_ev.completions < 2; i++)
		ck_assert_int_ge(idm_ctx_progress(ctx, 10), 0);
	ck_assert_int_eq(unit_ev.completions, 2);
	ck_assert_int_eq(unit_ev.last_dir, IDM_DATA_OUT);
	ck_assert_uint_eq(unit_ev.last_offset, 4096);
	ck_assert_uint_eq(unit_ev.last_length, 32768);
	ck_assert_int_eq(st->put_data, 1);
	ck_assert_int_eq(st->get_data, 1);

	/* what the core refuses before the provider sees it */
	ck_assert_int_eq(idm_put_data(t, r2t, buf, 0, 0, 1, 0), -EINVAL);   /* template */
	ck_assert_int_eq(idm_get_data(t, din, buf, 0, 0, 1, 0), -EINVAL);
	ck_assert_int_eq(idm_put_data(t, NULL, buf, 0, 0, 1, 0), -EINVAL);
	unit_bhs(bhs, IDM_ISCSI_OP_DATA_IN, 0x43);                              /* ITT */
	ck_assert_int_eq(idm_put_data(t, bhs, buf, 0, 0, 1, 0), -EINVAL);
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 0, 0), -EINVAL);  /* empty */
	ck_assert_int_eq(idm_put_data(t, din, NULL, 0, 0, 1, 0), -EINVAL);
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 65537, 0), -ERANGE);
	ck_assert_int_eq(idm_put_data(t, din, buf, 65536, 0, 1, 0), -ERANGE);
	ck_assert_int_eq(idm_get_data(t, r2t, buf, 1, 0, 65536, 0), -ERANGE);
	ck_assert_int_eq(idm_get_data(t, r2t, buf, SIZE_MAX, 0, 2, 0), -ERANGE);
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, UINT32_MAX, 2, 0), -ERANGE);
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 1, 0x80), -EINVAL); /* flags */
	ck_assert_int_eq(idm_get_data(t, r2t, buf, 0, 0, 1, 1), -EINVAL);
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 1, IDM_PUT_ACK), -EINVAL); /* ERL 0 */
	/* a buffer of another context */
	ck_assert_int_eq(idm_ctx_create(NULL, &ctx2), 0);
	ck_assert_int_eq(idm_buf_alloc(ctx2, 16, &other), 0);
	ck_assert_int_eq(idm_put_data(t, din, other, 0, 0, 1, 0), -EINVAL);
	idm_buf_destroy(other);
	idm_ctx_destroy(ctx2);
	ck_assert_int_eq(st->put_data, 1);
	ck_assert_int_eq(st->get_data, 1);

	/* with ErrorRecoveryLevel 1 the A bit may be asked for */
	ck_assert_int_eq(idm_notice_key_values(conn, "ErrorRecoveryLevel=1", 21), 0);
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 1, IDM_PUT_ACK), 0);
	ck_assert_int_eq(st->put_data, 2);

	idm_deallocate_task_resources(t);
	idm_buf_destroy(buf);
	idm_portal_destroy(portal);
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

static idm_conn *g_conn;
static idm_task *g_task;
static struct idm_prov_defer notify_d;

static void raise_control(struct idm_prov_defer *d)
{
	static uint8_t bhs[IDM_ISCSI_BHS_LEN];
	struct idm_pdu pdu = {.bhs = bhs, .data = (const uint8_t *)"xyz", .data_len = 3,
			      .task = g_task};

	(void)d;
	unit_bhs(bhs, IDM_ISCSI_OP_SCSI_CMD, idm_task_itt(g_task));
	idm_prov_control_notify(g_conn, &pdu);
	idm_prov_data_ack(g_task, 3);
}

/* idm_conn_destroy() from the connection's own control_notify (since
 * 1.2): terminated at once (the data ack the provider raises right after
 * is not delivered), freed by the library after the item that raised the
 * callback returned, never inside the callback. */
static int destroy_conn_free_seen = -1;

static void destroy_in_control(idm_conn *conn, idm_pdu *pdu, void *arg)
{
	(void)pdu;
	(void)arg;
	unit_ev.control++;
	idm_conn_destroy(conn);
	destroy_conn_free_seen = unit_fake_stats()->conn_free;
}

static void count_ack(idm_task *t, uint32_t datasn, void *arg)
{
	(void)t;
	(void)datasn;
	(void)arg;
	unit_ev.acks++;
}

START_TEST(destroy_from_own_callback)
{
	idm_ctx *ctx = setup();
	idm_portal *portal;
	struct fake_stats *st;
	struct idm_conn_cbs cbs = unit_cbs;

	cbs.control_notify = destroy_in_control;
	cbs.data_ack_notify = count_ack;
	g_conn = unit_target(ctx, &portal, true);
	st = unit_fake_stats();
	ck_assert_int_eq(idm_conn_set_cbs(g_conn, &cbs, NULL), 0);
	ck_assert_int_eq(idm_prov_task_new(g_conn, 9, &g_task), 0);
	idm_prov_defer(ctx, &notify_d, raise_control);
	ck_assert(unit_progress_until(ctx, &unit_ev.control));
	ck_assert_int_eq(destroy_conn_free_seen, 0); /* not inside it */
	ck_assert_int_eq(st->conn_terminate, 1);
	ck_assert_int_eq(unit_ev.acks, 0);
	ck_assert(unit_progress_until(ctx, &st->conn_free));
	ck_assert_int_eq(st->conn_free, 1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_ge(idm_ctx_progress(ctx, 0), 0);
	ck_assert_int_eq(st->conn_free, 1);
	ck_assert_int_eq(unit_ev.terminate, 0);
	idm_portal_destroy(portal);
	idm_ctx_destroy(ctx);
}
END_TEST

/* A destroy from a callback still pending when the context goes: the
 * context frees the connection once. */
static void destroy_only(idm_conn *conn, idm_pdu *pdu, void *arg)
{
	(void)pdu;
	(void)arg;
	unit_ev.control++;
	idm_conn_destroy(conn);
	idm_conn_destroy(conn); /* twice inside the pass: still one free */
}

static void raise_control_only(struct idm_prov_defer *d)
{
	static uint8_t bhs[IDM_ISCSI_BHS_LEN];
	struct idm_pdu pdu = {.bhs = bhs};

	(void)d;
	unit_bhs(bhs, IDM_ISCSI_OP_NOP_OUT, 1);
	idm_prov_control_notify(g_conn, &pdu);
}

START_TEST(destroy_from_callback_then_ctx_destroy)
{
	idm_ctx *ctx = setup();
	idm_portal *portal;
	struct fake_stats *st;
	struct idm_conn_cbs cbs = unit_cbs;

	cbs.control_notify = destroy_only;
	g_conn = unit_target(ctx, &portal, true);
	st = unit_fake_stats();
	ck_assert_int_eq(idm_conn_set_cbs(g_conn, &cbs, NULL), 0);
	idm_prov_defer(ctx, &notify_d, raise_control_only);
	ck_assert_int_ge(idm_ctx_progress(ctx, 0), 1);
	ck_assert_int_eq(unit_ev.control, 1);
	ck_assert_int_eq(st->conn_free, 0); /* queued for the next pass */
	idm_portal_destroy(portal);
	/* frees it once, cancelling the queued free (the fake's counters go
	 * with the provider: a second free or a leak is for ASan to see) */
	idm_ctx_destroy(ctx);
}
END_TEST

/* idm_conn_sockaddr() (since 1.2): what the provider reported, and
 * -ENOTCONN for an end it did not report. */
START_TEST(conn_sockaddr)
{
	idm_ctx *ctx = setup();
	idm_conn *conn = unit_initiator(ctx, false);
	struct sockaddr_storage ss;
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6,
				   .sin6_port = htons(3261),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	socklen_t len = 0;

	ck_assert_int_eq(idm_conn_sockaddr(conn, IDM_ADDR_PEER, &ss, &len), 0);
	ck_assert_int_eq(len, sizeof(struct sockaddr_in));
	ck_assert_int_eq(in->sin_family, AF_INET);
	ck_assert_int_eq(ntohs(in->sin_port), 3260);
	ck_assert_uint_eq(ntohl(in->sin_addr.s_addr), INADDR_LOOPBACK);
	/* the fake provider reports no local address */
	ck_assert_int_eq(idm_conn_sockaddr(conn, IDM_ADDR_LOCAL, &ss, &len), -ENOTCONN);
	/* what a provider reports later replaces it; IPv6 keeps its length */
	idm_prov_conn_set_names(conn, (const struct sockaddr *)&in6, NULL);
	ck_assert_int_eq(idm_conn_sockaddr(conn, IDM_ADDR_LOCAL, &ss, &len), 0);
	ck_assert_int_eq(len, sizeof(struct sockaddr_in6));
	ck_assert_int_eq(memcmp(&ss, &in6, sizeof(in6)), 0);
	ck_assert_str_eq(idm_conn_local_name(conn), "[::1]:3261");
	/* arguments */
	ck_assert_int_eq(idm_conn_sockaddr(NULL, IDM_ADDR_PEER, &ss, &len), -EINVAL);
	ck_assert_int_eq(idm_conn_sockaddr(conn, IDM_ADDR_PEER, NULL, &len), -EINVAL);
	ck_assert_int_eq(idm_conn_sockaddr(conn, IDM_ADDR_PEER, &ss, NULL), -EINVAL);
	ck_assert_int_eq(idm_conn_sockaddr(conn, (enum idm_addr_end)7, &ss, &len), -EINVAL);
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(control_notify_and_ack)
{
	idm_ctx *ctx = setup();
	idm_portal *portal;

	g_conn = unit_target(ctx, &portal, true);
	ck_assert_int_eq(idm_notice_key_values(g_conn, "ErrorRecoveryLevel=1", 21), 0);
	ck_assert_int_eq(idm_prov_task_new(g_conn, 9, &g_task), 0);
	idm_prov_defer(ctx, &notify_d, raise_control);
	ck_assert(unit_progress_until(ctx, &unit_ev.control));
	ck_assert_int_eq(unit_ev.last_opcode, IDM_ISCSI_OP_SCSI_CMD);
	ck_assert_ptr_eq(unit_ev.last_task, g_task);
	ck_assert_int_eq(unit_ev.acks, 1);

	/* nothing reaches the caller once the connection is terminated */
	idm_connection_terminate(g_conn);
	idm_prov_defer(ctx, &notify_d, raise_control);
	ck_assert_int_ge(idm_ctx_progress(ctx, 0), 1);
	ck_assert_int_eq(unit_ev.control, 1);
	ck_assert_int_eq(unit_ev.acks, 1);
	idm_deallocate_task_resources(g_task);
	idm_portal_destroy(portal);
	idm_conn_destroy(g_conn);
	idm_ctx_destroy(ctx);
}
END_TEST

/* idm_conn_get_stats(): argument checks, what the core counts, the
 * provider's gauges, and a shorter struct from an older caller. */
START_TEST(conn_stats)
{
	idm_ctx *ctx = setup();
	idm_conn *conn = unit_initiator(ctx, true);
	struct idm_conn_stats st = { .size = sizeof(st) };
	uint8_t bhs[IDM_ISCSI_BHS_LEN];
	idm_task *t;

	ck_assert_int_eq(idm_conn_get_stats(NULL, &st), -EINVAL);
	ck_assert_int_eq(idm_conn_get_stats(conn, NULL), -EINVAL);
	st.size = 4;
	ck_assert_int_eq(idm_conn_get_stats(conn, &st), -EINVAL);

	unit_bhs(bhs, IDM_ISCSI_OP_NOP_OUT | IDM_ISCSI_OP_IMMEDIATE, 1);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 0, NULL, 0), 0);
	unit_bhs(bhs, IDM_ISCSI_OP_LOGIN_REQ, 0); /* refused: not counted */
	ck_assert_int_lt(idm_send_control(conn, bhs, NULL, 0, NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(idm_task_create(conn, 5, &t), 0);
	memset(&st, 0xa5, sizeof(st));
	st.size = sizeof(st);
	ck_assert_int_eq(idm_conn_get_stats(conn, &st), 0);
	ck_assert_uint_eq(st.size, sizeof(st));
	ck_assert_uint_eq(st.control_tx, 1);
	ck_assert_uint_eq(st.control_rx, 0);
	ck_assert_uint_eq(st.tasks_active, 1);
	ck_assert_uint_eq(st.xfers_in_flight, 0);
	ck_assert_uint_eq(st.sendq_entries, 7); /* the fake's conn_stats op */
	ck_assert_uint_eq(st.sendq_bytes, 4242);
	ck_assert_uint_eq(st.pdus_tx, 0);       /* the fake counts nothing */
	ck_assert_uint_eq(st.payload_copies, 2); /* a copy of 0 bytes is none */
	ck_assert_uint_eq(st.payload_copy_bytes, 1024);
	ck_assert_int_eq(unit_fake_stats()->conn_stats, 1);

	/* a caller built against a struct that ended after sendq_bytes */
	memset(&st, 0xa5, sizeof(st));
	st.size = offsetof(struct idm_conn_stats, pdus_tx);
	ck_assert_int_eq(idm_conn_get_stats(conn, &st), 0);
	ck_assert_uint_eq(st.size, offsetof(struct idm_conn_stats, pdus_tx));
	ck_assert_uint_eq(st.tasks_active, 1);
	ck_assert_uint_eq(st.pdus_tx, 0xa5a5a5a5a5a5a5a5ull); /* untouched */

	idm_deallocate_task_resources(t);
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(deallocate_task_cancels_silently)
{
	idm_ctx *ctx = setup();
	idm_portal *portal;
	idm_conn *conn = unit_target(ctx, &portal, true);
	uint8_t din[IDM_ISCSI_BHS_LEN];
	idm_buf *buf;
	idm_task *t;

	ck_assert_int_eq(idm_buf_alloc(ctx, 4096, &buf), 0);
	ck_assert_int_eq(idm_prov_task_new(conn, 1, &t), 0);
	unit_bhs(din, IDM_ISCSI_OP_DATA_IN, 1);
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 4096, 0), 0);
	idm_deallocate_task_resources(t);
	for (int i = 0; i < 5; i++)
		ck_assert_int_ge(idm_ctx_progress(ctx, 0), 0);
	ck_assert_int_eq(unit_ev.completions, 0);
	idm_buf_destroy(buf); /* the buffer is the caller's again */
	idm_portal_destroy(portal);
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(terminate_is_silent)
{
	idm_ctx *ctx = setup();
	idm_portal *portal;
	idm_conn *conn = unit_target(ctx, &portal, true);
	struct fake_stats *st = unit_fake_stats();
	uint8_t din[IDM_ISCSI_BHS_LEN], bhs[IDM_ISCSI_BHS_LEN];
	idm_buf *buf;
	idm_task *t;

	ck_assert_int_eq(idm_buf_alloc(ctx, 4096, &buf), 0);
	ck_assert_int_eq(idm_prov_task_new(conn, 1, &t), 0);
	unit_bhs(din, IDM_ISCSI_OP_DATA_IN, 1);
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 4096, 0), 0);
	idm_connection_terminate(conn);
	ck_assert_int_eq(st->conn_terminate, 1);
	for (int i = 0; i < 5; i++)
		ck_assert_int_ge(idm_ctx_progress(ctx, 0), 0);
	ck_assert_int_eq(unit_ev.completions, 0);
	ck_assert_int_eq(unit_ev.terminate, 0);
	/* everything after it is refused, nothing crashes */
	unit_bhs(bhs, IDM_ISCSI_OP_NOP_IN, 0);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 0, NULL, 0), -ENOTCONN);
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 1, 0), -ENOTCONN);
	ck_assert_int_lt(idm_allocate_connection_resources(conn), 0);
	ck_assert_int_lt(idm_enable_datamover(conn, bhs, NULL, 0), 0);
	ck_assert_int_eq(idm_conn_set_cmd_window(conn, 8), -ENOTCONN);
	idm_connection_terminate(conn); /* twice is harmless */
	ck_assert_int_eq(st->conn_terminate, 1);
	idm_deallocate_task_resources(t);
	ck_assert_int_eq(st->task_free, 0); /* the provider already let go */
	idm_buf_destroy(buf);
	idm_portal_destroy(portal);
	idm_conn_destroy(conn);
	ck_assert_int_eq(st->conn_free, 1);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(peer_failure_notifies_once)
{
	idm_ctx *ctx = setup();
	idm_conn *conn = unit_initiator(ctx, true);
	uint8_t bhs[IDM_ISCSI_BHS_LEN];
	idm_task *t;

	ck_assert_int_eq(idm_task_create(conn, 3, &t), 0);
	/* what a provider does when the peer vanishes */
	idm_prov_conn_set_error(conn, "peer closed the connection mid-PDU");
	idm_prov_conn_set_error(conn, "second reason is dropped");
	idm_prov_conn_failed(conn, ECONNRESET);
	idm_prov_conn_failed(conn, -EPROTO);
	ck_assert_int_eq(unit_ev.terminate, 0); /* never inside the call */
	ck_assert(unit_progress_until(ctx, &unit_ev.terminate));
	for (int i = 0; i < 5; i++)
		ck_assert_int_ge(idm_ctx_progress(ctx, 0), 0);
	ck_assert_int_eq(unit_ev.terminate, 1);
	ck_assert_int_eq(unit_ev.terminate_reason, -ECONNRESET);
	ck_assert_str_eq(idm_conn_error(conn), "peer closed the connection mid-PDU");
	/* late completions are not delivered */
	idm_prov_data_completion(t, IDM_DATA_IN, 0, 1, 0, 0);
	ck_assert_int_eq(unit_ev.completions, 0);
	unit_bhs(bhs, IDM_ISCSI_OP_NOP_OUT, 4);
	ck_assert_int_eq(idm_send_control(conn, bhs, NULL, 0, NULL, 0, NULL, 0), -ENOTCONN);
	idm_deallocate_task_resources(t);
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

static int refuse(idm_portal *portal, idm_conn *conn, void *arg)
{
	(void)portal;
	(void)conn;
	++*(int *)arg;
	return -EPERM;
}

START_TEST(accept_refused)
{
	static int calls;
	struct idm_portal_attr attr = {
		.size = sizeof(attr),
		.providers = "fake",
		.accept = refuse,
		.arg = &calls,
	};
	idm_ctx *ctx = setup();
	idm_portal *portal;

	ck_assert_int_eq(idm_portal_create(ctx, "127.0.0.1", "0", &attr, &portal), 0);
	ck_assert(unit_progress_until(ctx, &calls));
	ck_assert_ptr_null(ctx->conns); /* closed and freed (ASan: no leak) */
	idm_portal_destroy(portal);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(portal_arguments)
{
	struct idm_portal_attr attr = unit_portal_attr("fake", refuse);
	idm_ctx *ctx = setup();
	idm_portal *p = (idm_portal *)&attr;

	ck_assert_int_eq(idm_portal_create(ctx, "127.0.0.1", "0", NULL, &p), -EINVAL);
	ck_assert_ptr_null(p);
	ck_assert_int_eq(idm_portal_create(NULL, "127.0.0.1", "0", &attr, &p), -EINVAL);
	ck_assert_int_eq(idm_portal_create(ctx, "127.0.0.1", NULL, &attr, &p), -EINVAL);
	ck_assert_int_eq(idm_portal_create(ctx, "127.0.0.1", "0", &attr, NULL), -EINVAL);
	attr.providers = "nosuch";
	ck_assert_int_eq(idm_portal_create(ctx, "127.0.0.1", "0", &attr, &p), -ENOENT);
	attr.providers = ",fake";
	ck_assert_int_eq(idm_portal_create(ctx, "127.0.0.1", "0", &attr, &p), -EINVAL);
	attr.providers = "";
	ck_assert_int_lt(idm_portal_create(ctx, "127.0.0.1", "0", &attr, &p), 0);
	attr.providers = "fake";
	attr.accept = NULL;
	ck_assert_int_eq(idm_portal_create(ctx, "127.0.0.1", "0", &attr, &p), -EINVAL);
	attr.accept = refuse;
	attr.backlog = -1;
	ck_assert_int_eq(idm_portal_create(ctx, "127.0.0.1", "0", &attr, &p), -EINVAL);
	attr.backlog = 0;
	attr.size = 4;
	ck_assert_int_eq(idm_portal_create(ctx, "127.0.0.1", "0", &attr, &p), -EINVAL);
	ck_assert_int_lt(idm_portal_create(ctx, "no such host name", "0", &attr, &p), 0);
	ck_assert_ptr_null(p);
	ck_assert_int_eq(idm_portal_port(NULL), -EINVAL);
	idm_portal_destroy(NULL);
	idm_ctx_destroy(ctx);
}
END_TEST

/* A loopback port nobody listens on: bind, read the port, close. */
static int closed_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	ck_assert_int_ge(fd, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

START_TEST(auto_selection)
{
	struct idm_conn_attr attr = {.size = sizeof(attr), .cbs = &unit_cbs};
	char path[4096], port[16];
	idm_ctx *ctx;
	idm_conn *conn;

	/* "auto" picks among iser and tcp only: the fake alone is no choice */
	unit_use_providers("good", "fake");
	ctx = unit_ctx();
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "3260", &attr, &conn), -ENOENT);
	idm_ctx_destroy(ctx);

	/* with tcp present, NULL means auto and lands on tcp; nobody listens
	 * on the port, so connected() reports the failure */
	snprintf(path, sizeof(path), "%s:%s", PROVIDER_BUILD_PATH, unit_fake_dir("good"));
	setenv("IDM_PROVIDER_PATH", path, 1);
	setenv("IDM_PROVIDERS", "tcp,fake", 1);
	ctx = unit_ctx();
	memset(&unit_ev, 0, sizeof(unit_ev));
	snprintf(port, sizeof(port), "%d", closed_port());
	attr.connect_timeout_ms = 2000;
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", port, &attr, &conn), 0);
	ck_assert_str_eq(idm_conn_provider(conn), "tcp");
	ck_assert(unit_progress_until(ctx, &unit_ev.connected));
	ck_assert_int_lt(unit_ev.connected_status, 0);
	ck_assert_str_ne(idm_conn_error(conn), "");
	ck_assert_int_eq(unit_ev.terminate, 0);
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

/* A provider takes part in "auto" and serves a URL scheme by its ops table
 * alone (auto_order, url_schemes): the fake, placed above TCP, is tried
 * first; placed below, it is the fallback when TCP cannot connect; and
 * its scheme "fake" names it, as "iscsi" names TCP. Also run on the fake
 * built out of tree (tests/abi/check_outside_provider.py). */
START_TEST(auto_order_and_scheme_declared)
{
	struct idm_conn_attr attr = {.size = sizeof(attr), .cbs = &unit_cbs,
				     .connect_timeout_ms = 2000};
	char path[4096], port[16];
	const char *name;
	idm_ctx *ctx;
	idm_conn *conn;

	snprintf(path, sizeof(path), "%s:%s", PROVIDER_BUILD_PATH, unit_fake_dir("good"));
	unit_use_providers(path, "tcp,fake");
	snprintf(port, sizeof(port), "%d", closed_port());

	/* above TCP (and iSER): "auto" picks the fake */
	ck_assert_int_eq(setenv("IDM_TEST_FAKE_AUTO_ORDER", "300", 1), 0);
	ctx = unit_ctx();
	ck_assert_int_eq(idm_provider_for_scheme(ctx, "fake", &name), 0);
	ck_assert_str_eq(name, "fake");
	ck_assert_int_eq(idm_provider_for_scheme(ctx, "iscsi", &name), 0);
	ck_assert_str_eq(name, "tcp");
	ck_assert_int_eq(idm_provider_for_scheme(ctx, "nosuch", &name), -ENOENT);
	ck_assert_ptr_null(name);
	ck_assert_int_eq(idm_provider_for_scheme(ctx, NULL, &name), -EINVAL);
	memset(&unit_ev, 0, sizeof(unit_ev));
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", port, &attr, &conn), 0);
	ck_assert_str_eq(idm_conn_provider(conn), "fake");
	ck_assert(unit_progress_until(ctx, &unit_ev.connected));
	ck_assert_int_eq(unit_ev.connected_status, 0);
	idm_conn_destroy(conn);

	/* by its scheme, as a program maps fake://host to a provider */
	ck_assert_int_eq(idm_provider_for_scheme(ctx, "fake", &name), 0);
	attr.provider = name;
	memset(&unit_ev, 0, sizeof(unit_ev));
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", port, &attr, &conn), 0);
	ck_assert_str_eq(idm_conn_provider(conn), "fake");
	ck_assert(unit_progress_until(ctx, &unit_ev.connected));
	ck_assert_int_eq(unit_ev.connected_status, 0);
	idm_conn_destroy(conn);
	attr.provider = NULL;
	idm_ctx_destroy(ctx);

	/* below TCP: TCP first; nobody listens on the port, so "auto"
	 * falls back to the fake, which connects */
	ck_assert_int_eq(setenv("IDM_TEST_FAKE_AUTO_ORDER", "50", 1), 0);
	ctx = unit_ctx();
	memset(&unit_ev, 0, sizeof(unit_ev));
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", port, &attr, &conn), 0);
	ck_assert_str_eq(idm_conn_provider(conn), "tcp");
	ck_assert(unit_progress_until(ctx, &unit_ev.connected));
	ck_assert_int_eq(unit_ev.connected_status, 0);
	ck_assert_str_eq(idm_conn_provider(conn), "fake");
	ck_assert(unit_log_has("falling back to fake"));
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);

	/* 0: by name only; alone, the fake is no choice for "auto" */
	ck_assert_int_eq(setenv("IDM_TEST_FAKE_AUTO_ORDER", "0", 1), 0);
	unit_use_providers("good", "fake");
	ctx = unit_ctx();
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", port, &attr, &conn), -ENOENT);
	ck_assert(strstr(idm_last_error(), "no provider can reach") != NULL);
	idm_ctx_destroy(ctx);
	unsetenv("IDM_TEST_FAKE_AUTO_ORDER");
}
END_TEST

/* A caller compiled against a shorter idm_conn_cbs: the callbacks it does
 * not know about are simply not called. */
/* A provider without the adopt/listen_fd ops (the fake's table is that of
 * a 1.1 provider, shorter than today's) cannot take a socket: the core
 * says so without reading past the table, and the socket stays the
 * caller's, flags unchanged. */
START_TEST(adopt_needs_provider_op)
{
	struct idm_conn_attr ca = unit_conn_attr("fake");
	struct idm_portal_attr pa = unit_portal_attr("fake", refuse);
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	idm_ctx *ctx = setup();
	idm_conn *c = NULL;
	idm_portal *p = NULL;
	int lfd = socket(AF_INET, SOCK_STREAM, 0), fd = socket(AF_INET, SOCK_STREAM, 0);
	int fl;

	ck_assert_int_ge(lfd, 0);
	ck_assert_int_ge(fd, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(lfd, 1), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sa, &len), 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	fl = fcntl(fd, F_GETFL);
	ck_assert_int_eq(idm_conn_adopt_fd(ctx, fd, IDM_ROLE_INITIATOR, &ca, &c),
			 -EOPNOTSUPP);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(idm_last_error(), "cannot take over a socket"),
		      "idm_last_error: %s", idm_last_error());
	ck_assert_int_eq(idm_conn_adopt_fd_ffp(ctx, fd, IDM_ROLE_INITIATOR, &ca,
					       NULL, 0, &c),
			 -EOPNOTSUPP);
	ck_assert_int_eq(fcntl(fd, F_GETFL), fl);
	ck_assert_int_eq(idm_portal_create_fd(ctx, lfd, &pa, &p), -EOPNOTSUPP);
	ck_assert_ptr_null(p);
	pa.providers = "fake,fake";
	ck_assert_int_eq(idm_portal_create_fd(ctx, lfd, &pa, &p), -EINVAL);
	ck_assert_ptr_null(ctx->conns);
	ck_assert_ptr_null(ctx->portals);
	ck_assert_int_eq(close(fd), 0);  /* still ours */
	ck_assert_int_eq(close(lfd), 0);
	idm_ctx_destroy(ctx);
}
END_TEST

/* One context per core needs the provider's help: the fake provider has
 * neither conn_move nor listen_fd, so a move and a shared port are
 * refused cleanly, leaving everything where it was. */
START_TEST(move_needs_provider_op)
{
	struct idm_portal_attr pa = {
		.size = sizeof(pa),
		.providers = "fake",
		.accept = refuse,
		.flags = IDM_PORTAL_REUSEPORT,
	};
	idm_ctx *ctx = setup(), *ctx2 = unit_ctx();
	idm_conn *c = unit_initiator(ctx, true);
	idm_portal *p = NULL;

	ck_assert_int_eq(idm_conn_move(c, ctx2), -EOPNOTSUPP);
	ck_assert_msg(strstr(idm_last_error(), "cannot move"),
		      "idm_last_error: %s", idm_last_error());
	ck_assert_ptr_eq(ctx->conns, c);
	ck_assert_ptr_null(ctx2->conns);
	ck_assert_int_eq(idm_conn_move(c, ctx), 0); /* already there */
	ck_assert_int_eq(idm_conn_move(NULL, ctx2), -EINVAL);
	ck_assert_int_eq(idm_conn_move(c, NULL), -EINVAL);
	idm_connection_terminate(c);
	ck_assert_int_eq(idm_conn_move(c, ctx2), -ENOTCONN);

	ck_assert_int_eq(idm_portal_create(ctx, "127.0.0.1", "0", &pa, &p),
			 -EOPNOTSUPP);
	ck_assert_ptr_null(p);
	/* IDM_PORTAL_V6ONLY (since 1.2): the core binds an IPv6 socket
	 * itself, which needs listen_fd; on IPv4 it changes nothing */
	pa.flags = IDM_PORTAL_V6ONLY;
	ck_assert_int_eq(idm_portal_create(ctx, "::1", "0", &pa, &p), -EOPNOTSUPP);
	ck_assert_msg(strstr(idm_last_error(), "IDM_PORTAL_V6ONLY"),
		      "idm_last_error: %s", idm_last_error());
	ck_assert_ptr_null(p);
	ck_assert_int_eq(idm_portal_create(ctx, "127.0.0.1", "0", &pa, &p), 0);
	ck_assert_ptr_nonnull(p);
	idm_portal_destroy(p);
	p = NULL;
	pa.flags = 1u << 31;
	ck_assert_int_eq(idm_portal_create(ctx, "127.0.0.1", "0", &pa, &p), -EINVAL);
	ck_assert_ptr_null(ctx->portals);
	idm_conn_destroy(c);
	idm_ctx_destroy(ctx2);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(older_callbacks_struct)
{
	struct idm_conn_cbs old = unit_cbs;
	idm_ctx *ctx = setup();
	idm_portal *portal;
	idm_conn *conn = unit_target(ctx, &portal, true);
	uint8_t din[IDM_ISCSI_BHS_LEN];
	idm_buf *buf;
	idm_task *t;

	old.size = offsetof(struct idm_conn_cbs, data_completion_notify);
	ck_assert_int_eq(idm_conn_set_cbs(conn, &old, NULL), 0);
	ck_assert_int_eq(idm_buf_alloc(ctx, 512, &buf), 0);
	ck_assert_int_eq(idm_prov_task_new(conn, 1, &t), 0);
	unit_bhs(din, IDM_ISCSI_OP_DATA_IN, 1);
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 512, 0), 0);
	for (int i = 0; i < 5; i++)
		ck_assert_int_ge(idm_ctx_progress(ctx, 0), 0);
	ck_assert_int_eq(unit_ev.completions, 0);
	idm_prov_conn_failed(conn, -EPIPE);
	for (int i = 0; i < 5; i++)
		ck_assert_int_ge(idm_ctx_progress(ctx, 0), 0);
	ck_assert_int_eq(unit_ev.terminate, 0);
	idm_deallocate_task_resources(t);
	idm_buf_destroy(buf);
	idm_portal_destroy(portal);
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { initiator_login_then_ffp,
				       connect_refused,
				       connect_reports_then_fails,
				       connect_arguments,
				       target_put_get_data,
				       control_notify_and_ack,
				       deallocate_task_cancels_silently,
				       terminate_is_silent,
				       peer_failure_notifies_once,
				       accept_refused,
				       portal_arguments,
				       auto_selection,
				       older_callbacks_struct,
				       adopt_needs_provider_op,
				       move_needs_provider_op,
				       conn_stats,
				       destroy_from_own_callback,
				       destroy_from_callback_then_ctx_destroy,
				       conn_sockaddr,
				       auto_order_and_scheme_declared,
				       NULL };

	return test_suite_run_case("conn", "conn", 0, tests);
}
