/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sessions in full feature phase: the session table, CmdSN ordering
 * (RFC 7143 section 4.2.2.1: commands run in CmdSN order, immediate ones
 * at once, anything outside [ExpCmdSN, MaxCmdSN] silently dropped), and
 * the small requests: NOP-Out, Logout, Reject.
 *
 * The registry: every session of every loop, for the logins (a TSIH or an
 * ISID to find, a TSIH to allocate). One mutex guards it and the fields
 * another loop's login reads (conn, its cid, p, zombie); it is taken at
 * login and session end only. Everything else of a session is used on
 * its owner loop (s->loop) only.
 */
#include "target.h"
#include "access.h"
#include "ex_log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct session *registry;
static uint16_t next_tsih;

void session_lock(void)
{
	pthread_mutex_lock(&reg_lock);
}

void session_unlock(void)
{
	pthread_mutex_unlock(&reg_lock);
}

/* session_lock() held */
struct session *session_find(const char *iname, const uint8_t *isid)
{
	for (struct session *s = registry; s; s = s->rnext)
		if (!s->zombie && !memcmp(s->isid, isid, 6) && !strcmp(s->iname, iname))
			return s;
	return NULL;
}

/* session_lock() held */
struct session *session_find_tsih(uint16_t tsih)
{
	for (struct session *s = registry; s; s = s->rnext)
		if (!s->zombie && s->tsih == tsih)
			return s;
	return NULL;
}

static bool tsih_in_use(uint16_t tsih)
{
	for (struct session *s = registry; s; s = s->rnext)
		if (s->tsih == tsih)
			return true;
	return false;
}

/* session_lock() held: give s a TSIH no session uses, make the running
 * loop its owner. Returns the TSIH, 0 when all 65535 are taken. */
uint16_t session_register(struct session *s)
{
	for (unsigned n = 0; n < 65535; n++) {
		if (++next_tsih == 0)
			next_tsih = 1;
		if (!tsih_in_use(next_tsih)) {
			s->tsih = next_tsih;
			s->loop = g_loop;
			s->rnext = registry;
			registry = s;
			s->next = g_loop->sessions;
			g_loop->sessions = s;
			return s->tsih;
		}
	}
	return 0;
}

