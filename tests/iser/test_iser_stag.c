/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * STag hygiene, Send with Invalidate and the iSER Hello, seen from the
 * other end of the wire (suite 'rdma'). A raw-verbs peer (raw_peer.c)
 * plays the target of a libidm initiator, or the initiator of a libidm
 * target (either one half of iser_pair.c), and checks what only the peer
 * can see:
 *
 *  - after a task completed, an RDMA Write or Read with its old rkey fails
 *    (remote access error), the caller's buffer is untouched, and libidm
 *    reports the connection failure exactly once;
 *  - a type-2 window works only on the connection it was advertised on;
 *  - IDM_ISER_STAG=mr: the initiator declines Send with Invalidate, and its
 *    STags stay usable as long as the buffer is registered, from every
 *    connection of the context (doc/iser.md documents the exposure; it is
 *    asserted here as found, so that a change is noticed);
 *  - a remote invalidation that was not negotiated fails the connection;
 *  - the libidm target sends the SCSI Response with Send with Invalidate
 *    of exactly the advertised STag iff the REQ allowed it;
 *  - iSERHelloRequired=Yes: Hello first, HelloReply with the right versions;
 *  - backpressure: a peer that pings without reading the answers makes
 *    the libidm target stop reposting receive buffers once its Send
 *    backlog is over its mark, so the peer's Sends meet receiver-not-ready
 *    instead of the backlog growing without limit.
 */
#include <check.h>
#include "check_suite.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libidm/idm.h>
#include <libidm/iscsi.h>

#include "iser_pair.h"
#include "raw_peer.h"
#include "rdma_env.h"

#define CAP (64u * 1024u)
#define IO_LEN (32u * 1024u)
#define TMO 20000

static const char *ip;

/* A libidm initiator or target (iser_pair.c, one half of it used) and the
 * raw-verbs peer that plays the other half. */
struct fx {
	struct pair p;
	struct raw_peer peer;
};

/* Operational keys of both sides: no unsolicited data, so every WRITE
 * byte moves by RDMA Read through the Write STag. */
static void stag_keys(struct p_keys *k)
{
	p_keys_default(k);
	k->immediate_data = false;
	k->initial_r2t = true;
}

static void pump(void *arg)
{
	struct fx *f = arg;

	idm_ctx_progress(f->p.ctx, 1);
}

/* Run libidm for `ms` more (late or duplicate callbacks show up here). */
static void settle(struct fx *f, int ms)
{
	double end = p_now() + ms / 1000.0;

	while (p_now() < end) {
		idm_ctx_progress(f->p.ctx, 10);
		rp_poll_cm(&f->peer);
	}
}

static bool ini_ffp(struct pair *p)
{
	return p->i_ffp;
}

/* ---- fixture -------------------------------------------------------------- */

/* A pair without a portal in `shared`'s context (another connection in
 * the same protection domain), else in a new one; with the raw peer. */
static void fx_start(struct fx *f, idm_ctx *shared)
{
	memset(f, 0, sizeof(*f));
	ck_assert_msg(p_init_ctx(&f->p, ip, CAP, shared) == 0, "%s", f->p.err);
	rp_init(&f->peer, pump, f, TMO);
}

static void fx_init(struct fx *f, bool stag_mr)
{
	const struct idm_provider_info *list;
	size_t n = 0;
	bool iser = false;

	/* read by the provider when it loads into this context */
	if (stag_mr)
		setenv("IDM_ISER_STAG", "mr", 1);
	else
		unsetenv("IDM_ISER_STAG");
	fx_start(f, NULL);
	ck_assert_int_eq(idm_get_providers(f->p.ctx, &list, &n), 0);
	unsetenv("IDM_ISER_STAG");
	for (size_t i = 0; i < n; i++)
		iser |= !strcmp(list[i].name, "iser");
	ck_assert_msg(iser, "the iser provider did not load");
}

/* Another connection (own peer, buffers, callbacks) in owner's context,
 * so in the same protection domain. */
static void fx_init_shared(struct fx *f, const struct fx *owner)
{
	fx_start(f, owner->p.ctx);
}

static void fx_fini(struct fx *f)
{
	p_close_conns(&f->p);
	rp_close(&f->peer);
	p_fini(&f->p);
}

#define PEER_OK(f, expr) \
	ck_assert_msg((expr) == 0, "%s: %s [libidm: %s | %s]", #expr, \
		      (f)->peer.err, (f)->p.err, \
		      (f)->p.ic ? idm_conn_error((f)->p.ic) : "")
#define FX_OK(f, cond) ck_assert_msg((cond) && !(f)->p.err[0], "%s: %s", #cond, (f)->p.err)

/* ---- raw target peer + libidm initiator ------------------------------- */

static void peer_login_rsp(struct fx *f)
{
	struct iser_hdr h = {.opcode = ISER_OP_CTRL};
	struct rp_msg *m = malloc(sizeof(*m));
	uint8_t rsp[IDM_ISCSI_BHS_LEN] = {0};
	const uint8_t *req;

	ck_assert_ptr_nonnull(m);
	PEER_OK(f, rp_recv(&f->peer, m));
	req = m->buf + ISER_HDR_LEN;
	ck_assert_uint_eq(m->buf[0] & ISER_OP_MASK, ISER_OP_CTRL);
	ck_assert_uint_eq(req[0] & IDM_ISCSI_OPCODE_MASK, IDM_ISCSI_OP_LOGIN_REQ);
	rsp[0] = IDM_ISCSI_OP_LOGIN_RSP;
	rsp[1] = IDM_ISCSI_LOGIN_TRANSIT | (IDM_ISCSI_STAGE_OPERATIONAL << 2) |
		 IDM_ISCSI_STAGE_FULL_FEATURE;
	memcpy(rsp + 8, req + 8, 6);
	idm_iscsi_put16(rsp + 14, 1);
	memcpy(rsp + IDM_ISCSI_BHS_ITT, req + IDM_ISCSI_BHS_ITT, 4);
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_CMDSN, 1);
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_EXP_STATSN, idm_iscsi_get32(req + IDM_ISCSI_BHS_CMDSN));
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_MAX_CMDSN, idm_iscsi_get32(req + IDM_ISCSI_BHS_CMDSN) + 64);
	free(m);
	PEER_OK(f, rp_send_pdu(&f->peer, &h, rsp, f->p.kv, (uint32_t)f->p.kv_len, false, 0));
}

