/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The non-SCSI requests and target PDUs of full feature phase: Text
 * (SendTargets, with C=1 continuation), Logout, NOP-In pings (answered)
 * and NOP-In responses, Asynchronous Messages and Reject. One such request
 * is outstanding at a time (struct ini_ctl).
 */
#include "initiator.h"

#include "ex_log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void ctl_start(struct ini_session *s, uint8_t expect)
{
	s->ctl.itt = ini_session_next_itt(s);
	s->ctl.expect = expect;
	s->ctl.done = false;
	s->ctl.result = 0;
}

static bool ctl_match(struct ini_session *s, const uint8_t *bhs)
{
	return s->ctl.itt != IDM_ISCSI_RESERVED_TAG && !s->ctl.done &&
	       idm_iscsi_bhs_itt(bhs) == s->ctl.itt &&
	       idm_iscsi_bhs_opcode(bhs) == s->ctl.expect;
}

static void ctl_finish(struct ini_session *s, const uint8_t *bhs, int result)
{
	memcpy(s->ctl.rsp, bhs, IDM_BHS_LEN);
	s->ctl.result = result;
	s->ctl.done = true;
}

/* ------------------------------------------------------------------ */
/* PDUs from the target in full feature phase                          */
/* ------------------------------------------------------------------ */

void ini_on_nop_in(struct ini_session *s, const uint8_t *bhs,
		   const uint8_t *data, size_t len)
{
	uint32_t itt = idm_iscsi_bhs_itt(bhs);
	uint32_t ttt = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT);

	/* StatSN of an unsolicited NOP-In is not advanced (RFC 7143 11.19). */
	ini_session_update_sn(s, bhs, itt != IDM_ISCSI_RESERVED_TAG);
	if (itt != IDM_ISCSI_RESERVED_TAG && ini_on_ping_rsp(s, bhs))
		return;
	if (itt != IDM_ISCSI_RESERVED_TAG) {
		if (ctl_match(s, bhs))
			ctl_finish(s, bhs, 0);
		else
			ex_warn("session %d: NOP-In for unknown ITT 0x%08x",
				s->index, itt);
	}
	if (ttt != IDM_ISCSI_RESERVED_TAG) {
		/* A ping from the target: answer with the same TTT and data,
		 * as an immediate NOP-Out that takes no CmdSN. */
		uint8_t out[IDM_BHS_LEN] = { 0 };

		out[0] = IDM_ISCSI_OP_NOP_OUT | IDM_ISCSI_OP_IMMEDIATE;
		out[1] = IDM_ISCSI_FLAG_FINAL;
		memcpy(out + IDM_ISCSI_BHS_LUN, bhs + IDM_ISCSI_BHS_LUN, 8);
		idm_iscsi_put32(out + IDM_ISCSI_BHS_ITT, IDM_ISCSI_RESERVED_TAG);
		idm_iscsi_put32(out + IDM_ISCSI_BHS_TTT, ttt);
		idm_iscsi_put32(out + IDM_ISCSI_BHS_CMDSN, s->cmdsn);
		idm_iscsi_put32(out + IDM_ISCSI_BHS_EXP_STATSN, s->exp_statsn);
		if (len > s->params.tgt_dsl)
			len = s->params.tgt_dsl;
		ex_dbg("session %d: answering NOP-In TTT 0x%08x", s->index,
		       ttt);
		ini_send_pdu(s, out, len ? data : NULL, len, NULL);
	}
}

/* A final Text Request of the session's control task: the first one
 * (ttt IDM_ISCSI_RESERVED_TAG) or a continuation. Not immediate, as
 * open-iscsi and libiscsi send it: every target orders it by CmdSN. */
static void text_req_bhs(struct ini_session *s, uint32_t ttt,
			 uint8_t bhs[IDM_BHS_LEN])
{
	memset(bhs, 0, IDM_BHS_LEN);
	bhs[IDM_ISCSI_BHS_OPCODE] = IDM_ISCSI_OP_TEXT_REQ;
	bhs[IDM_ISCSI_BHS_FLAGS] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, s->ctl.itt);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_TTT, ttt);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, s->cmdsn++);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, s->exp_statsn);
}

