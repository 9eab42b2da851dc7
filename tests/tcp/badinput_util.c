/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Steps shared by the bad-input and terminate tests (see badinput_util.h).
 */
#include "badinput_util.h"

#include <check.h>
#include <string.h>

static bool t_ffp(struct h *h)
{
	return h->t.ffp || h->t.terminate_count;
}

static bool i_ffp(struct h *h)
{
	return h->i.ffp || h->i.terminate_count || h->login_failed;
}

void bi_evil_initiator(struct h *h, struct h_raw *r, const struct h_params *p,
		       uint32_t slot_cap)
{
	int rc = h_init(h, slot_cap, 2);

	ck_assert_msg(rc == 0, "h_init: %s", h->err);
	h->p = *p; /* the target declares p->tgt_mrdsl */
	rc = h_raw_connect(h, r);
	ck_assert_msg(rc == 0, "raw connect: %d", rc);
	rc = h_raw_login_initiator(h, r, p);
	ck_assert_msg(rc == 0, "raw login: %d (%s)", rc, h->err);
	rc = h_progress_until(h, t_ffp, 3000);
	ck_assert_msg(rc == 0 && h->t.ffp, "target not in full feature phase");
}

void bi_evil_target(struct h *h, struct h_raw *r, const struct h_params *p,
		    uint32_t slot_cap)
{
	int port = 0, lfd, rc;

	rc = h_init(h, slot_cap, 2);
	ck_assert_msg(rc == 0, "h_init: %s", h->err);
	lfd = h_raw_listen(&port);
	ck_assert_msg(lfd >= 0, "listen: %d", lfd);
	rc = h_connect_start(h, p, port, 5000);
	ck_assert_msg(rc == 0, "connect: %s", h->err);
	rc = h_raw_accept(h, lfd, r, 5000);
	h_raw_close(&(struct h_raw){ .fd = lfd });
	ck_assert_msg(rc == 0, "accept: %d", rc);
	rc = h_raw_login_target(h, r, p);
	ck_assert_msg(rc == 0, "raw target login: %d", rc);
	rc = h_progress_until(h, i_ffp, 3000);
	ck_assert_msg(rc == 0 && h->i.ffp, "initiator not in FFP: %s", h->err);
}

void bi_send_cmd(struct h *h, struct h_raw *r, bool write, uint32_t itt,
		 uint32_t len)
{
	uint8_t bhs[48];
	int rc;

	h_build_scsi_cmd(bhs, write, itt, r->cmdsn++, r->statsn + 1, len, 0,
			 true);
	rc = h_raw_send_pdu(h, r, bhs, NULL, 0, NULL, 0, 0);
	ck_assert_msg(rc == 0, "send command: %d", rc);
}

void bi_recv_op(struct h *h, struct h_raw *r, uint8_t op, uint8_t bhs[48])
{
	for (int i = 0; i < 64; i++) {
		uint32_t dlen;
		int rc = h_raw_recv_pdu(h, r, bhs, NULL, 0, &dlen, 3000);

		ck_assert_msg(rc == 0, "waiting for opcode 0x%02x: %d", op, rc);
		if (iscsi_bhs_opcode(bhs) == op)
			return;
	}
	ck_abort_msg("opcode 0x%02x never came", op);
}

void bi_data_bhs(uint8_t bhs[48], uint8_t op, uint32_t itt, uint32_t ttt,
		 uint32_t sn, uint32_t offset, bool final)
{
	memset(bhs, 0, 48);
	bhs[0] = op;
	bhs[1] = final ? ISCSI_FLAG_FINAL : 0;
	iscsi_put32(bhs + ISCSI_BHS_ITT, itt);
	iscsi_put32(bhs + ISCSI_BHS_TTT, ttt);
	iscsi_put32(bhs + ISCSI_BHS_DATASN, sn);
	iscsi_put32(bhs + ISCSI_BHS_BUF_OFFSET, offset);
}

static bool all_guard(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != H_GUARD_BYTE)
			return false;
	return true;
}

bool bi_disk_untouched(struct h *h, uint32_t off, uint32_t len)
{
	return all_guard(h_disk_slot(h, 0) + off, len);
}

bool bi_ibuf_untouched(struct h *h, uint32_t off, uint32_t len)
{
	return all_guard(h->slots[0].mem + H_GUARD + off, len);
}

static bool t_term(struct h *h)
{
	return h->t.terminate_count > 0;
}

static bool i_term(struct h *h)
{
	return h->i.terminate_count > 0;
}

static enum bi_outcome failed_checks(struct h *h, struct h_raw *r,
				     struct h_side *s, const char *what)
{
	int rc;