/* Connect a libidm initiator to a fresh raw target peer that answers the
 * REQ with `rep_flags` (< 0: as libidm's target would) and log in. */
static void ini_login(struct fx *f, int rep_flags)
{
	struct p_keys k;
	int port = 0;

	stag_keys(&k);
	PEER_OK(f, rp_listen(&f->peer, ip, &port));
	f->p.remote_port = port;
	ck_assert_msg(p_connect(&f->p, &k) == 0, "%s", f->p.err);
	PEER_OK(f, rp_accept(&f->peer, rep_flags));
	peer_login_rsp(f);
	FX_OK(f, p_progress_until(&f->p, ini_ffp, TMO) == 0);
}

static bool send_inv_negotiated(const struct raw_peer *p)
{
	struct iser_cm_nego n;

	iser_cm_negotiate(p->req_flags, p->rep_flags, &n);
	return n.send_inv;
}

/* A received message that must be a SCSI Command: its header and BHS. */
static void cmd_parse(const struct rp_msg *m, struct iser_hdr *h, uint8_t *bhs)
{
	ck_assert_int_eq(iser_hdr_decode(m->buf, m->len, h), 0);
	ck_assert_uint_eq(h->opcode, ISER_OP_CTRL);
	memcpy(bhs, m->buf + ISER_HDR_LEN, IDM_ISCSI_BHS_LEN);
	ck_assert_uint_eq(bhs[0] & IDM_ISCSI_OPCODE_MASK, IDM_ISCSI_OP_SCSI_CMD);
}

/* Receive the SCSI Command the libidm initiator just sent. */
static void peer_cmd(struct fx *f, struct iser_hdr *h, uint8_t *bhs)
{
	struct rp_msg *m = malloc(sizeof(*m));

	ck_assert_ptr_nonnull(m);
	PEER_OK(f, rp_recv(&f->peer, m));
	cmd_parse(m, h, bhs);
	free(m);
}

/* The SCSI Response; returns the send completion status. */
static int peer_rsp(struct fx *f, const uint8_t *cmd, bool with_inv,
		    uint32_t rkey)
{
	struct iser_hdr h = {.opcode = ISER_OP_CTRL};
	uint8_t rsp[IDM_ISCSI_BHS_LEN] = {0};
	int r;

	rsp[0] = IDM_ISCSI_OP_SCSI_RSP;
	rsp[1] = IDM_ISCSI_FLAG_FINAL;
	memcpy(rsp + IDM_ISCSI_BHS_ITT, cmd + IDM_ISCSI_BHS_ITT, 4);
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_CMDSN, 2);
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_EXP_STATSN, idm_iscsi_get32(cmd + IDM_ISCSI_BHS_CMDSN) + 1);
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_MAX_CMDSN, idm_iscsi_get32(cmd + IDM_ISCSI_BHS_CMDSN) + 64);
	r = rp_send_pdu(&f->peer, &h, rsp, NULL, 0, with_inv, rkey);
	ck_assert_msg(r >= 0, "%s", f->peer.err);
	return r;
}

/* A READ of IO_LEN through libidm: the peer writes it with the Read STag
 * (must work) and responds; the STag is returned for later abuse. */
static void do_read(struct fx *f, uint32_t seed, uint32_t *stag, uint64_t *va)
{
	struct iser_hdr h;
	uint8_t cmd[IDM_ISCSI_BHS_LEN];
	bool inv = send_inv_negotiated(&f->peer);

	memset(f->p.mem + P_GUARD, 0, CAP);
	ck_assert_int_eq(p_io_start(&f->p, false, IO_LEN), 0);
	peer_cmd(f, &h, cmd);
	ck_assert(h.rsv && !h.wsv);
	ck_assert_uint_eq(h.read_va, (uintptr_t)(f->p.mem + P_GUARD));
	p_pattern(f->peer.data, IO_LEN, seed);
	ck_assert_msg(rp_rdma(&f->peer, true, h.read_stag, h.read_va, 0, IO_LEN) ==
		      IBV_WC_SUCCESS, "RDMA Write with a live STag: %s",
		      f->peer.err);
	ck_assert_int_eq(peer_rsp(f, cmd, inv, h.read_stag), IBV_WC_SUCCESS);
	FX_OK(f, p_io_wait(&f->p, TMO) == 0);
	ck_assert_mem_eq(f->p.mem + P_GUARD, f->peer.data, IO_LEN);
	*stag = h.read_stag;
	*va = h.read_va;
}

