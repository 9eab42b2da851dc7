/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Keeping a session alive the way the kernel's initiator does:
 *
 * - NOP-Out pings (open-iscsi's noop_out_interval / noop_out_timeout):
 *   when nothing came from the target for the interval, ping it; no
 *   answer within the timeout means a dead peer, even when the transport
 *   itself has not noticed (a cut link with nothing to send).
 * - The per-command timeout, in every mode: a command that the target
 *   leaves unanswered while the connection is alive fails the session
 *   with "command timeout". While a ping is outstanding the ping decides
 *   first, so a dead link is reported as such and recovered.
 * - Session recovery (replacement_timeout): when the connection is lost,
 *   the commands in flight are kept, and the session logs in again with
 *   the same ISID and TSIH 0 (session reinstatement, RFC 7143 section
 *   6.3.5: the target ends the old session); then the commands are sent
 *   again. ErrorRecoveryLevel is 0, so nothing else can be recovered.
 *   A write that is sent twice writes the same data twice: harmless for
 *   the block commands this program issues.
 */
#include "initiator.h"

#include "ex_log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define NS 1000000000ull

/* Protocol violations and local errors: a new connection to the same
 * target would only meet them again. */
static bool recoverable(int err)
{
	switch (-err) {
	case EPROTO:
	case EBADMSG:
	case EMSGSIZE:
	case EILSEQ:
	case E2BIG:
	case EINVAL:
	case ENOMEM:
	case EINTR:
		return false;
	default:
		return true;
	}
}

/* What was in flight goes out again on the next connection. The tasks
 * stay with the old connection; idm_conn_destroy frees them. */
static void keep_for_retry(struct ini_session *s)
{
	for (uint32_t i = 0; i < s->ncmds; i++) {
		struct ini_cmd *c = &s->cmds[i];

		if (!c->busy || !c->submitted)
			continue;
		c->task = NULL;
		c->submitted = false;
		s->inflight--;
		c->retry = true;
		s->nretry++;
	}
}

void ini_session_conn_lost(struct ini_session *s, int err, const char *fmt,
			   ...)
{
	char why[sizeof(s->why)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (s->state != INI_S_FFP || s->discovery || s->reconnecting ||
	    s->o->replacement_timeout_s <= 0 || !recoverable(err) ||
	    ini_interrupted) {
		ini_session_set_failed(s, err, "%s", why);
		return;
	}
	snprintf(s->why, sizeof(s->why), "%s", why);
	ex_warn("session %d: %s; recovering (replacement timeout %d s)",
		s->index, why, s->o->replacement_timeout_s);
	s->state = INI_S_RECOVERING;
	s->lost_ns = ini_now_ns();
	if (s->conn && !s->conn_gone)
		idm_connection_terminate(s->conn);
	s->conn_gone = true;
	s->ping_itt = IDM_ISCSI_RESERVED_TAG;
	keep_for_retry(s);
	if (s->ctl.itt != IDM_ISCSI_RESERVED_TAG && !s->ctl.done) {
		s->ctl.result = err;
		s->ctl.done = true;
	}
}

bool ini_on_ping_rsp(struct ini_session *s, const uint8_t *bhs)
{
	if (s->ping_itt == IDM_ISCSI_RESERVED_TAG ||
	    idm_iscsi_bhs_itt(bhs) != s->ping_itt)
		return false;
	ex_dbg("session %d: NOP-In: %.1f ms", s->index,
	       (double)(ini_now_ns() - s->ping_sent_ns) / 1e6);
	s->ping_itt = IDM_ISCSI_RESERVED_TAG;
	return true;
}

static void send_ping(struct ini_session *s, uint64_t now)
{
	uint8_t bhs[IDM_BHS_LEN] = { 0 };
	int rc;

	/* RFC 7143 11.18: an immediate NOP-Out with a valid ITT asks for a
	 * NOP-In; it takes no CmdSN. */
	s->ping_itt = ini_session_next_itt(s);
	bhs[IDM_ISCSI_BHS_OPCODE] = IDM_ISCSI_OP_NOP_OUT | IDM_ISCSI_OP_IMMEDIATE;
	bhs[IDM_ISCSI_BHS_FLAGS] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, s->ping_itt);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_TTT, IDM_ISCSI_RESERVED_TAG);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, s->cmdsn);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, s->exp_statsn);
	s->ping_sent_ns = now;
	rc = idm_send_control(s->conn, bhs, NULL, 0, NULL, 0, NULL, 0);
	/* -ENOTCONN: failed already, its Connection_Terminate_Notify is
	 * on the way; -EAGAIN: the send queue is full, the target has not
	 * read for a while. Without an answer the ping times out anyway. */
	if (rc < 0 && rc != -ENOTCONN && rc != -EAGAIN)
		ini_session_set_failed(s, rc, "sending a NOP-Out: %s",
				       idm_strerror(rc));
}