	ck_assert_msg(s->error[0], "%s: idm_conn_error() empty at notify",
		      what);
	/* libidm must have closed its socket */
	rc = h_raw_wait_closed(h, r, 2000);
	ck_assert_msg(rc == 0, "%s: socket still open after the notify", what);
	h_progress_for(h, 100);
	bi_assert_failed_once(s, what);
	ck_assert_msg(h_check_guards(h) == 0, "%s: %s", what, h->err);
	h_log("%s: connection failed once, reason: %s", what, s->error);
	return BI_FAILED;
}

void bi_assert_failed_once(const struct h_side *s, const char *what)
{
	ck_assert_msg(s->terminate_count == 1, "%s: %d terminate notifies",
		      what, s->terminate_count);
	ck_assert_msg(s->error[0], "%s: no error text", what);
	ck_assert_msg(s->cb_after_terminate == 0,
		      "%s: %d callbacks after terminate", what,
		      s->cb_after_terminate);
}

enum bi_outcome bi_target_outcome(struct h *h, struct h_raw *r,
				  bool allow_drop, const char *what)
{
	uint8_t bhs[48] = { 0 };
	int rc;

	(void)h_progress_until(h, t_term, 1500);
	if (h->t.terminate_count)
		return failed_checks(h, r, &h->t, what);
	ck_assert_msg(allow_drop, "%s: connection not failed within 1.5 s",
		      what);
	/* still usable? ping with a NOP-Out and wait for its NOP-In */
	bhs[0] = ISCSI_OP_NOP_OUT | ISCSI_OP_IMMEDIATE;
	bhs[1] = ISCSI_FLAG_FINAL;
	iscsi_put32(bhs + ISCSI_BHS_ITT, 0x7777);
	iscsi_put32(bhs + ISCSI_BHS_TTT, ISCSI_RESERVED_TAG);
	iscsi_put32(bhs + ISCSI_BHS_CMDSN, r->cmdsn);
	rc = h_raw_send_pdu(h, r, bhs, NULL, 0, NULL, 0, 0);
	ck_assert_msg(rc == 0, "%s: ping send: %d", what, rc);
	for (;;) {
		rc = h_raw_recv_pdu(h, r, bhs, NULL, 0, NULL, 2000);
		ck_assert_msg(rc == 0, "%s: no answer to the ping (%d), no terminate",
			      what, rc);
		if (iscsi_bhs_opcode(bhs) == ISCSI_OP_NOP_IN &&
		    iscsi_bhs_itt(bhs) == 0x7777)
			break;
	}
	ck_assert_msg(h->t.terminate_count == 0 && h->t.cb_after_terminate == 0,
		      "%s: inconsistent state", what);
	ck_assert_msg(h_check_guards(h) == 0, "%s: %s", what, h->err);
	h_log("%s: connection stayed up (PDU discarded%s), still answers a NOP-Out",
	      what, h->t.unexpected ? " or handed to the caller" : "");
	return BI_DROPPED;
}

enum bi_outcome bi_initiator_outcome(struct h *h, struct h_raw *r,
				     bool allow_drop, const char *what)
{
	uint8_t bhs[48] = { 0 };
	int before, rc;

	(void)h_progress_until(h, i_term, 1500);
	if (h->i.terminate_count)
		return failed_checks(h, r, &h->i, what);
	ck_assert_msg(allow_drop, "%s: connection not failed within 1.5 s",
		      what);
	/* an unsolicited NOP-In must still reach control_notify */
	before = h->i.control_count;
	bhs[0] = ISCSI_OP_NOP_IN;
	bhs[1] = ISCSI_FLAG_FINAL;
	iscsi_put32(bhs + ISCSI_BHS_ITT, ISCSI_RESERVED_TAG);
	iscsi_put32(bhs + ISCSI_BHS_TTT, ISCSI_RESERVED_TAG);
	iscsi_put32(bhs + ISCSI_BHS_CMDSN, r->statsn);
	iscsi_put32(bhs + ISCSI_BHS_EXP_STATSN, r->cmdsn);
	iscsi_put32(bhs + ISCSI_BHS_MAX_CMDSN, r->cmdsn + 64);
	rc = h_raw_send_pdu(h, r, bhs, NULL, 0, NULL, 0, 0);
	ck_assert_msg(rc == 0, "%s: NOP-In send: %d", what, rc);
	for (int i = 0; i < 100 && h->i.control_count == before &&
			!h->i.terminate_count; i++)
		(void)idm_ctx_progress(h->ctx, 20);
	ck_assert_msg(h->i.control_count > before &&
			      h->i.last_opcode == ISCSI_OP_NOP_IN,
		      "%s: not failed, but a NOP-In no longer gets through",
		      what);
	ck_assert_msg(h_check_guards(h) == 0, "%s: %s", what, h->err);
	h_log("%s: connection stayed up (PDU discarded), a NOP-In still gets through",
	      what);
	return BI_DROPPED;
}