/* A WRITE of IO_LEN: the peer reads it with the Write STag. */
static void do_write(struct fx *f, uint32_t seed, uint32_t *stag, uint64_t *va)
{
	struct iser_hdr h;
	uint8_t cmd[IDM_ISCSI_BHS_LEN];
	bool inv = send_inv_negotiated(&f->peer);

	p_pattern(f->p.mem + P_GUARD, IO_LEN, seed);
	memset(f->peer.data, 0, IO_LEN);
	ck_assert_int_eq(p_io_start(&f->p, true, IO_LEN), 0);
	peer_cmd(f, &h, cmd);
	ck_assert(h.wsv && !h.rsv);
	ck_assert_msg(rp_rdma(&f->peer, false, h.write_stag, h.write_va, 0,
			      IO_LEN) == IBV_WC_SUCCESS,
		      "RDMA Read with a live STag: %s", f->peer.err);
	ck_assert_mem_eq(f->peer.data, f->p.mem + P_GUARD, IO_LEN);
	ck_assert_int_eq(peer_rsp(f, cmd, inv, h.write_stag), IBV_WC_SUCCESS);
	FX_OK(f, p_io_wait(&f->p, TMO) == 0);
	*stag = h.write_stag;
	*va = h.write_va;
}

static bool i_terminated(struct fx *f)
{
	return f->p.i_terminated > 0;
}

/* The connection failure libidm reports after the peer's bad access:
 * exactly one notification, nothing after it. */
static void expect_one_failure(struct fx *f, const char *what)
{
	double t0 = p_now();
	bool term = false;

	double dt;

	while (!(term = i_terminated(f)) && p_now() - t0 < TMO / 1000.0)
		idm_ctx_progress(f->p.ctx, 10);
	dt = p_now() - t0;
	ck_assert_msg(term, "%s: libidm reported no failure", what);
	settle(f, 500);
	ck_assert_int_eq(f->p.i_terminated, 1);
	ck_assert_int_eq(f->p.cb_after_end, 0);
	ck_assert_int_lt(f->p.i_reason, 0);
	printf("%s: libidm failed the connection once, %.3f s later: %s (%s)\n",
	       what, dt, idm_strerror(f->p.i_reason), idm_conn_error(f->p.ic));
}

/* The peer uses the old STag of a finished task (write: RDMA Write with
 * the Read STag, else RDMA Read with the Write STag) and must fail. */
static void stale_must_fail(struct fx *f, bool write, uint32_t stag, uint64_t va)
{
	uint8_t *snap = malloc(CAP);
	int st;

	ck_assert_ptr_nonnull(snap);
	memcpy(snap, f->p.mem + P_GUARD, CAP);
	p_pattern(f->peer.data, IO_LEN, 0xbad);
	st = rp_rdma(&f->peer, write, stag, va, 0, IO_LEN);
	ck_assert_msg(st >= 0, "%s", f->peer.err);
	printf("stale RDMA %s with rkey %#x: %s\n", write ? "Write" : "Read",
	       stag, ibv_wc_status_str((enum ibv_wc_status)st));
	ck_assert_int_eq(st, IBV_WC_REM_ACCESS_ERR);
	ck_assert_mem_eq(f->p.mem + P_GUARD, snap, CAP);
	free(snap);
	expect_one_failure(f, write ? "stale Write" : "stale Read");
}

START_TEST(mw_stale_write)
{
	struct fx f;
	uint32_t rs, ws;
	uint64_t rva, wva;

	fx_init(&f, false);
	ini_login(&f, -1);
	/* windows: Send with Invalidate offered, and taken */
	ck_assert_uint_eq(f.peer.req_flags, ISER_CM_ZBVA_NOT_SUP);
	ck_assert(send_inv_negotiated(&f.peer));
	do_read(&f, 1, &rs, &rva);
	do_write(&f, 2, &ws, &wva);
	ck_assert_uint_ne(rs, ws);
	stale_must_fail(&f, true, rs, rva);
	fx_fini(&f);
}
END_TEST

START_TEST(mw_stale_read)
{
	struct fx f;
	uint32_t rs, ws;
	uint64_t rva, wva;

	fx_init(&f, false);
	ini_login(&f, -1);
	ck_assert(send_inv_negotiated(&f.peer));
	do_write(&f, 3, &ws, &wva);
	do_read(&f, 4, &rs, &rva);
	stale_must_fail(&f, false, ws, wva);
	fx_fini(&f);
}
END_TEST

/* The target declines Send with Invalidate: libidm must revoke the
 * windows itself before the caller sees the response. */
START_TEST(mw_local_invalidate)
{
	struct fx f;
	uint32_t rs, ws;
	uint64_t rva, wva;

	fx_init(&f, false);
	ini_login(&f, ISER_CM_ZBVA_NOT_USED | ISER_CM_SEND_INV_NOT_USED);
	ck_assert(!send_inv_negotiated(&f.peer));
	do_read(&f, 5, &rs, &rva);
	do_write(&f, 6, &ws, &wva);
	stale_must_fail(&f, true, rs, rva);
	fx_fini(&f);
}
END_TEST

/* Send with Invalidate although the REP said plain Sends: the receive
 * succeeds (a window can be invalidated) but libidm must refuse it. */
START_TEST(mw_unnegotiated_invalidate)
{
	struct fx f;
	struct iser_hdr h;
	uint8_t cmd[IDM_ISCSI_BHS_LEN];

	fx_init(&f, false);
	ini_login(&f, ISER_CM_ZBVA_NOT_USED | ISER_CM_SEND_INV_NOT_USED);
	ck_assert_int_eq(p_io_start(&f.p, false, IO_LEN), 0);
	peer_cmd(&f, &h, cmd);
	ck_assert(h.rsv);
	ck_assert_int_eq(rp_rdma(&f.peer, true, h.read_stag, h.read_va, 0, IO_LEN),
			 IBV_WC_SUCCESS);
	ck_assert_int_eq(peer_rsp(&f, cmd, true, h.read_stag), IBV_WC_SUCCESS);
	expect_one_failure(&f, "unnegotiated Send with Invalidate");
	ck_assert_int_eq(f.p.i_reason, -EPROTO);
	ck_assert(!f.p.done); /* the response never reached the caller */
	fx_fini(&f);
}
END_TEST

