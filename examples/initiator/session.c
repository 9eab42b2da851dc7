/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One iSCSI session of one connection: connecting, the callbacks libidm
 * raises and their dispatch, CmdSN/StatSN bookkeeping, and the wait loops.
 * Login is in login.c, SCSI commands in scsi.c, the other requests of full
 * feature phase (Text, NOP, Logout) in requests.c.
 */
#include "initiator.h"

#include "ex_log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

char ini_fail_cause[640];

uint64_t ini_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ini_session_set_failed(struct ini_session *s, int err, const char *fmt,
			    ...)
{
	va_list ap;

	if (s->state == INI_S_FAILED)
		return;
	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
	/* A clean Logout is not a failure, but what is still in flight is.
	 * A failed reconnect attempt is not final: recovery.c goes on. */
	if (s->reconnecting) {
		ex_info("session %d: %s", s->index, s->why);
	} else if (s->state != INI_S_LOGGED_OUT) {
		ex_err("session %d: %s", s->index, s->why);
		if (!ini_fail_cause[0])
			snprintf(ini_fail_cause, sizeof(ini_fail_cause), "%s",
				 s->why);
	}
	s->fail = err < 0 ? err : -EIO;
	s->state = INI_S_FAILED;
	if (s->conn && !s->conn_gone)
		idm_connection_terminate(s->conn);
	if (!s->reconnecting) /* keep what waits for the reconnect */
		ini_cmd_fail_all(s, s->fail);
	if (s->ctl.itt != IDM_ISCSI_RESERVED_TAG && !s->ctl.done) {
		s->ctl.result = s->fail;
		s->ctl.done = true;
	}
}

uint32_t ini_session_next_itt(struct ini_session *s)
{
	/* Bit 31 set: never collides with SCSI ITTs (scsi.c keeps it clear),
	 * and never the reserved tag. */
	uint32_t itt = INI_ITT_CONTROL | (s->itt_next++ & 0x7ffffffeu);
	return itt;
}

/*
 * RFC 7143 section 4.2.2.1: ExpCmdSN and MaxCmdSN only move forward, and a
 * MaxCmdSN below ExpCmdSN - 1 makes both invalid. StatSN is checked
 * against what we expect, only on PDUs that carry a status.
 */
void ini_session_update_sn(struct ini_session *s, const uint8_t *bhs,
			   bool has_statsn)
{
	uint32_t exp = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_EXP_STATSN);
	uint32_t max = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_MAX_CMDSN);

	if (has_statsn) {
		uint32_t statsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_CMDSN);

		if (idm_iscsi_sn_le(s->exp_statsn, statsn))
			s->exp_statsn = statsn + 1;
	}
	if (idm_iscsi_sn_lt(max, exp - 1))
		return;
	if (idm_iscsi_sn_lt(s->exp_cmdsn, exp))
		s->exp_cmdsn = exp;
	if (idm_iscsi_sn_lt(s->max_cmdsn, max))
		s->max_cmdsn = max;
}

int ini_send_pdu(struct ini_session *s, const uint8_t *bhs, const void *data,
		 size_t len, idm_task *task)
{
	int rc;

	if (s->state == INI_S_FAILED)
		return s->fail;
	rc = idm_send_control(s->conn, bhs, NULL, 0, data, len, task, 0);
	if (rc < 0)
		ini_session_set_failed(s, rc, "sending opcode 0x%02x: %s",
				       idm_iscsi_bhs_opcode(bhs), idm_strerror(rc));
	return rc;
}

int ini_text_append(struct ini_session *s, const uint8_t *data, size_t len)
{
	if (len > INI_TEXT_MAX - s->text_len) {
		s->text_overflow = true;
		return -E2BIG;
	}
	if (len)
		memcpy(s->text + s->text_len, data, len);
	s->text_len += len;
	s->text[s->text_len] = '\0';
	return 0;
}

/* ------------------------------------------------------------------ */
/* Callbacks                                                           */
/* ------------------------------------------------------------------ */

