/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Task management (RFC 7143 11.5) with the clarified multi-task abort of
 * the Implementer's Guide (RFC 7143 4.2.3.3 / seeds 4.1.2): for ABORT TASK
 * SET, CLEAR TASK SET, LOGICAL UNIT RESET and TARGET WARM/COLD RESET the
 * response waits until
 *   (a) every affected task whose Data-Out we solicited has received it
 *       (the initiator keeps answering our R2Ts), and
 *   (b) every command before the TMF in CmdSN order has arrived,
 * bounded by a deadline after which the remaining transfers are
 * cancelled. Affected tasks end without a response; the TMF response is
 * sent after them (the fence).
 */
#include "target.h"
#include "ex_log.h"

#include <string.h>

#define TMF_WAIT_MS 3000

/* Task Management Function Request: Referenced Task Tag (RFC 7143 11.5) */
#define TMF_REF_TASK_TAG IDM_ISCSI_BHS_TTT

/* The function code: byte 1 without the Final bit */
static uint8_t tmf_function(const uint8_t *bhs)
{
	return bhs[1] & ~IDM_ISCSI_FLAG_FINAL;
}

static void tmf_respond(struct tconn *c, const uint8_t *req, uint8_t response)
{
	uint8_t r[IDM_ISCSI_BHS_LEN] = { 0 };

	r[0] = IDM_ISCSI_OP_TASK_MGMT_RSP;
	r[1] = IDM_ISCSI_FLAG_FINAL;
	r[2] = response;
	idm_iscsi_put32(r + IDM_ISCSI_BHS_ITT, idm_iscsi_bhs_itt(req));
	conn_fill_sn(c, r, true);
	ex_info("%s: TMF function %u response %u", idm_conn_peer_name(c->ic),
		tmf_function(req), response);
	conn_send(c, r, NULL, 0);
}

/* Does the pending multi-task TMF of `owner` cover task t? */
static bool covers(const struct session *owner, const struct ttask *t)
{
	const struct pending_tmf *m = &owner->tmf;
	uint8_t fn = tmf_function(m->bhs);
	uint64_t lun = lun_decode(m->bhs + IDM_ISCSI_BHS_LUN);
	bool same_session = t->c->sess == owner;

	switch (fn) {
	case IDM_ISCSI_TMF_ABORT_TASK_SET:
		/* this I_T nexus only, commands before the TMF */
		return same_session && t->lun_id == lun && idm_iscsi_sn_lt(t->cmdsn, m->cmdsn);
	case IDM_ISCSI_TMF_CLEAR_TASK_SET:
	case IDM_ISCSI_TMF_LUN_RESET:
		if (t->lun_id != lun)
			return false;
		break;
	default: /* target resets: every LUN */
		break;
	}
	/* third-party sessions: everything active now; issuing session:
	 * what came before the TMF in CmdSN order */
	return !same_session || idm_iscsi_sn_lt(t->cmdsn, m->cmdsn);
}

bool tmf_affects(const struct session *s, const struct ttask *t)
{
	return s->tmf.active && covers(s, t);
}

/* Abort every task the TMF covers; tasks with solicited Data-Out in
 * flight stay until it arrives (or the deadline), the rest end now. */
static void abort_covered(struct session *owner)
{
	for (struct tconn *c = g_loop->conns; c; c = c->next) {
		struct ttask *t, *next;
		if (!c->sess || c->state != CS_FFP)
			continue;
		for (t = c->tasks; t; t = next) {
			next = t->cnext;
			if (t->aborted || !covers(owner, t))
				continue;
			t->aborted = true;
			if (t->state == TS_QUEUED)
				continue; /* skipped when its CmdSN comes up */
			/* waiting for solicited Data-Out, or for its LUN (ends
			 * when that completes) */
			if (t->state != TS_DATAOUT && t->state != TS_BACKEND)
				task_done(t);
		}
	}
}

static bool deadline_passed(const struct timespec *d)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > d->tv_sec || (now.tv_sec == d->tv_sec && now.tv_nsec >= d->tv_nsec);
}

void tmf_check(struct session *s)
{
	struct pending_tmf *m = &s->tmf;
	bool late;
	int waiting = 0;

	if (!m->active)
		return;
	late = deadline_passed(&m->deadline);
	/* (b) all commands before the TMF have arrived */
	if (!late && idm_iscsi_sn_lt(s->exp_cmdsn, m->cmdsn))
		return;
	/* (a) solicited Data-Out of aborted tasks has been answered */
	for (struct tconn *c = g_loop->conns; c; c = c->next) {
		struct ttask *t, *next;
		for (t = c->tasks; t; t = next) {
			next = t->cnext;
			if (!t->aborted || (t->state != TS_DATAOUT && t->state != TS_BACKEND))
				continue;
			if (!late)
				waiting++;
			else if (t->state == TS_DATAOUT)
				task_done(t); /* cancels the transfer */
			/* a LUN call cannot be cancelled: that task ends
			 * when it completes */
		}
	}
	if (waiting)
		return;
	if (late)
		ex_warn("TMF wait timed out; remaining transfers cancelled");
	m->active = false;
	tmf_respond(m->c, m->bhs, IDM_ISCSI_TMF_RSP_COMPLETE);
	if (tmf_function(m->bhs) == IDM_ISCSI_TMF_TARGET_COLD_RESET)
		for (struct tconn *c = g_loop->conns; c; c = c->next)
			conn_close_graceful(c, "target cold reset");
}