/* A READ the caller releases before its answer (a timeout, an abort):
 * the peer has the command and its Read STag; idm_deallocate_task_resources()
 * invalidates the window (doc/iser.md, "Late answers"). */
static void released_read(struct fx *f, struct iser_hdr *h, uint8_t *cmd)
{
	memset(f->p.mem + P_GUARD, 0, CAP);
	ck_assert_int_eq(p_io_start(&f->p, false, IO_LEN), 0);
	peer_cmd(f, h, cmd);
	ck_assert(h->rsv);
	idm_deallocate_task_resources(f->p.task);
	f->p.task = NULL;
	settle(f, 300); /* the local invalidation completes */
}

static uint64_t late_dropped(struct fx *f)
{
	struct idm_conn_stats st = {.size = sizeof(st)};

	ck_assert_int_eq(idm_conn_get_stats(f->p.ic, &st), 0);
	return st.late_pdus_dropped;
}

/* A late SCSI Response in a plain Send reaches control_notify with no
 * task (the pair takes it as the released task's: both NULL) and the
 * connection serves on; 0 counted on an iSER initiator. */
START_TEST(mw_released_late_response)
{
	struct fx f;
	struct iser_hdr h;
	uint8_t cmd[IDM_ISCSI_BHS_LEN];
	uint32_t rs;
	uint64_t rva;

	fx_init(&f, false);
	ini_login(&f, -1);
	released_read(&f, &h, cmd);
	ck_assert_int_eq(peer_rsp(&f, cmd, false, 0), IBV_WC_SUCCESS);
	FX_OK(&f, p_io_wait(&f.p, TMO) == 0);
	ck_assert_int_eq(f.p.i_terminated, 0);
	do_read(&f, 7, &rs, &rva);
	ck_assert_int_eq(f.p.i_terminated, 0);
	ck_assert_uint_eq(late_dropped(&f), 0);
	printf("late plain SCSI Response of a released task: delivered without "
	       "a task, the connection serves on\n");
	fx_fini(&f);
}
END_TEST

/* Late RDMA Write of Data-In with the released task's STag: remote
 * access error, nothing written, the connection fails. */
START_TEST(mw_released_late_write)
{
	struct fx f;
	struct iser_hdr h;
	uint8_t cmd[IDM_ISCSI_BHS_LEN];

	fx_init(&f, false);
	ini_login(&f, -1);
	released_read(&f, &h, cmd);
	stale_must_fail(&f, true, h.read_stag, h.read_va);
	fx_fini(&f);
}
END_TEST

/* IDM_ISER_STAG=mr. The STag is the MR's rkey: the initiator cannot
 * revoke it, so it says Send with Invalidate is not supported, and the
 * buffer stays reachable with the old rkey until idm_buf_destroy()
 * deregisters it (doc/iser.md, "STags"). Asserted as documented. */
START_TEST(mr_stale_until_deregistered)
{
	struct fx f;
	uint32_t rs, ws;
	uint64_t rva, wva;
	int st;

	fx_init(&f, true);
	ini_login(&f, -1);
	ck_assert_uint_eq(f.peer.req_flags,
			  ISER_CM_ZBVA_NOT_SUP | ISER_CM_SEND_INV_NOT_SUP);
	ck_assert(!send_inv_negotiated(&f.peer));
	do_read(&f, 7, &rs, &rva);
	do_write(&f, 8, &ws, &wva);
	ck_assert_uint_eq(rs, ws); /* one MR, one rkey for both directions */

	p_pattern(f.peer.data, IO_LEN, 0xbad);
	st = rp_rdma(&f.peer, true, rs, rva, 0, IO_LEN);
	printf("MR mode: stale RDMA Write with rkey %#x after the task ended: "
	       "%s\n", rs, ibv_wc_status_str((enum ibv_wc_status)st));
	ck_assert_int_eq(st, IBV_WC_SUCCESS);
	ck_assert_mem_eq(f.p.mem + P_GUARD, f.peer.data, IO_LEN); /* overwritten */
	ck_assert_int_eq(f.p.i_terminated, 0);

	/* deregistration is what ends the exposure */
	idm_buf_destroy(f.p.buf);
	f.p.buf = NULL;
	memset(f.p.mem + P_GUARD, 0x11, IO_LEN);
	p_pattern(f.peer.data, IO_LEN, 0xbad2);
	st = rp_rdma(&f.peer, true, rs, rva, 0, IO_LEN);
	printf("MR mode: after idm_buf_destroy: %s\n",
	       ibv_wc_status_str((enum ibv_wc_status)st));
	ck_assert_int_eq(st, IBV_WC_REM_ACCESS_ERR);
	for (uint32_t i = 0; i < IO_LEN; i++)
		ck_assert_uint_eq(f.p.mem[P_GUARD + i], 0x11);
	expect_one_failure(&f, "MR mode, Write after deregistration");
	fx_fini(&f);
}
END_TEST

/* IDM_ISER_STAG=mr declines Send with Invalidate; a target that sends
 * one anyway must not get its response through. On rxe the invalidation
 * of a user MR's rkey already fails in the initiator's responder (the
 * target's Send is ACKed, the receive completes with "remote invalid
 * request error"), which libidm reports as -EIO; a device that let the
 * receive through reaches the provider's own -EPROTO check. */