/* More to come: an empty Text Request with the target's TTT asks for it
 * (RFC 7143 section 11.10.4). */
static void text_continue(struct ini_session *s, uint32_t ttt)
{
	uint8_t req[IDM_BHS_LEN];

	text_req_bhs(s, ttt, req);
	ini_send_pdu(s, req, NULL, 0, NULL);
}

void ini_on_text_rsp(struct ini_session *s, const uint8_t *bhs,
		     const uint8_t *data, size_t len)
{
	uint32_t ttt = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT);
	bool final = bhs[IDM_ISCSI_BHS_FLAGS] & IDM_ISCSI_FLAG_FINAL;
	bool cont = bhs[IDM_ISCSI_BHS_FLAGS] & IDM_ISCSI_TEXT_CONTINUE;

	ini_session_update_sn(s, bhs, true);
	if (!ctl_match(s, bhs)) {
		ini_session_set_failed(s, -EPROTO,
				       "Text Response for unknown ITT 0x%08x",
				       idm_iscsi_bhs_itt(bhs));
		return;
	}
	if (final && cont) {
		ini_session_set_failed(s, -EPROTO,
				       "Text Response with F and C set");
		return;
	}
	if (ini_text_append(s, data, len) < 0) {
		ini_session_set_failed(s, -E2BIG, "Text Response over %d bytes",
				       INI_TEXT_MAX);
		return;
	}
	if (final) {
		ctl_finish(s, bhs, 0);
		return;
	}
	if (ttt == IDM_ISCSI_RESERVED_TAG) {
		ini_session_set_failed(s, -EPROTO,
				       "Text Response without F needs a TTT");
		return;
	}
	text_continue(s, ttt);
}

void ini_on_logout_rsp(struct ini_session *s, const uint8_t *bhs)
{
	ini_session_update_sn(s, bhs, true);
	if (!ctl_match(s, bhs)) {
		ini_session_set_failed(s, -EPROTO,
				       "unexpected Logout Response");
		return;
	}
	ctl_finish(s, bhs, bhs[IDM_ISCSI_BHS_RESPONSE] == 0 ? 0 : -EIO);
	s->state = INI_S_LOGGED_OUT;
	/* The session is over: close our end now rather than wait for the
	 * target's close to be reported as a lost connection. */
	if (!s->conn_gone) {
		idm_connection_terminate(s->conn);
		s->conn_gone = true;
	}
}

void ini_on_async(struct ini_session *s, const uint8_t *bhs)
{
	uint8_t event = bhs[IDM_ISCSI_ASYNC_EVENT];

	ini_session_update_sn(s, bhs, true);
	switch (event) {
	case IDM_ISCSI_ASYNC_SCSI_EVENT:
		ex_info("session %d: SCSI asynchronous event", s->index);
		break;
	case IDM_ISCSI_ASYNC_LOGOUT_REQUEST:
		snprintf(s->async_why, sizeof(s->async_why),
			 "target requested a logout within %u s "
			 "(Asynchronous Message)",
			 idm_iscsi_get16(bhs + IDM_ISCSI_ASYNC_PARAM3));
		/* Leave at once and, with recovery on, come back: the
		 * new login reinstates the session and the commands in
		 * flight are sent again (the kernel's initiator also just
		 * drops the connection here). */
		ini_session_conn_lost(s, -ECONNRESET, "connection lost: %s",
				      s->async_why);
		break;
	case IDM_ISCSI_ASYNC_DROP_CONNECTION:
	case IDM_ISCSI_ASYNC_DROP_ALL_CONNECTIONS:
		snprintf(s->async_why, sizeof(s->async_why),
			 "target dropped the %s (Asynchronous Message event "
			 "%u)",
			 event == IDM_ISCSI_ASYNC_DROP_CONNECTION ? "connection" : "session",
			 event);
		ex_warn("session %d: %s", s->index, s->async_why);
		break;
	default:
		ex_info("session %d: asynchronous event %u ignored", s->index,
			event);
		break;
	}
}