void session_destroy(struct session *s)
{
	for (struct session **pp = &g_loop->sessions; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	session_lock();
	for (struct session **pp = &registry; *pp; pp = &(*pp)->rnext)
		if (*pp == s) {
			*pp = s->rnext;
			break;
		}
	if (s->conn)
		s->conn->sess = NULL;
	s->conn = NULL;
	session_unlock();
	while (s->queue) {
		struct ttask *t = s->queue;
		s->queue = t->next;
		pbuf_put(t->buf);
		ttask_put(t);
	}
	/* losing the I_T nexus releases its reservations (SPC-2 5.5.1) */
	for (int i = 0; i < g_tgt.nluns; i++)
	{
		const void *mine = s;

		__atomic_compare_exchange_n(&g_tgt.luns[i]->reserved_by, &mine, NULL, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	}
	ex_info("session tsih %u of %s ended", s->tsih, s->iname);
	free(s);
}

/* Forget what connection c left in the session: its queued commands (SCSI
 * ones go back with c's task list when c is released) and a TMF it waits
 * for. Used when a connection is reinstated. */
void session_drop_conn(struct session *s, struct tconn *c)
{
	struct ttask **pp = &s->queue;

	while (*pp) {
		struct ttask *t = *pp;
		if (t->c != c) {
			pp = &t->next;
			continue;
		}
		*pp = t->next;
		if (t->kind == TK_SCSI)
			t->state = TS_DONE; /* freed by conn_release() */
		else
			ttask_put(t);
	}
	if (s->tmf.active && s->tmf.c == c)
		s->tmf.active = false;
}

/* The connection is gone (after idm_connection_terminate or its notify). */
void session_detach(struct tconn *c)
{
	struct session *s = c->sess;

	c->sess = NULL;
	session_lock();
	s->conn = NULL;
	session_unlock();
	if (s->tmf.active && s->tmf.c == c)
		s->tmf.active = false;
	session_destroy(s);
}

static void nop_out(struct ttask *t)
{
	uint8_t r[IDM_ISCSI_BHS_LEN] = { 0 };
	struct tconn *c = t->c;
	/* RFC 7143 11.18 (Ping Data): the reflected data is limited to the
	 * initiator's MaxRecvDataSegmentLength; the initiator may send more
	 * (up to ours), and libidm refuses to send it (-EMSGSIZE), which
	 * used to close the connection */
	uint32_t len = t->data_len < c->sess->p.ini_dsl ? t->data_len : c->sess->p.ini_dsl;

	r[0] = IDM_ISCSI_OP_NOP_IN;
	r[1] = IDM_ISCSI_FLAG_FINAL;
	memcpy(r + IDM_ISCSI_BHS_LUN, t->bhs + IDM_ISCSI_BHS_LUN, 8);
	idm_iscsi_put32(r + IDM_ISCSI_BHS_ITT, t->itt);
	idm_iscsi_put32(r + IDM_ISCSI_BHS_TTT, IDM_ISCSI_RESERVED_TAG);
	conn_fill_sn(c, r, true);
	conn_send(c, r, t->data, len);           /* echo the ping data */
	task_done(t);
}

static void logout(struct ttask *t)
{
	uint8_t r[IDM_ISCSI_BHS_LEN] = { 0 };
	struct tconn *c = t->c;
	uint8_t reason = t->bhs[1] & ~IDM_ISCSI_FLAG_FINAL; /* reason code */

	r[0] = IDM_ISCSI_OP_LOGOUT_RSP;
	r[1] = IDM_ISCSI_FLAG_FINAL;
	/* 0: close session, 1: close connection; 2 (recovery) needs ERL 2 */
	r[2] = reason <= 1 ? 0 : 2;
	idm_iscsi_put32(r + IDM_ISCSI_BHS_ITT, t->itt);
	conn_fill_sn(c, r, true);
	ex_info("%s: logout (reason %u)", idm_conn_peer_name(c->ic), reason);
	task_done(t);
	if (conn_send(c, r, NULL, 0) == 0 && reason <= 1)
		conn_close_graceful(c, "logout");
}

/* Run one request whose turn has come (or an immediate one). */
static void process(struct ttask *t)
{
	struct session *s = t->c->sess;

	if (t->aborted) { /* aborted while it waited for its CmdSN */
		task_done(t);
		return;
	}
	switch (t->kind) {
	case TK_SCSI:
		if (s->tmf.active && tmf_affects(s, t)) {
			task_done(t);
			return;
		}
		scsi_io_start(t);
		break;
	case TK_NOP:
		nop_out(t);
		break;
	case TK_TEXT:
		text_request(t);
		break;
	case TK_LOGOUT:
		logout(t);
		break;
	case TK_TMF:
		tmf_request(t);
		break;
	}
}

static void admit(struct tconn *c, struct ttask *t, bool immediate)
{
	struct session *s = c->sess;

	if (immediate) {
		process(t);
		return;
	}
	if (t->cmdsn == s->exp_cmdsn) {
		s->exp_cmdsn++;
		process(t);
		/* commands that waited for this one */
		while (c->sess && s->queue && s->queue->cmdsn == s->exp_cmdsn) {
			struct ttask *q = s->queue;
			s->queue = q->next;
			q->next = NULL;
			s->exp_cmdsn++;
			q->state = TS_DONE; /* no longer queued */
			process(q);
		}
		if (c->sess)
			tmf_check(s);
		return;
	}
	if (idm_iscsi_sn_lt(s->exp_cmdsn, t->cmdsn) && idm_iscsi_sn_le(t->cmdsn, sess_max_cmdsn(s))) {
		struct ttask **pp = &s->queue;
		while (*pp && idm_iscsi_sn_lt((*pp)->cmdsn, t->cmdsn))
			pp = &(*pp)->next;
		if (!*pp || (*pp)->cmdsn != t->cmdsn) {
			ex_dbg("%s: CmdSN %u queued (ExpCmdSN %u)", idm_conn_peer_name(c->ic),
			       t->cmdsn, s->exp_cmdsn);
			t->state = TS_QUEUED;
			t->next = *pp;
			*pp = t;
			return;
		}
	}
	/* RFC 7143 4.2.2.1: outside the window (or a duplicate): ignore */
	ex_info("%s: CmdSN %u outside [%u, %u]: dropped", idm_conn_peer_name(c->ic),
		t->cmdsn, s->exp_cmdsn, sess_max_cmdsn(s));
	task_done(t);
}

static struct ttask *new_task(struct tconn *c, const uint8_t *bhs, enum task_kind kind)
{
	struct ttask *t = ttask_get();

	if (!t)
		return NULL;
	t->kind = kind;
	t->c = c;
	memcpy(t->bhs, bhs, IDM_ISCSI_BHS_LEN);
	t->itt = idm_iscsi_bhs_itt(bhs);
	t->cmdsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_CMDSN);
	t->lun_id = lun_decode(bhs + IDM_ISCSI_BHS_LUN);
	return t;
}

static int copy_data(struct ttask *t, idm_pdu *pdu)
{
	size_t len;
	const uint8_t *d = idm_pdu_data(pdu, &len);

	if (!len)
		return 0;
	t->data = malloc(len);  /* control requests only, never SCSI data */
	if (!t->data)
		return -ENOMEM;
	memcpy(t->data, d, len);
	t->data_len = (uint32_t)len;
	return 0;
}

/* A SCSI Command: a task on the connection's list, admitted by CmdSN */
static void scsi_command(struct tconn *c, idm_pdu *pdu, bool imm)
{
	const uint8_t *bhs = idm_pdu_bhs(pdu);
	idm_task *it = idm_pdu_task(pdu);
	struct ttask *t;

	if (c->sess->discovery || !it) {
		/* RFC 7143 4.4: discovery sessions carry no commands */
		if (it)
			idm_deallocate_task_resources(it);
		send_reject(c, bhs, IDM_ISCSI_REJECT_PROTOCOL_ERROR);
		return;
	}
	t = new_task(c, bhs, TK_SCSI);
	if (!t) {
		idm_deallocate_task_resources(it);
		send_reject(c, bhs, IDM_ISCSI_REJECT_OUT_OF_RESOURCES);
		return;
	}
	t->it = it;
	t->edtl = idm_iscsi_get32(bhs + IDM_ISCSI_CMD_EDTL);
	idm_task_set_arg(it, t);
	t->cnext = c->tasks;
	c->tasks = t;
	admit(c, t, imm);
}

/* Another CmdSN-ordered request (NOP-Out, Text, Logout, TMF): a task with
 * a copy of its data, admitted by CmdSN */
static void queue_request(struct tconn *c, idm_pdu *pdu, enum task_kind kind, bool imm)
{
	const uint8_t *bhs = idm_pdu_bhs(pdu);
	struct ttask *t = new_task(c, bhs, kind);

	if (!t || copy_data(t, pdu) < 0) {
		if (t)
			ttask_put(t);
		send_reject(c, bhs, IDM_ISCSI_REJECT_OUT_OF_RESOURCES);
		return;
	}
	admit(c, t, imm);
}

/* A PDU an initiator may not send in full feature phase, or that this
 * target does not support: Rejected */
static void refuse_pdu(struct tconn *c, const uint8_t *bhs, uint8_t op)
{
	switch (op) {
	case IDM_ISCSI_OP_SNACK_REQ:
		/* ErrorRecoveryLevel 0: no SNACK support (RFC 7143 11.16) */
		send_reject(c, bhs, IDM_ISCSI_REJECT_SNACK_REJECT);
		return;
	case IDM_ISCSI_OP_LOGIN_REQ:
		send_reject(c, bhs, IDM_ISCSI_REJECT_PROTOCOL_ERROR);
		conn_close(c, "Login Request in full feature phase");
		return;
	case IDM_ISCSI_OP_DATA_OUT:
		/* libidm passes up only a Data-Out whose ITT or TTT matches
		 * nothing it issued (doc/api.md 7.1): a bad field, RFC 7143
		 * 11.17.1; the connection goes on */
		ex_warn("%s: Data-Out for ITT 0x%08x TTT 0x%08x matches no transfer",
			idm_conn_peer_name(c->ic), idm_iscsi_bhs_itt(bhs),
			idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT));
		send_reject(c, bhs, IDM_ISCSI_REJECT_INVALID_PDU_FIELD);
		return;
	default:
		/* Opcodes 0x20-0x3f are the target's own (RFC 7143 10.2.1.2):
		 * from an initiator a protocol error; below that, one this
		 * target does not support (vendor-specific or unassigned). */
		ex_warn("%s: unexpected opcode 0x%02x", idm_conn_peer_name(c->ic), op);
		send_reject(c, bhs, op & 0x20 ? IDM_ISCSI_REJECT_PROTOCOL_ERROR
					      : IDM_ISCSI_REJECT_CMD_NOT_SUPPORTED);
		return;
	}
}