START_TEST(mr_send_inv_refused)
{
	struct fx f;
	struct iser_hdr h;
	uint8_t cmd[IDM_ISCSI_BHS_LEN];
	int st;

	fx_init(&f, true);
	ini_login(&f, -1);
	ck_assert(!send_inv_negotiated(&f.peer));
	ck_assert_int_eq(p_io_start(&f.p, false, IO_LEN), 0);
	peer_cmd(&f, &h, cmd);
	ck_assert_int_eq(rp_rdma(&f.peer, true, h.read_stag, h.read_va, 0, IO_LEN),
			 IBV_WC_SUCCESS);
	st = peer_rsp(&f, cmd, true, h.read_stag);
	printf("MR mode: Send with Invalidate of rkey %#x: %s\n", h.read_stag,
	       ibv_wc_status_str((enum ibv_wc_status)st));
	expect_one_failure(&f, "MR mode, Send with Invalidate");
	if (f.p.i_reason != -EPROTO)
		ck_assert_msg(strstr(idm_conn_error(f.p.ic), "receive failed"),
			      "%s", idm_conn_error(f.p.ic));
	ck_assert(!f.p.done);
	fx_fini(&f);
}
END_TEST

/* IDM_ISER_STAG=mr: the MR lives in the context's one protection domain,
 * so its rkey works on *every* connection of the context, not only on the
 * one it was advertised to: a second target that learns nothing but the
 * rkey and VA reaches the first connection's buffer. Asserted as found. */
START_TEST(mr_rkey_reaches_other_connections)
{
	struct fx a, b;
	uint32_t rs;
	uint64_t rva;
	int st;

	fx_init(&a, true);
	ini_login(&a, -1);
	do_read(&a, 11, &rs, &rva);
	fx_init_shared(&b, &a);
	ini_login(&b, -1);
	p_pattern(b.peer.data, IO_LEN, 0xc0de);
	st = rp_rdma(&b.peer, true, rs, rva, 0, IO_LEN);
	printf("MR mode: connection B's target writes connection A's buffer "
	       "with A's old rkey %#x: %s\n", rs,
	       ibv_wc_status_str((enum ibv_wc_status)st));
	ck_assert_int_eq(st, IBV_WC_SUCCESS);
	ck_assert_mem_eq(a.p.mem + P_GUARD, b.peer.data, IO_LEN);
	settle(&a, 200);
	ck_assert_int_eq(a.p.i_terminated + b.p.i_terminated, 0);
	fx_fini(&b);
	fx_fini(&a);
}
END_TEST

/* Windows (default): a type-2 window is bound to the QP that bound it,
 * so even a *live* STag of connection A is useless on connection B. */
START_TEST(mw_stag_bound_to_its_connection)
{
	struct fx a, b;
	struct iser_hdr h;
	uint8_t cmd[IDM_ISCSI_BHS_LEN];
	uint8_t *snap = malloc(CAP);
	int st;

	ck_assert_ptr_nonnull(snap);
	fx_init(&a, false);
	ini_login(&a, -1);
	fx_init_shared(&b, &a);
	ini_login(&b, -1);
	memset(a.p.mem + P_GUARD, 0, CAP);
	ck_assert_int_eq(p_io_start(&a.p, false, IO_LEN), 0);
	peer_cmd(&a, &h, cmd);
	memcpy(snap, a.p.mem + P_GUARD, CAP);
	p_pattern(b.peer.data, IO_LEN, 0xc0de);
	st = rp_rdma(&b.peer, true, h.read_stag, h.read_va, 0, IO_LEN);
	printf("windows: connection B's target uses connection A's live STag "
	       "%#x: %s\n", h.read_stag,
	       ibv_wc_status_str((enum ibv_wc_status)st));
	ck_assert_int_eq(st, IBV_WC_REM_ACCESS_ERR);
	ck_assert_mem_eq(a.p.mem + P_GUARD, snap, CAP);
	free(snap);
	expect_one_failure(&b, "foreign STag on connection B");
	/* A is not affected and completes its READ */
	p_pattern(a.peer.data, IO_LEN, 12);
	ck_assert_int_eq(rp_rdma(&a.peer, true, h.read_stag, h.read_va, 0, IO_LEN),
			 IBV_WC_SUCCESS);
	ck_assert_int_eq(peer_rsp(&a, cmd, true, h.read_stag), IBV_WC_SUCCESS);
	FX_OK(&a, p_io_wait(&a.p, TMO) == 0);
	ck_assert_mem_eq(a.p.mem + P_GUARD, a.peer.data, IO_LEN);
	ck_assert_int_eq(a.p.i_terminated, 0);
	fx_fini(&b);
	fx_fini(&a);
}
END_TEST

/* The caller noticed iSERHelloRequired=Yes: the Hello is the first iSER
 * message of the full feature phase (RFC 7145 5.1.1, 9.3). */