void ini_on_reject(struct ini_session *s, const uint8_t *bhs,
		   const uint8_t *data, size_t len)
{
	uint32_t itt;

	ini_session_update_sn(s, bhs, true);
	if (len < IDM_BHS_LEN) {
		ini_session_set_failed(
			s, -EPROTO,
			"Reject (reason 0x%02x) without the rejected header",
			bhs[IDM_ISCSI_BHS_RESPONSE]);
		return;
	}
	itt = idm_iscsi_bhs_itt(data);
	ex_warn("session %d: target rejected opcode 0x%02x ITT 0x%08x, reason "
		"0x%02x",
		s->index, idm_iscsi_bhs_opcode(data), itt,
		bhs[IDM_ISCSI_BHS_RESPONSE]);
	if (s->ctl.itt == itt && !s->ctl.done) {
		ctl_finish(s, bhs, -EPROTO);
		return;
	}
	/* A rejected SCSI Command never gets a response (RFC 7143 section
	 * 11.17.1): fail it alone, the session goes on. A rejected PDU of
	 * a command in flight (a Data-Out, say) leaves that command without
	 * a way to finish at ErrorRecoveryLevel 0: fail the session. */
	if (idm_iscsi_bhs_opcode(data) == IDM_ISCSI_OP_SCSI_CMD &&
	    ini_scsi_rejected(s, itt))
		return;
	if (itt == IDM_ISCSI_RESERVED_TAG)
		return; /* the rejected PDU names no task: nothing to fail */
	ini_session_set_failed(s, -EPROTO, "command rejected, reason 0x%02x",
			       bhs[IDM_ISCSI_BHS_RESPONSE]);
}

int ini_session_send_targets(struct ini_session *s, char **text, size_t *len)
{
	static const char req_text[] = "SendTargets=All";
	uint8_t bhs[IDM_BHS_LEN];
	int rc;

	s->text_len = 0;
	s->text_overflow = false;
	ctl_start(s, IDM_ISCSI_OP_TEXT_RSP);
	text_req_bhs(s, IDM_ISCSI_RESERVED_TAG, bhs);
	rc = ini_send_pdu(s, bhs, req_text, sizeof(req_text), NULL);
	if (rc < 0)
		return rc;
	rc = ini_session_wait(s, &s->ctl.done, s->o->timeout_s * 1000);
	if (rc < 0)
		return rc;
	if (s->ctl.result < 0)
		return s->ctl.result;
	*text = s->text;
	*len = s->text_len;
	return 0;
}

#define LOGOUT_CLOSE_SESSION 0 /* reason code (RFC 7143 11.14.1) */

int ini_session_logout(struct ini_session *s)
{
	uint8_t bhs[IDM_BHS_LEN] = { 0 };
	int rc;

	if (s->state != INI_S_FFP)
		return s->state == INI_S_FAILED ? s->fail : -ENOTCONN;
	ctl_start(s, IDM_ISCSI_OP_LOGOUT_RSP);
	s->logout_sent = true;
	bhs[IDM_ISCSI_BHS_OPCODE] =
		IDM_ISCSI_OP_LOGOUT_REQ | IDM_ISCSI_OP_IMMEDIATE;
	bhs[IDM_ISCSI_BHS_FLAGS] = IDM_ISCSI_FLAG_FINAL | LOGOUT_CLOSE_SESSION;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, s->ctl.itt);
	idm_iscsi_put16(bhs + IDM_ISCSI_LOGIN_CID, s->cid);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, s->cmdsn);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, s->exp_statsn);
	rc = ini_send_pdu(s, bhs, NULL, 0, NULL);
	if (rc < 0)
		return rc;
	rc = ini_session_wait(s, &s->ctl.done, s->o->timeout_s * 1000);
	if (rc < 0)
		return rc;
	if (s->ctl.result < 0)
		ex_warn("session %d: Logout Response 0x%02x", s->index,
			s->ctl.rsp[IDM_ISCSI_BHS_RESPONSE]);
	else
		ex_info("session %d: logged out (Logout Response)", s->index);
	return s->ctl.result;
}