void session_pdu(struct tconn *c, idm_pdu *pdu)
{
	const uint8_t *bhs = idm_pdu_bhs(pdu);
	uint8_t op = idm_iscsi_bhs_opcode(bhs);
	bool imm = bhs[0] & IDM_ISCSI_OP_IMMEDIATE;

	switch (op) {
	case IDM_ISCSI_OP_SCSI_CMD:
		return scsi_command(c, pdu, imm);
	case IDM_ISCSI_OP_NOP_OUT:
		if (idm_iscsi_bhs_itt(bhs) == IDM_ISCSI_RESERVED_TAG)
			return; /* answer to our NOP-In (we send none) */
		return queue_request(c, pdu, TK_NOP, imm);
	case IDM_ISCSI_OP_TEXT_REQ:
		return queue_request(c, pdu, TK_TEXT, imm);
	case IDM_ISCSI_OP_LOGOUT_REQ:
		return queue_request(c, pdu, TK_LOGOUT, imm);
	case IDM_ISCSI_OP_TASK_MGMT_REQ:
		if (c->sess->discovery)
			return send_reject(c, bhs, IDM_ISCSI_REJECT_PROTOCOL_ERROR);
		return queue_request(c, pdu, TK_TMF, imm);
	default:
		return refuse_pdu(c, bhs, op);
	}
}