START_TEST(initiator_sends_hello)
{
	struct fx f;
	struct rp_msg *m = malloc(sizeof(*m));
	struct iser_hello hello, rep;
	struct iser_hdr h;
	uint8_t cmd[IDM_ISCSI_BHS_LEN], msg[ISER_HDR_LEN];
	uint32_t rs;
	uint64_t rva;
	bool early;

	ck_assert_ptr_nonnull(m);
	fx_init(&f, false);
	f.p.hello = true;
	ini_login(&f, -1);
	/* a command right away: it must not overtake the Hello */
	ck_assert_int_eq(p_io_start(&f.p, false, IO_LEN), 0);
	PEER_OK(&f, rp_recv(&f.peer, m));
	ck_assert_msg(iser_hello_decode(m->buf, m->len, &hello) == 0 &&
		      hello.opcode == ISER_OP_HELLO,
		      "first FFP message: byte 0 %#x, %u bytes", m->buf[0], m->len);
	ck_assert_uint_eq(hello.max_ver, ISER_VERSION);
	ck_assert_uint_eq(hello.min_ver, ISER_VERSION);
	/* iSER-IRD: what the REQ offered as responder resources */
	ck_assert_uint_eq(hello.ird_ord, f.peer.peer_ird);
	/* Observed, not asserted: does the command wait for the HelloReply? */
	f.peer.timeout_ms = 500;
	early = rp_recv(&f.peer, m) == 0;
	f.peer.timeout_ms = TMO;
	printf("Hello: IRD %u; the SCSI Command %s the HelloReply\n",
	       hello.ird_ord, early ? "did not wait for" : "waited for");
	if (early)
		cmd_parse(m, &h, cmd);
	memset(&rep, 0, sizeof(rep));
	rep.opcode = ISER_OP_HELLO_REPLY;
	rep.max_ver = ISER_VERSION;
	rep.min_ver = ISER_VERSION;
	rep.ird_ord = hello.ird_ord;
	iser_hello_encode(msg, &rep);
	ck_assert_int_eq(rp_send(&f.peer, msg, sizeof(msg), false, 0),
			 IBV_WC_SUCCESS);
	if (!early)
		peer_cmd(&f, &h, cmd);
	free(m);
	/* the READ then works as usual */
	ck_assert(h.rsv);
	p_pattern(f.peer.data, IO_LEN, 9);
	ck_assert_int_eq(rp_rdma(&f.peer, true, h.read_stag, h.read_va, 0, IO_LEN),
			 IBV_WC_SUCCESS);
	ck_assert_int_eq(peer_rsp(&f, cmd, true, h.read_stag), IBV_WC_SUCCESS);
	FX_OK(&f, p_io_wait(&f.p, TMO) == 0);
	ck_assert_mem_eq(f.p.mem + P_GUARD, f.peer.data, IO_LEN);
	ck_assert_int_eq(f.p.i_terminated, 0);
	/* and another, to be sure the HelloReply left nothing behind */
	do_read(&f, 10, &rs, &rva);
	fx_fini(&f);
}
END_TEST

/* ---- raw initiator peer + libidm target -------------------------------- */

static void tgt_listen(struct fx *f, bool hello, int *port)
{
	struct p_keys k;

	stag_keys(&k);
	p_set_keys(&f->p, &k, true);
	f->p.hello = hello;
	ck_assert_msg(p_listen(&f->p, "iser") == 0, "%s", f->p.err);
	*port = idm_portal_port(f->p.portal);
}

static void peer_login_req(struct fx *f, bool hello)
{
	struct iser_hdr h = {.opcode = ISER_OP_CTRL};
	struct rp_msg *m = malloc(sizeof(*m));
	uint8_t req[IDM_ISCSI_BHS_LEN] = {0};
	char data[1024];
	size_t n = 0;
	const uint8_t *rsp;

	ck_assert_ptr_nonnull(m);
	n += (size_t)snprintf(data + n, sizeof(data) - n,
			      "InitiatorName=iqn.2026-11.test:peer") + 1;
	n += (size_t)snprintf(data + n, sizeof(data) - n,
			      "TargetName=iqn.2026-11.test:stag") + 1;
	memcpy(data + n, f->p.kv, f->p.kv_len);
	n += f->p.kv_len;
	if (hello) {
		memcpy(data + n, P_HELLO_KEY, sizeof(P_HELLO_KEY));
		n += sizeof(P_HELLO_KEY);
	}
	req[0] = IDM_ISCSI_OP_LOGIN_REQ | IDM_ISCSI_OP_IMMEDIATE;
	req[1] = IDM_ISCSI_LOGIN_TRANSIT | (IDM_ISCSI_STAGE_OPERATIONAL << 2) |
		 IDM_ISCSI_STAGE_FULL_FEATURE;
	req[8] = 0x80;
	idm_iscsi_put32(req + IDM_ISCSI_BHS_ITT, 0x77);
	idm_iscsi_put32(req + IDM_ISCSI_BHS_CMDSN, 1);
	ck_assert_int_eq(rp_send_pdu(&f->peer, &h, req, data, (uint32_t)n,
				     false, 0), IBV_WC_SUCCESS);
	PEER_OK(f, rp_recv(&f->peer, m));
	rsp = m->buf + ISER_HDR_LEN;
	ck_assert_uint_eq(m->buf[0] & ISER_OP_MASK, ISER_OP_CTRL);
	ck_assert_uint_eq(rsp[0] & IDM_ISCSI_OPCODE_MASK, IDM_ISCSI_OP_LOGIN_RSP);
	ck_assert_uint_eq(rsp[36], 0);
	ck_assert(rsp[1] & IDM_ISCSI_LOGIN_TRANSIT);
	free(m);
	FX_OK(f, f->p.t_ffp);
}

/* One command from the raw initiator through a window of its own; the
 * SCSI Response's receive completion says how the target ended it. */