/* A PDU of full feature phase, to its handler. */
static void on_ffp_pdu(struct ini_session *s, idm_pdu *pdu, uint8_t op,
		       const uint8_t *bhs, const uint8_t *data, size_t len)
{
	switch (op) {
	case IDM_ISCSI_OP_SCSI_RSP:
	case IDM_ISCSI_OP_DATA_IN:
		ini_scsi_rsp(s, pdu, bhs);
		break;
	case IDM_ISCSI_OP_NOP_IN:
		ini_on_nop_in(s, bhs, data, len);
		break;
	case IDM_ISCSI_OP_TEXT_RSP:
		ini_on_text_rsp(s, bhs, data, len);
		break;
	case IDM_ISCSI_OP_LOGOUT_RSP:
		ini_on_logout_rsp(s, bhs);
		break;
	case IDM_ISCSI_OP_ASYNC_MSG:
		ini_on_async(s, bhs);
		break;
	case IDM_ISCSI_OP_REJECT:
		ini_on_reject(s, bhs, data, len);
		break;
	case IDM_ISCSI_OP_TASK_MGMT_RSP:
		ini_session_update_sn(s, bhs, true);
		ex_warn("session %d: unexpected Task Management Response",
			s->index);
		break;
	default:
		ini_session_set_failed(s, -EPROTO, "unexpected opcode 0x%02x",
				       op);
		break;
	}
}

/* Control_Notify: route each PDU; in login only Login Responses are legal. */
static void on_control(idm_conn *conn, idm_pdu *pdu, void *arg)
{
	struct ini_session *s = arg;
	const uint8_t *bhs = idm_pdu_bhs(pdu);
	const uint8_t *data;
	size_t len = 0;
	uint8_t op = idm_pdu_opcode(pdu);

	(void)conn;
	if (s->state == INI_S_FAILED)
		return;
	s->last_rx_ns = ini_now_ns(); /* the target is alive */
	data = idm_pdu_data(pdu, &len);
	if (!data)
		len = 0;
	if (s->state != INI_S_LOGIN)
		on_ffp_pdu(s, pdu, op, bhs, data, len);
	else if (op == IDM_ISCSI_OP_LOGIN_RSP)
		ini_login_rsp(s, bhs, data, len);
	else
		ini_session_set_failed(s, -EPROTO, "opcode 0x%02x during login",
				       op);
}

static void on_connected(idm_conn *conn, int status, void *arg)
{
	struct ini_session *s = arg;

	if (status < 0) {
		s->state = INI_S_FAILED;
		s->fail = status;
		snprintf(s->why, sizeof(s->why),
			 "connect to %s:%s failed: %s (%s)", s->o->portal.host,
			 s->o->portal.port, idm_strerror(status),
			 idm_conn_error(conn));
		return;
	}
	ex_info("session %d: connected %s -> %s over %s", s->index,
		idm_conn_local_name(conn), idm_conn_peer_name(conn),
		idm_conn_provider(conn));
	s->state = INI_S_LOGIN;
}

/* Name the cause of a lost connection the way an administrator looks
 * for it. */
static const char *loss_cause(const struct ini_session *s, int reason,
			      const char *err)
{
	if (s->async_why[0])
		return s->async_why;
	if (strstr(err, "retry counter exceeded") || strstr(err, "RETRY_EXC"))
		return "transport retry exhausted";
	if (reason == -ETIMEDOUT && strstr(err, "stopped reading"))
		return "target stopped reading"; /* alive, not dead */
	if (reason == -ETIMEDOUT)
		return "dead peer (transport timeout)";
	if (reason == -ECONNRESET)
		return "connection reset";
	return idm_strerror(reason);
}

static void on_terminate(idm_conn *conn, int reason, void *arg)
{
	struct ini_session *s = arg;
	const char *err = idm_conn_error(conn);

	s->conn_gone = true;
	if (s->state == INI_S_LOGGED_OUT || s->state == INI_S_FAILED)
		return;
	if (s->logout_sent && s->ctl.expect == IDM_ISCSI_OP_LOGOUT_RSP) {
		/* The target may close as soon as it has sent the Logout
		 * Response, and an RDMA disconnect can overtake that
		 * response: with our Logout outstanding this is its end. */
		ex_info("session %d: logged out (the target closed the "
			"connection)",
			s->index);
		if (!s->ctl.done) {
			s->ctl.result = 0;
			s->ctl.done = true;
		}
		s->state = INI_S_LOGGED_OUT;
		return;
	}
	ini_session_conn_lost(s, reason, "connection lost: %s (%s)",
			      loss_cause(s, reason, err), err);
}