/* --- initiator ACLs: the LUNs a session sees, and a session that lost
 * access asked to log out (doc/idm-target.md, "Initiator ACLs") */

#define ACL_LOGOUT_WAIT_S 5 /* Parameter3 of the Async Message */

/* The session's LUNs become `l` (NULL: none). True if they changed. */
static bool set_luns(struct session *s, const struct access_luns *l)
{
	bool changed;

	_Static_assert(sizeof(s->lunmask) == sizeof(l->mask), "one LUN bitmap");
	if (l && l->all) {
		changed = !s->lun_all;
		s->lun_all = true;
		return changed;
	}
	if (!s->lun_all && l && !memcmp(s->lunmask, l->mask, sizeof(s->lunmask)))
		return false;
	s->lun_all = false;
	if (l)
		memcpy(s->lunmask, l->mask, sizeof(s->lunmask));
	else
		memset(s->lunmask, 0, sizeof(s->lunmask));
	return true;
}

/* Decide for s on connection c: 0 with its LUNs set, or -EACCES. */
static int acl_decide(struct session *s, struct tconn *c, char *why, size_t n)
{
	struct access_request rq;
	struct access_luns l;
	int r;

	s->acl_gen = access_generation();
	s->acl_recheck = false;
	access_request_init(&rq, c->ic, s->iname, g_tgt.name);
	r = access_decide(&rq, &l, why, n);
	if (r == 0 && set_luns(s, &l) && c->state == CS_FFP)
		ex_info("%s: initiator ACLs changed the LUNs %s sees", idm_conn_peer_name(c->ic),
			s->iname);
	return r;
}

void session_acl_login(struct session *s, struct tconn *c)
{
	char why[512];

	if (s->discovery || s->logout_asked)
		return;
	/* allowed at its first request: a reload since is seen next pass */
	if (acl_decide(s, c, why, sizeof(why)) < 0) {
		set_luns(s, NULL);
		s->acl_recheck = true;
	}
}

/* RFC 7143 11.9.1, AsyncEvent 1: the target requests a logout within
 * Parameter3 seconds; the connection is closed after that. Meanwhile
 * the session sees no LUN. */
static void request_logout(struct session *s, const char *why)
{
	uint8_t r[IDM_ISCSI_BHS_LEN] = { 0 };
	struct tconn *c = s->conn;

	ex_info("%s: session tsih %u lost access, logout requested within %d s: %s",
		idm_conn_peer_name(c->ic), s->tsih, ACL_LOGOUT_WAIT_S, why);
	s->logout_asked = true;
	set_luns(s, NULL);
	clock_gettime(CLOCK_MONOTONIC, &s->logout_deadline);
	s->logout_deadline.tv_sec += ACL_LOGOUT_WAIT_S;
	r[0] = IDM_ISCSI_OP_ASYNC_MSG;
	r[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(r + IDM_ISCSI_BHS_ITT, IDM_ISCSI_RESERVED_TAG);
	conn_fill_sn(c, r, true);
	r[IDM_ISCSI_ASYNC_EVENT] = IDM_ISCSI_ASYNC_LOGOUT_REQUEST;
	idm_iscsi_put16(r + IDM_ISCSI_ASYNC_PARAM3, ACL_LOGOUT_WAIT_S);
	conn_send(c, r, NULL, 0);
}

static void acl_check(struct session *s, const struct timespec *now)
{
	struct tconn *c = s->conn;
	char why[512];

	if (s->discovery || s->zombie || !c || c->state != CS_FFP)
		return;
	if (s->logout_asked) {
		if (now->tv_sec > s->logout_deadline.tv_sec ||
		    (now->tv_sec == s->logout_deadline.tv_sec &&
		     now->tv_nsec >= s->logout_deadline.tv_nsec))
			conn_close(c, "no logout after the request: access lost");
		return;
	}
	if (!s->acl_recheck && s->acl_gen == access_generation())
		return;
	if (acl_decide(s, c, why, sizeof(why)) < 0)
		request_logout(s, why);
}

void session_timers(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (struct session *s = g_loop->sessions; s; s = s->next) {
		tmf_check(s);
		acl_check(s, &now);
	}
}