static void peer_io(struct fx *f, bool write, bool expect_inv)
{
	struct iser_hdr h = {.opcode = ISER_OP_CTRL};
	struct rp_msg *m = malloc(sizeof(*m));
	uint8_t cmd[IDM_ISCSI_BHS_LEN] = {0};
	struct ibv_mw *mw;
	uint32_t stag, inv_rkey;
	bool inv;

	ck_assert_ptr_nonnull(m);
	PEER_OK(f, rp_mw_bind(&f->peer, 0, IO_LEN, !write, &mw, &stag));
	if (write) {
		p_pattern(f->peer.data, IO_LEN, 20);
		memset(f->p.disk + P_GUARD, 0, CAP);
		h.wsv = true;
		h.write_stag = stag;
		h.write_va = (uintptr_t)f->peer.data;
	} else {
		p_pattern(f->p.disk + P_GUARD, IO_LEN, 21);
		memset(f->peer.data, 0, IO_LEN);
		h.rsv = true;
		h.read_stag = stag;
		h.read_va = (uintptr_t)f->peer.data;
	}
	cmd[0] = IDM_ISCSI_OP_SCSI_CMD;
	cmd[1] = IDM_ISCSI_FLAG_FINAL | (write ? IDM_ISCSI_CMD_WRITE : IDM_ISCSI_CMD_READ) |
		 IDM_ISCSI_ATTR_SIMPLE;
	idm_iscsi_put32(cmd + IDM_ISCSI_BHS_ITT, ++f->p.itt);
	idm_iscsi_put32(cmd + IDM_ISCSI_CMD_EDTL, IO_LEN);
	idm_iscsi_put32(cmd + IDM_ISCSI_BHS_CMDSN, f->p.cmdsn++);
	cmd[IDM_ISCSI_CMD_CDB] = write ? P_CDB_WRITE : P_CDB_READ;
	ck_assert_int_eq(rp_send_pdu(&f->peer, &h, cmd, NULL, 0, false, 0),
			 IBV_WC_SUCCESS);
	PEER_OK(f, rp_recv(&f->peer, m));
	FX_OK(f, true);
	ck_assert_uint_eq(m->buf[ISER_HDR_LEN] & IDM_ISCSI_OPCODE_MASK,
			  IDM_ISCSI_OP_SCSI_RSP);
	ck_assert_uint_eq(idm_iscsi_get32(m->buf + ISER_HDR_LEN + IDM_ISCSI_BHS_ITT), f->p.itt);
	ck_assert_uint_eq(m->buf[ISER_HDR_LEN + 3], 0);
	inv = rp_wc_invalidated(&m->wc, &inv_rkey);
	printf("target %s response: wc_flags %#x invalidated_rkey %#x "
	       "(advertised %#x)\n", write ? "WRITE" : "READ",
	       (unsigned)m->wc.wc_flags, inv_rkey, stag);
	ck_assert_int_eq(inv, expect_inv);
	if (expect_inv)
		ck_assert_uint_eq(inv_rkey, stag);
	free(m);
	if (write)
		ck_assert_mem_eq(f->p.disk + P_GUARD, f->peer.data, IO_LEN);
	else
		ck_assert_mem_eq(f->peer.data, f->p.disk + P_GUARD, IO_LEN);
}

static void target_send_inv(bool offer)
{
	struct fx f;
	int port;

	fx_init(&f, false);
	tgt_listen(&f, false, &port);
	PEER_OK(&f, rp_connect(&f.peer, ip, port,
			       ISER_CM_ZBVA_NOT_SUP |
			       (offer ? 0 : ISER_CM_SEND_INV_NOT_SUP), 4));
	/* REP: virtual addresses; plain Sends iff we declined */
	ck_assert_uint_eq(f.peer.rep_flags,
			  ISER_CM_ZBVA_NOT_USED |
			  (offer ? 0 : ISER_CM_SEND_INV_NOT_USED));
	peer_login_req(&f, false);
	peer_io(&f, false, offer);
	peer_io(&f, true, offer);
	settle(&f, 200);
	ck_assert_int_eq(f.p.t_terminated, 0);
	fx_fini(&f);
}

START_TEST(target_send_inv_offered)
{
	target_send_inv(true);
}
END_TEST

START_TEST(target_send_inv_declined)
{
	target_send_inv(false);
}
END_TEST

START_TEST(target_answers_hello)
{
	struct fx f;
	struct rp_msg *m = malloc(sizeof(*m));
	struct iser_hello hello = {.opcode = ISER_OP_HELLO,
				   .max_ver = ISER_VERSION,
				   .min_ver = ISER_VERSION, .ird_ord = 4};
	struct iser_hello rep;
	uint8_t msg[ISER_HDR_LEN];
	int port;

	ck_assert_ptr_nonnull(m);
	fx_init(&f, false);
	tgt_listen(&f, true, &port);
	PEER_OK(&f, rp_connect(&f.peer, ip, port, ISER_CM_ZBVA_NOT_SUP, 4));
	peer_login_req(&f, true);
	iser_hello_encode(msg, &hello);
	ck_assert_int_eq(rp_send(&f.peer, msg, sizeof(msg), false, 0),
			 IBV_WC_SUCCESS);
	PEER_OK(&f, rp_recv(&f.peer, m));
	ck_assert_msg(iser_hello_decode(m->buf, m->len, &rep) == 0 &&
		      rep.opcode == ISER_OP_HELLO_REPLY,
		      "reply: byte 0 %#x, %u bytes", m->buf[0], m->len);
	free(m);
	printf("HelloReply: reject %d MaxVer %u CurVer %u ORD %u\n", rep.reject,
	       rep.max_ver, rep.min_ver, rep.ird_ord);
	ck_assert(!rep.reject);
	ck_assert_uint_eq(rep.max_ver, ISER_VERSION);
	ck_assert_uint_eq(rep.min_ver, ISER_VERSION); /* CurVer */
	ck_assert_uint_le(rep.ird_ord, hello.ird_ord);
	ck_assert_uint_gt(rep.ird_ord, 0);
	/* the connection goes on: a WRITE needs the target's RDMA Read */
	peer_io(&f, true, true);
	peer_io(&f, false, true);
	settle(&f, 200);
	ck_assert_int_eq(f.p.t_terminated, 0);
	fx_fini(&f);
}
END_TEST

