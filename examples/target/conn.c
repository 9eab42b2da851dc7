/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Connections, the layer every other part of the session code sends and
 * closes through: sending PDUs (and Rejects), the sequence numbers they
 * carry, closing (always deferred to conn_reap(), outside callbacks) and
 * ending a task. It calls nothing above it: conn_events.c routes libidm's
 * callbacks up to the login and full-feature code.
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

uint32_t sess_max_cmdsn(const struct session *s)
{
	return s->exp_cmdsn + TGT_CMD_WINDOW - 1;
}

void conn_fill_sn(struct tconn *c, uint8_t *bhs, bool advance)
{
	uint32_t exp = c->sess ? c->sess->exp_cmdsn : c->login_cmdsn;

	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, c->statsn);
	if (advance)
		c->statsn++;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, exp);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_MAX_CMDSN, c->sess ? sess_max_cmdsn(c->sess) : exp);
}

int conn_send(struct tconn *c, uint8_t *bhs, const void *data, size_t len)
{
	int r;

	if (c->state == CS_DEAD)
		return -ENOTCONN;
	r = idm_send_control(c->ic, bhs, NULL, 0, data, len, NULL, 0);
	if (r == -EAGAIN && idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_NOP_IN) {
		/* The send queue is full: the initiator has not read our
		 * answers for a while. libidm stopped reading its requests,
		 * so this happens only past the queue's reserve; an
		 * unanswered ping is the initiator's to time out. */
		ex_dbg("%s: send queue full: NOP-In dropped",
		       idm_conn_peer_name(c->ic));
		/* give back the StatSN it took: no gap for the initiator */
		if (idm_iscsi_get32(bhs + IDM_ISCSI_BHS_CMDSN) + 1 == c->statsn)
			c->statsn--;
		return r;
	}
	if (r < 0) {
		ex_warn("%s: send opcode 0x%02x failed: %s", idm_conn_peer_name(c->ic),
			idm_iscsi_bhs_opcode(bhs), idm_strerror(r));
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

void send_reject(struct tconn *c, const uint8_t *bhs, uint8_t reason)
{
	uint8_t r[IDM_ISCSI_BHS_LEN] = { 0 };

	r[0] = IDM_ISCSI_OP_REJECT;
	r[1] = IDM_ISCSI_FLAG_FINAL;
	r[2] = reason;
	idm_iscsi_put32(r + IDM_ISCSI_BHS_ITT, IDM_ISCSI_RESERVED_TAG);
	conn_fill_sn(c, r, true);
	ex_dbg("%s: reject opcode 0x%02x reason 0x%02x", idm_conn_peer_name(c->ic),
	       idm_iscsi_bhs_opcode(bhs), reason);
	conn_send(c, r, bhs, IDM_ISCSI_BHS_LEN);
}

/* End a task: libidm forgets it, its buffer and descriptor go back. */
void task_done(struct ttask *t)
{
	struct tconn *c = t->c;

	if (t->kind == TK_SCSI) {
		for (struct ttask **pp = &c->tasks; *pp; pp = &(*pp)->cnext)
			if (*pp == t) {
				*pp = t->cnext;
				break;
			}
		if (t->it)
			idm_deallocate_task_resources(t->it);
	}
	pbuf_put(t->buf);
	ttask_put(t);
}