static const struct idm_conn_cbs ini_cbs = {
	.size = sizeof(struct idm_conn_cbs),
	.connected = on_connected,
	.control_notify = on_control,
	.connection_terminate_notify = on_terminate,
};

/* ------------------------------------------------------------------ */
/* Life cycle and the blocking helpers the programs use                */
/* ------------------------------------------------------------------ */

int ini_session_init(struct ini_session *s, const struct ini_opts *o,
		     idm_ctx *ctx, int index, uint32_t ncmds)
{
	uint64_t r = ini_now_ns() ^ ((uint64_t)getpid() << 20);
	int rc;

	memset(s, 0, sizeof(*s));
	s->o = o;
	s->ctx = ctx;
	s->index = index;
	s->ctl.itt = IDM_ISCSI_RESERVED_TAG;
	s->ping_itt = IDM_ISCSI_RESERVED_TAG;
	/* ISID type 0x80 "random" (RFC 7143 section 11.12.5): a fresh one
	 * per session so parallel sessions never collide; or the caller's
	 * (--isid), so that another run can reinstate these sessions. */
	s->isid[0] = 0x80;
	s->isid[1] = (uint8_t)(r >> 8);
	s->isid[2] = (uint8_t)(r >> 16);
	s->isid[3] = (uint8_t)(r >> 24);
	s->isid[4] = (uint8_t)(r >> 32);
	s->isid[5] = 0;
	if (o->isid_set)
		memcpy(s->isid, o->isid, sizeof(s->isid));
	s->isid[5] = (uint8_t)(s->isid[5] + index);
	s->cmdsn = 1;
	s->itt_next = 1;
	s->text = malloc(INI_TEXT_MAX + 1);
	s->cmds = calloc(ncmds, sizeof(*s->cmds));
	if (!s->text || !s->cmds)
		return -ENOMEM;
	s->ncmds = ncmds;
	for (uint32_t i = ncmds; i-- > 0;) {
		s->cmds[i].s = s;
		s->cmds[i].idx = (uint16_t)i;
		s->cmds[i].next_free = s->free_cmds;
		s->free_cmds = &s->cmds[i];
	}
	rc = idm_buf_alloc(ctx, INI_CTL_BUF, &s->ctl_buf);
	if (rc < 0)
		return rc;
	return 0;
}

void ini_session_fini(struct ini_session *s)
{
	if (s->conn) {
		/* idm_conn_destroy frees the tasks still attached. */
		idm_conn_destroy(s->conn);
		s->conn = NULL;
	}
	if (s->ctl_buf)
		idm_buf_destroy(s->ctl_buf);
	free(s->cmds);
	free(s->text);
	s->ctl_buf = NULL;
	s->cmds = NULL;
	s->text = NULL;
}

int ini_session_wait(struct ini_session *s, const bool *flag, int timeout_ms)
{
	uint64_t deadline = ini_now_ns() + (uint64_t)timeout_ms * 1000000ull;

	while (!*flag) {
		uint64_t now = ini_now_ns();
		int rc, step;

		if (s->state == INI_S_FAILED)
			return s->fail;
		if (now >= deadline)
			return -ETIMEDOUT;
		if (ini_interrupted) {
			ini_session_set_failed(s, -EINTR, "interrupted");
			return -EINTR;
		}
		ini_session_poll(s);
		if (*flag)
			break;
		if (s->state == INI_S_FAILED)
			return s->fail;
		step = (int)((deadline - now) / 1000000ull) + 1;
		rc = idm_ctx_progress(s->ctx, step > 100 ? 100 : step);
		if (rc < 0 && rc != -EINTR) {
			ini_session_set_failed(s, rc, "progress: %s",
					       idm_strerror(rc));
			return rc;
		}
	}
	return 0;
}

/* Submit c, waiting while the CmdSN window is closed, and wait for its
 * completion. ini_session_poll enforces the command timeout and
 * recovery; the bound here only catches a session that neither answers
 * nor fails. */