/* More pings than the target's posted receive buffers, send buffers and
 * half its send queue bound (IDM_SEND_QUEUE_ENTRIES) take together. */
#define PINGS 8000

START_TEST(target_stops_reposting_when_not_read)
{
	struct iser_hdr h = {.opcode = ISER_OP_CTRL};
	uint8_t nop[IDM_ISCSI_BHS_LEN] = {0};
	struct fx f;
	int port, i, st = IBV_WC_SUCCESS;

	fx_init(&f, false);
	tgt_listen(&f, false, &port);
	PEER_OK(&f, rp_connect(&f.peer, ip, port, ISER_CM_ZBVA_NOT_SUP, 4));
	peer_login_req(&f, false);
	/* Each ping waits for its Send to complete; the peer never takes
	 * the NOP-Ins out of its receive queue (rp_recv), so once its few
	 * receives are used the target's Sends stall, its backlog grows
	 * and it must stop reposting: a ping then meets receiver-not-ready
	 * until the peer's RNR retries run out. */
	f.peer.timeout_ms = 5000;
	nop[0] = IDM_ISCSI_OP_NOP_OUT | IDM_ISCSI_OP_IMMEDIATE;
	nop[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(nop + IDM_ISCSI_BHS_TTT, IDM_ISCSI_RESERVED_TAG);
	idm_iscsi_put32(nop + IDM_ISCSI_BHS_CMDSN, f.p.cmdsn);
	for (i = 0; i < PINGS; i++) {
		idm_iscsi_put32(nop + IDM_ISCSI_BHS_ITT, (uint32_t)i + 1);
		st = rp_send_pdu(&f.peer, &h, nop, NULL, 0, false, 0);
		if (st != IBV_WC_SUCCESS)
			break;
	}
	printf("pings: %d sent, the last %s; the target handled %d, "
	       "%d NOP-Ins refused with -EAGAIN\n", i,
	       st == IBV_WC_SUCCESS ? "ok"
	       : st < 0 ? f.peer.err : ibv_wc_status_str((enum ibv_wc_status)st),
	       f.p.t_nops, f.p.t_nop_eagain);
	ck_assert_msg(i < PINGS, "all %d pings were taken: the target kept "
		      "reposting its receive buffers", PINGS);
	ck_assert_msg(st == IBV_WC_RNR_RETRY_EXC_ERR || st < 0,
		      "the ping failed with %d, not receiver-not-ready", st);
	ck_assert_int_lt(f.p.t_nops, PINGS);
	fx_fini(&f);
}
END_TEST

/* A well-framed PDU with an opcode no initiator sends reaches the caller
 * with no task in full feature phase, and the connection goes on
 * (doc/api.md 7.1: the caller answers with a Reject). */
START_TEST(target_passes_up_unknown_opcode)
{
	struct fx f;
	struct iser_hdr h = {.opcode = ISER_OP_CTRL};
	uint8_t bhs[IDM_ISCSI_BHS_LEN] = {0};
	int port;

	fx_init(&f, false);
	tgt_listen(&f, false, &port);
	PEER_OK(&f, rp_connect(&f.peer, ip, port, ISER_CM_ZBVA_NOT_SUP, 4));
	peer_login_req(&f, false);
	bhs[0] = 0x1e; /* vendor-specific: not this target's */
	bhs[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_bhs_set_data_len(bhs, 5);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, 0x42);
	ck_assert_int_eq(rp_send_pdu(&f.peer, &h, bhs, "hello", 5, false, 0),
			 IBV_WC_SUCCESS);
	settle(&f, 200);
	ck_assert_int_eq(f.p.t_unmatched, 1);
	ck_assert_int_eq(f.p.t_terminated, 0);
	peer_io(&f, false, true);
	settle(&f, 200);
	ck_assert_int_eq(f.p.t_terminated, 0);
	fx_fini(&f);
}
END_TEST

/* STAG_TEST=name runs that test only (with CK_RUN_CASE for its case). */
static void add(TCase *tc, const TTest *t, const char *name)
{
	const char *only = getenv("STAG_TEST");

	if (!only || !strcmp(only, name))
		tcase_add_test(tc, t);
}
#define ADD(tc, t) add(tc, t, #t)

int main(void)
{
	Suite *s;
	TCase *tc;

	ip = rdma_test_ip();
	s = suite_create("iser_stag");
	tc = tcase_create("initiator");
	tcase_set_timeout(tc, 200);
	ADD(tc, mw_stale_write);
	ADD(tc, mw_stale_read);
	ADD(tc, mw_local_invalidate);
	ADD(tc, mw_unnegotiated_invalidate);
	ADD(tc, mr_stale_until_deregistered);
	ADD(tc, mr_send_inv_refused);
	ADD(tc, mr_rkey_reaches_other_connections);
	ADD(tc, mw_stag_bound_to_its_connection);
	ADD(tc, initiator_sends_hello);
	ADD(tc, mw_released_late_response);
	ADD(tc, mw_released_late_write);
	suite_add_tcase(s, tc);
	tc = tcase_create("target");
	tcase_set_timeout(tc, 200);
	ADD(tc, target_send_inv_offered);
	ADD(tc, target_send_inv_declined);
	ADD(tc, target_answers_hello);
	ADD(tc, target_stops_reposting_when_not_read);
	ADD(tc, target_passes_up_unknown_opcode);
	suite_add_tcase(s, tc);
	return test_suite_run(s);
}