void tmf_check_all(void)
{
	for (struct session *s = g_loop->sessions; s; s = s->next)
		tmf_check(s);
}

static void abort_task(struct ttask *req)
{
	struct tconn *c = req->c;
	struct session *s = c->sess;
	uint32_t ref = idm_iscsi_get32(req->bhs + TMF_REF_TASK_TAG);
	uint32_t refcmdsn = idm_iscsi_get32(req->bhs + IDM_ISCSI_TMF_REF_CMDSN);

	for (struct ttask *t = c->tasks; t; t = t->cnext) {
		if (t->itt != ref || t->aborted)
			continue;
		if (t->lun_id != req->lun_id) {
			tmf_respond(c, req->bhs, IDM_ISCSI_TMF_RSP_NO_TASK);
			return;
		}
		t->aborted = true;
		/* cancels pending Put/Get_Data; one waiting for its LUN ends
		 * when the LUN completes */
		if (t->state != TS_QUEUED && t->state != TS_BACKEND)
			task_done(t);
		tmf_respond(c, req->bhs, IDM_ISCSI_TMF_RSP_COMPLETE);
		return;
	}
	/* RFC 7143 11.5.1: not yet arrived (RefCmdSN in the window) is
	 * "Function complete"; already done is "Task does not exist". */
	if (idm_iscsi_sn_le(s->exp_cmdsn, refcmdsn) && idm_iscsi_sn_le(refcmdsn, sess_max_cmdsn(s)))
		tmf_respond(c, req->bhs, IDM_ISCSI_TMF_RSP_COMPLETE);
	else
		tmf_respond(c, req->bhs, IDM_ISCSI_TMF_RSP_NO_TASK);
}

/* Resets clear PREVENT and reservations (SPC-4, SPC-2): of the LUN for a
 * LUN RESET, of every LUN for a target reset */
static void reset_luns(uint8_t fn, uint64_t lun_id)
{
	for (int i = 0; i < g_tgt.nluns; i++)
		if (fn != IDM_ISCSI_TMF_LUN_RESET || (uint64_t)g_tgt.luns[i]->id == lun_id) {
			g_tgt.luns[i]->prevent = false;
			__atomic_store_n(&g_tgt.luns[i]->reserved_by, NULL, __ATOMIC_RELEASE);
		}
}

/* A TMF acting on many tasks (task set, LUN or target): it waits for the
 * tasks it covers (Implementer's Guide 4.1.2), one at a time */
static void start_multi_task(struct ttask *req, uint8_t fn)
{
	struct tconn *c = req->c;
	struct session *s = c->sess;

	/* an initiator an ACL limits to some LUNs resets no others */
	if (fn >= IDM_ISCSI_TMF_TARGET_WARM_RESET && !s->lun_all)
		return tmf_respond(c, req->bhs, IDM_ISCSI_TMF_RSP_AUTH_FAILED);
	if (s->tmf.active) /* one multi-task TMF at a time */
		return tmf_respond(c, req->bhs, IDM_ISCSI_TMF_RSP_REJECTED);
	s->tmf.active = true;
	memcpy(s->tmf.bhs, req->bhs, IDM_ISCSI_BHS_LEN);
	s->tmf.c = c;
	s->tmf.cmdsn = req->cmdsn;
	clock_gettime(CLOCK_MONOTONIC, &s->tmf.deadline);
	s->tmf.deadline.tv_sec += TMF_WAIT_MS / 1000;
	if (fn == IDM_ISCSI_TMF_LUN_RESET || fn >= IDM_ISCSI_TMF_TARGET_WARM_RESET)
		reset_luns(fn, req->lun_id);
	abort_covered(s);
	tmf_check(s);
}

void tmf_request(struct ttask *req)
{
	struct tconn *c = req->c;
	uint8_t fn = tmf_function(req->bhs);

	switch (fn) {
	case IDM_ISCSI_TMF_ABORT_TASK:
		abort_task(req);
		break;
	case IDM_ISCSI_TMF_ABORT_TASK_SET:
	case IDM_ISCSI_TMF_CLEAR_TASK_SET:
	case IDM_ISCSI_TMF_LUN_RESET:
		if (!session_lun(c->sess, req->lun_id)) /* none, or the ACL hides it */
			tmf_respond(c, req->bhs, IDM_ISCSI_TMF_RSP_NO_LUN);
		else
			start_multi_task(req, fn);
		break;
	case IDM_ISCSI_TMF_TARGET_WARM_RESET:
	case IDM_ISCSI_TMF_TARGET_COLD_RESET:
		start_multi_task(req, fn);
		break;
	case IDM_ISCSI_TMF_TASK_REASSIGN:
		/* needs ErrorRecoveryLevel 2 */
		tmf_respond(c, req->bhs, IDM_ISCSI_TMF_RSP_NO_FAILOVER);
		break;
	default: /* CLEAR ACA (no ACA support) and unknown functions */
		tmf_respond(c, req->bhs, IDM_ISCSI_TMF_RSP_NOT_SUPPORTED);
		break;
	}
	task_done(req);
}