int ini_scsi_sync(struct ini_session *s, struct ini_cmd *c)
{
	const struct ini_opts *o = s->o;
	uint64_t deadline =
		ini_now_ns() + (uint64_t)o->timeout_s * 1000000000ull;
	int bound_s = o->timeout_s + o->noop_interval_s + o->noop_timeout_s +
		      o->replacement_timeout_s + 5;
	int rc;

	while ((rc = ini_cmd_submit(c)) == -EAGAIN) {
		/* CmdSN window closed: let responses open it */
		if (ini_now_ns() > deadline) {
			ini_session_set_failed(
				s, -ETIMEDOUT,
				"command timeout: %s waited %d s for the CmdSN "
				"window",
				ini_cdb_name(c->cdb[0]), o->timeout_s);
			return -ETIMEDOUT;
		}
		idm_ctx_progress(s->ctx, 10);
		ini_session_poll(s);
	}
	if (rc < 0)
		return rc;
	rc = ini_session_wait(s, &c->done, bound_s * 1000);
	if (rc == -ETIMEDOUT && !c->done) {
		ini_session_set_failed(s, rc,
				       "command timeout: %s not answered in "
				       "%d s",
				       ini_cdb_name(c->cdb[0]), bound_s);
		return rc;
	}
	if (rc < 0)
		return rc;
	return c->result;
}

static bool state_not_connecting(struct ini_session *s)
{
	return s->state != INI_S_CONNECTING;
}

/* idm_conn_connect refused at once. idm_last_error() says why: the
 * resolver's message, or why the provider cannot be used here; more than
 * the errno (an unresolvable name comes back as -EHOSTUNREACH). */
static int connect_failed(struct ini_session *s, int rc)
{
	s->conn = NULL;
	s->state = INI_S_FAILED;
	s->fail = rc;
	snprintf(s->why, sizeof(s->why), "connect to %s:%s (%s): %s",
		 s->o->portal.host, s->o->portal.port, s->o->provider,
		 *idm_last_error() ? idm_last_error() : idm_strerror(rc));
	/* the last line names this, not just the errno */
	if (!s->reconnecting && !ini_fail_cause[0])
		snprintf(ini_fail_cause, sizeof(ini_fail_cause), "%s", s->why);
	return rc;
}

int ini_session_connect(struct ini_session *s)
{
	int tmo_s = s->attempt_timeout_s ? s->attempt_timeout_s
					 : s->o->timeout_s;
	struct idm_conn_attr attr = {
		.size = sizeof(attr),
		.provider = s->o->provider,
		.cbs = &ini_cbs,
		.arg = s,
		.connect_timeout_ms = tmo_s * 1000,
	};
	uint64_t deadline;
	int rc;

	s->state = INI_S_CONNECTING;
	rc = idm_conn_connect(s->ctx, s->o->portal.host, s->o->portal.port,
			      &attr, &s->conn);
	if (rc < 0)
		return connect_failed(s, rc);
	/* The connected callback ends the wait; bound it ourselves too in
	 * case a provider never reports. */
	deadline =
		ini_now_ns() + (uint64_t)(tmo_s + 1) * 1000000000ull;
	while (!state_not_connecting(s) && ini_now_ns() < deadline) {
		rc = idm_ctx_progress(s->ctx, 100);
		if (rc < 0 && rc != -EINTR)
			return rc;
	}
	if (s->state == INI_S_CONNECTING) {
		s->state = INI_S_FAILED;
		s->fail = -ETIMEDOUT;
		snprintf(s->why, sizeof(s->why), "connect timed out");
	}
	return s->state == INI_S_LOGIN ? 0 : s->fail;
}

int ini_session_login(struct ini_session *s, bool discovery, const char *target)
{
	int rc;

	s->discovery = discovery;
	snprintf(s->target, sizeof(s->target), "%s", target ? target : "");
	rc = ini_login_start(s);
	if (rc < 0)
		return rc;
	rc = ini_session_wait(s, &s->login_done,
			      (s->attempt_timeout_s ? s->attempt_timeout_s
						    : s->o->timeout_s) *
				      1000);
	if (rc == -ETIMEDOUT)
		ini_session_set_failed(s, rc, "login timed out");
	return rc < 0 ? rc : 0;
}
