/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A connection's life as libidm reports it: accepting it from the portal,
 * routing its callbacks to the login or full-feature code, and releasing
 * what it held once it ends (terminated by conn_reap() in the main loop,
 * outside callbacks). This is the top of the session code: it calls into
 * login.c, session.c, text.c and loop.c, and those only call down.
 */
#include "target.h"
#include "budget.h"
#include "ex_log.h"

#include <stdlib.h>
#include <string.h>

static bool timespec_passed(const struct timespec *ts, const struct timespec *now)
{
	return now->tv_sec > ts->tv_sec ||
	       (now->tv_sec == ts->tv_sec && now->tv_nsec >= ts->tv_nsec);
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
		if (t->state == TS_BACKEND) {
			/* its LUN call still uses the buffer: freed when it
			 * completes (scsi_io.c) */
			t->c = NULL;
			t->it = NULL;
			continue;
		}
		pbuf_put(t->buf);
		ttask_put(t);
	}
	if (c->sess)
		session_detach(c);
	login_free(c);
	text_free(c);
}

/* Terminate the connection ourselves and free it */
static void conn_end(struct tconn *c)
{
	idm_connection_terminate(c->ic);
	c->state = CS_DEAD;
	conn_release(c);
	idm_conn_destroy(c->ic);
	conn_forget(c);
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
			conn_close(c, NULL);
			c->deadline = now;
		}
	for (c = g_loop->conns; c; c = next) {
		next = c->next;
		if (c->state == CS_CLOSING && !c->handoff && timespec_passed(&c->deadline, &now))
			conn_end(c);
	}
	budget_tick(&now);
}

void conn_destroy_all(void)
{
	while (g_loop->conns)
		conn_end(g_loop->conns);
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