/* A ping after the idle interval; -1 when the one in flight went
 * unanswered for the NOP-Out timeout and the connection is lost. */
static int ping_check(struct ini_session *s, uint64_t now)
{
	const struct ini_opts *o = s->o;

	if (s->ping_itt == IDM_ISCSI_RESERVED_TAG) {
		if (now - s->last_rx_ns >= (uint64_t)o->noop_interval_s * NS)
			send_ping(s, now);
		return 0;
	}
	if (now - s->ping_sent_ns < (uint64_t)o->noop_timeout_s * NS)
		return 0;
	ini_session_conn_lost(s, -ETIMEDOUT,
			      "connection lost: dead peer: NOP-Out ping not "
			      "answered within %d s",
			      o->noop_timeout_s);
	return -1;
}

/* The first command unanswered for the command timeout fails the
 * session. */
static void command_timeouts(struct ini_session *s, uint64_t now)
{
	const struct ini_opts *o = s->o;

	for (uint32_t i = 0; i < s->ncmds; i++) {
		const struct ini_cmd *c = &s->cmds[i];

		if (!c->busy || !c->submitted ||
		    now - c->t_sent_ns < (uint64_t)o->timeout_s * NS)
			continue;
		ini_session_set_failed(s, -ETIMEDOUT,
				       "command timeout: %s (ITT 0x%08x) not "
				       "answered within %d s",
				       ini_cdb_name(c->cdb[0]), c->itt,
				       o->timeout_s);
		return;
	}
}

static void liveness(struct ini_session *s)
{
	const struct ini_opts *o = s->o;
	uint64_t now = ini_now_ns();

	if (now - s->last_scan_ns < NS / 10)
		return;
	s->last_scan_ns = now;
	if (o->noop_interval_s > 0 && ping_check(s, now) < 0)
		return;
	/* A ping in flight decides first whether the link is dead. */
	if (s->ping_itt != IDM_ISCSI_RESERVED_TAG || s->state != INI_S_FFP)
		return;
	command_timeouts(s, now);
}

/* Send again what the lost connection had in flight. */
static void resubmit(struct ini_session *s)
{
	for (uint32_t i = 0; i < s->ncmds && s->state == INI_S_FFP; i++) {
		struct ini_cmd *c = &s->cmds[i];
		int rc;

		if (!c->busy || !c->retry)
			continue;
		rc = ini_cmd_submit(c);
		if (rc == -EAGAIN)
			return; /* CmdSN window: the next poll goes on */
		if (rc < 0) {
			c->retry = false;
			s->nretry--;
			c->result = rc;
			c->done = true;
			if (c->done_fn)
				c->done_fn(c);
		}
	}
}

/* Let the other sessions run for ms while this one waits. */
static void pause_ms(struct ini_session *s, int ms)
{
	uint64_t end = ini_now_ns() + (uint64_t)ms * 1000000ull;
	uint64_t now;

	while ((now = ini_now_ns()) < end && !ini_interrupted) {
		int step = (int)((end - now) / 1000000ull) + 1;

		idm_ctx_progress(s->ctx, step > 100 ? 100 : step);
	}
}

/* A clean slate for a new session on a new connection: same ISID, TSIH
 * 0, StatSN from its login. */
