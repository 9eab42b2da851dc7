/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Connections: accepting them from the portal, routing libidm's
 * callbacks to the login or full-feature code, sending PDUs, and closing
 * (always deferred to conn_reap() in the main loop, outside callbacks).
 */
#include "target.h"
#include "budget.h"
#include "ex_log.h"

#include <stdlib.h>
#include <string.h>

static void timespec_after(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static bool timespec_passed(const struct timespec *ts, const struct timespec *now)
{
	return now->tv_sec > ts->tv_sec ||
	       (now->tv_sec == ts->tv_sec && now->tv_nsec >= ts->tv_nsec);
}

uint32_t sess_max_cmdsn(const struct session *s)
{
	return s->exp_cmdsn + TGT_CMD_WINDOW - 1;
}

void conn_fill_sn(struct tconn *c, uint8_t *bhs, bool advance)
{
	uint32_t exp = c->sess ? c->sess->exp_cmdsn : c->login_cmdsn;

	idm_iscsi_put32(bhs + 24, c->statsn);
	if (advance)
		c->statsn++;
	idm_iscsi_put32(bhs + 28, exp);
	idm_iscsi_put32(bhs + 32, c->sess ? sess_max_cmdsn(c->sess) : exp);
}

int conn_send(struct tconn *c, uint8_t *bhs, const void *data, size_t len)
{
	int r;

	if (c->state == CS_DEAD)
		return -ENOTCONN;
	r = idm_send_control(c->ic, bhs, NULL, 0, data, len, NULL, 0);
	if (r == -EAGAIN && (bhs[0] & 0x3f) == IDM_ISCSI_OP_NOP_IN) {
		/* The send queue is full: the initiator has not read our
		 * answers for a while. libidm stopped reading its requests,
		 * so this happens only past the queue's reserve; an
		 * unanswered ping is the initiator's to time out. */
		ex_dbg("%s: send queue full: NOP-In dropped",
		       idm_conn_peer_name(c->ic));
		/* give back the StatSN it took: no gap for the initiator */
		if (idm_iscsi_get32(bhs + 24) + 1 == c->statsn)
			c->statsn--;
		return r;
	}
	if (r < 0) {
		ex_warn("%s: send opcode 0x%02x failed: %s", idm_conn_peer_name(c->ic),
			bhs[0] & 0x3f, idm_strerror(r));
		conn_close(c, "send failed");
	}
	return r;
}

/* Graceful close: let the peer close first (after Logout or a failed
 * login), terminate ourselves after a grace period. why == NULL: the
 * caller reports it (the login timeout, once for many). */
static void conn_close_after(struct tconn *c, int ms, const char *why)
{
	if (c->state == CS_DEAD)
		return;
	if (c->state != CS_CLOSING) {
		if (why)
			ex_info("%s: closing connection: %s", idm_conn_peer_name(c->ic), why);
		c->state = CS_CLOSING;
		timespec_after(&c->deadline, ms);
	}
}

void conn_close(struct tconn *c, const char *why)
{
	conn_close_after(c, 0, why);
	if (c->state == CS_CLOSING)
		clock_gettime(CLOCK_MONOTONIC, &c->deadline);
}

void conn_close_graceful(struct tconn *c, const char *why)
{
	conn_close_after(c, 2000, why);
}

/* The provider has let go of everything (terminate or terminate notify):
 * drop our tasks and the session (ErrorRecoveryLevel 0, MaxConnections 1:
 * a session ends with its connection). */
static void conn_release(struct tconn *c)
{
	while (c->tasks) {
		struct ttask *t = c->tasks;
		c->tasks = t->cnext;
		if (t->state == TS_QUEUED)
			continue; /* freed with the session queue below */
		pbuf_put(t->buf);
		ttask_put(t);
	}
	if (c->sess)
		session_detach(c);
	login_free(c);
	text_free(c);
}

/* budget_release() and free a connection already released */
void conn_forget(struct tconn *c)
{
	budget_release(c);
	for (struct tconn **pp = &g_loop->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	free(c);
}

void conn_reap(void)
{
	struct tconn *c, *next;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	/* no full feature phase within the login timeout: closed now, and
	 * terminated by the loop below (its deadline is now) */
	while ((c = budget_next_expired(&now)))
		if (c->state == CS_LOGIN) {
			conn_close_after(c, 0, NULL);
			c->deadline = now;
		}
	for (c = g_loop->conns; c; c = next) {
		next = c->next;
		if (c->state == CS_CLOSING && !c->handoff && timespec_passed(&c->deadline, &now)) {
			idm_connection_terminate(c->ic);
			c->state = CS_DEAD;
			conn_release(c);
			idm_conn_destroy(c->ic);
			conn_forget(c);
		}
	}
	budget_tick(&now);
}

void conn_destroy_all(void)
{
	while (g_loop->conns) {
		struct tconn *c = g_loop->conns;
		idm_connection_terminate(c->ic);
		c->state = CS_DEAD;
		conn_release(c);
		idm_conn_destroy(c->ic);
		conn_forget(c);
	}
}

static void on_control(idm_conn *ic, idm_pdu *pdu, void *arg)
{
	struct tconn *c = arg;

	(void)ic;
	if (c->handoff) { /* on its way to another loop: not our turn */
		idm_task *it = idm_pdu_task(pdu);
		if (it)
			idm_deallocate_task_resources(it);
		return;
	}
	switch (c->state) {
	case CS_LOGIN:
		login_pdu(c, pdu);
		break;
	case CS_FFP:
		session_pdu(c, pdu);
		break;
	default: {
		/* closing: ignore, but give back a command's task */
		idm_task *it = idm_pdu_task(pdu);
		if (it)
			idm_deallocate_task_resources(it);
		break;
	}
	}
}

static void on_terminate(idm_conn *ic, int reason, void *arg)
{
	struct tconn *c = arg;

	if (c->state != CS_CLOSING)
		ex_info("%s: connection ended: %s", idm_conn_peer_name(ic),
			idm_conn_error(ic)[0] ? idm_conn_error(ic) : idm_strerror(reason));
	c->state = CS_DEAD;
	conn_release(c);
	idm_conn_destroy(ic);
	if (loop_handoff_dying(c))
		return; /* in this loop's inbox: loop_run_handoffs() frees it */
	conn_forget(c);
}

static void on_data_ack(idm_task *task, uint32_t datasn, void *arg)
{
	(void)task; (void)datasn; (void)arg; /* ERL 0: no DataACK SNACKs */
}

static const struct idm_conn_cbs conn_cbs = {
	.size = sizeof(struct idm_conn_cbs),
	.control_notify = on_control,
	.data_completion_notify = scsi_io_data_done,
	.data_ack_notify = on_data_ack,
	.connection_terminate_notify = on_terminate,
};

/* Refusing here (a cap is full) costs the peer's connection nothing
 * more: libidm closes and frees it when we return an error. */
int conn_accept(idm_portal *portal, idm_conn *ic, void *arg)
{
	struct tconn *c = calloc(1, sizeof(*c));
	int r;

	(void)portal;
	(void)arg;
	if (!c)
		return -ENOMEM;
	r = budget_admit(c, idm_conn_peer_name(ic));
	if (r < 0) {
		free(c);
		return r;
	}
	c->ic = ic;
	c->state = CS_LOGIN;
	c->iser = strcmp(idm_conn_provider(ic), "iser") == 0;
	r = idm_conn_set_cbs(ic, &conn_cbs, c);
	if (r < 0) {
		budget_release(c);
		free(c);
		return r;
	}
	c->next = g_loop->conns;
	g_loop->conns = c;
	ex_info("%s: new %s connection", idm_conn_peer_name(ic), idm_conn_provider(ic));
	return 0;
}