static void reset_for_reconnect(struct ini_session *s)
{
	if (s->conn) {
		idm_conn_destroy(s->conn);
		s->conn = NULL;
	}
	s->conn_gone = false;
	s->tsih = 0;
	s->login_have_statsn = false;
	s->exp_statsn = 0;
	s->fail = 0;
	s->why[0] = '\0';
	s->ping_itt = IDM_ISCSI_RESERVED_TAG;
	s->logout_sent = false;
	s->async_why[0] = '\0';
}

/* Short attempts, so the first one after the link is back is not stuck
 * behind one that started while it was down; never past the deadline. */
static int attempt_timeout(const struct ini_session *s, uint64_t deadline)
{
	uint64_t left = (deadline - ini_now_ns()) / NS;
	int t = s->o->timeout_s < 5 ? s->o->timeout_s : 5;

	if (left < (uint64_t)t)
		t = left ? (int)left : 1;
	return t;
}

static bool login_refused(const char *why)
{
	return !strncmp(why, "login refused", 13);
}

/* Reconnect and log in again until it works, the target refuses, or the
 * replacement timeout ends. The last attempt's failure goes to `last`. */
static bool reconnect(struct ini_session *s, const char *target, char *last,
		      size_t last_len, int *attempts)
{
	uint64_t deadline =
		s->lost_ns + (uint64_t)s->o->replacement_timeout_s * NS;

	while (!ini_interrupted && ini_now_ns() < deadline) {
		int timeout_s = attempt_timeout(s, deadline);

		if ((*attempts)++)
			pause_ms(s, 1000); /* at most one attempt a second */
		reset_for_reconnect(s);
		s->attempt_timeout_s = timeout_s;
		if (ini_session_connect(s) == 0 &&
		    ini_session_login(s, false, target) == 0 &&
		    s->state == INI_S_FFP)
			return true;
		snprintf(last, last_len, "%s", s->why);
		ex_info("session %d: reconnect attempt %d: %s", s->index,
			*attempts, last);
		if (login_refused(last))
			break; /* the target said no: asking again won't help */
	}
	return false;
}

static void recovery_failed(struct ini_session *s, const char *lost,
			    const char *last)
{
	s->state = INI_S_RECOVERING; /* so that set_failed reports */
	if (login_refused(last))
		ini_session_set_failed(s, -ECONNREFUSED,
				       "session recovery failed: %s (after %s)",
				       last, lost);
	else if (ini_interrupted)
		ini_session_set_failed(s, -EINTR,
				       "interrupted while recovering from %s",
				       lost);
	else
		ini_session_set_failed(
			s, -ETIMEDOUT,
			"session recovery failed: no new session within the "
			"replacement timeout (%d s) after %s; last attempt: %s",
			s->o->replacement_timeout_s, lost,
			last[0] ? last : "none");
}

static void recovered(struct ini_session *s, const char *lost, int attempts)
{
	s->recoveries++;
	s->last_rx_ns = ini_now_ns();
	snprintf(s->why, sizeof(s->why), "%s", lost);
	ex_warn("session %d: recovered in %.1f s (%d attempt%s): logged in "
		"again, session reinstated with TSIH 0x%04x; retrying %u "
		"command%s",
		s->index, (double)(ini_now_ns() - s->lost_ns) / 1e9, attempts,
		attempts == 1 ? "" : "s", s->tsih, s->nretry,
		s->nretry == 1 ? "" : "s");
}

static void recover(struct ini_session *s)
{
	char lost[sizeof(s->why)];
	char last[sizeof(s->why)] = "";
	char target[sizeof(s->target)];
	int attempts = 0;
	bool ok;

	snprintf(lost, sizeof(lost), "%s", s->why);
	memcpy(target, s->target, sizeof(target));
	s->reconnecting = true;
	ok = reconnect(s, target, last, sizeof(last), &attempts);
	s->reconnecting = false;
	s->attempt_timeout_s = 0;
	if (ok)
		recovered(s, lost, attempts);
	else
		recovery_failed(s, lost, last);
}

void ini_session_poll(struct ini_session *s)
{
	if (s->in_poll)
		return;
	s->in_poll = true;
	if (s->state == INI_S_RECOVERING)
		recover(s);
	if (s->state == INI_S_FFP) {
		if (s->nretry)
			resubmit(s);
		liveness(s);
	}
	s->in_poll = false;
}
