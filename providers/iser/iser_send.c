/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sends of iSER messages, and the Send backlog. Message buffers are a
 * fixed, pre-registered pool; when a burst of commands, Data-Outs or
 * responses finds it empty, Send_Control keeps the PDU in the backlog, in
 * order, instead of failing with -EAGAIN, and Send completions drain it.
 * A control PDU is kept as its finished message (the caller's buffers may
 * be gone when it leaves); a SCSI Command as its BHS and AHS, because its
 * STags are bound only when it really goes out (by the role's cmd_post).
 * This is the slow path: the allocation happens only when the pool ran
 * dry.
 *
 * The backlog is bounded (idm_conn_set_send_limits): a peer that sends
 * requests and never lets our Sends complete (it does not post receives)
 * would otherwise grow it without limit. Above the high mark the
 * receive side stops reposting buffers (iser_recv.c), so the peer's own
 * Sends meet receiver-not-ready and no new request arrives; Send_Control
 * beyond the limit returns -EAGAIN (iser_control.c), except for SCSI
 * Commands and responses, which the command window bounds.
 */
#include "iser_send.h"
#include "iser_fail.h"
#include "iser_msgpool.h"
#include "iser_sq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libidm/iscsi.h>

struct iser_msg *iser_tx_get(struct iser_conn *ic)
{
	return iser_pool_get(iser_tx_pool(ic));
}

struct iser_msg *iser_tx_msg(struct iser_conn *ic, uint32_t len)
{
	if (len > iser_tx_pool(ic)->size)
		return iser_msg_oneoff(ic->dev->pd, len);
	return iser_tx_get(ic);
}

int iser_send_msg(struct iser_conn *ic, struct iser_msg *m, uint32_t len,
		  struct ibv_sge *extra, int n_extra, struct idm_task *task,
		  uint32_t inv_rkey)
{
	struct ibv_sge sge[2];
	struct ibv_send_wr wr;
	struct iser_op *op = iser_op_get(ic, ISER_OP_SEND);
	int r;

	if (!op) {
		iser_pool_put(m);
		return -EAGAIN;
	}
	op->msg = m;
	iser_op_task(op, task);
	op->len = len;
	sge[0].addr = (uintptr_t)m->mem;
	sge[0].length = len;
	sge[0].lkey = m->lkey;
	if (n_extra)
		sge[1] = extra[0];
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = iser_op_wr_id(ic, op);
	wr.sg_list = sge;
	wr.num_sge = 1 + (n_extra ? 1 : 0);
	wr.opcode = inv_rkey ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND;
	wr.invalidate_rkey = inv_rkey;
	r = iser_post(ic, &wr);
	if (r < 0) {
		iser_pool_put(m);
		iser_op_put(ic, op);
		return r;
	}
	if (task)
		iser_task(task)->sends_pending++;
	return 0;
}

static struct iser_pend *pend_of(struct idm_sq_link *l)
{
	return l ? IDM_PROV_CONTAINER_OF(l, struct iser_pend, link) : NULL;
}

static void pend_push(struct iser_conn *ic, struct iser_pend *p,
		      uint32_t bytes)
{
	p->qbytes = bytes;
	ic->pend_n++;
	ic->pend_bytes += bytes;
	idm_sq_push(&ic->pend, &p->link);
	if (!ic->rx_stopped &&
	    idm_prov_sq_stop_input(iser_limits(ic), ic->pend_n, ic->pend_bytes)) {
		ic->rx_stopped = true;
		idm_prov_dbg(ic->ctx, "iser: %s: Send backlog at %u PDUs, %llu "
			     "bytes: receive buffers not reposted",
			     idm_conn_peer_name(ic->conn), ic->pend_n,
			     (unsigned long long)ic->pend_bytes);
	}
}

/* p left the backlog (sent, dropped or freed). */
static void pend_gone(struct iser_conn *ic, struct iser_pend *p)
{
	ic->pend_n--;
	ic->pend_bytes -= p->qbytes;
}

uint8_t *iser_pend_control(struct iser_conn *ic, uint32_t len, uint32_t inv)
{
	struct iser_pend *p = malloc(sizeof(*p) + len);

	if (!p)
		return NULL;
	p->task = NULL;
	p->len = len;
	p->inv = inv;
	pend_push(ic, p, len);
	return p->bytes;
}

int iser_pend_cmd(struct iser_conn *ic, const uint8_t *bhs, const void *ahs,
		  size_t ahs_len, struct idm_task *t)
{
	struct iser_pend *p = malloc(sizeof(*p) + IDM_ISCSI_BHS_LEN + ahs_len);

	if (!p)
		return -ENOMEM;
	p->task = t;
	p->len = (uint32_t)ahs_len;
	p->inv = 0;
	memcpy(p->bytes, bhs, IDM_ISCSI_BHS_LEN);
	if (ahs_len)
		memcpy(p->bytes + IDM_ISCSI_BHS_LEN, ahs, ahs_len);
	iser_task(t)->cmd_pend = p;
	pend_push(ic, p, (uint32_t)(IDM_ISCSI_BHS_LEN + ahs_len));
	return 0;
}

/* Room for a command: its message, two binds and its Send, the two
 * local invalidations its response may need, and what its role needs
 * (an initiator's staging units). */
static bool room_for(struct iser_conn *ic, const struct iser_pend *p)
{
	struct iser_pool *tx = iser_tx_pool(ic);

	if (!tx->n_free)
		return false;
	if (ISER_OPS - ic->ops_used < (p->task ? 5u : 1u))
		return false;
	/* last: a true answer reserved what the role needs */
	return !p->task || !ic->role->cmd_ready ||
	       ic->role->cmd_ready(ic, p->task);
}

void iser_pend_run(struct iser_conn *ic)
{
	struct iser_pend *p;
	int r;

	iser_plug(ic);
	while ((p = pend_of(ic->pend.head)) && ic->state == ISER_UP &&
	       !ic->hello_wait && room_for(ic, p)) {
		idm_sq_pop(&ic->pend);
		pend_gone(ic, p);
		if (p->task) {
			iser_task(p->task)->cmd_pend = NULL;
			r = ic->role->cmd_post(ic, p->bytes,
						  p->bytes + IDM_ISCSI_BHS_LEN,
						  p->len, p->task);
		} else {
			struct iser_msg *m = iser_tx_msg(ic, p->len);

			if (!m) {
				free(p);
				r = -ENOMEM;
				iser_conn_fail(ic, r, "no memory for a queued PDU");
				break;
			}
			memcpy(m->mem, p->bytes, p->len);
			r = iser_send_msg(ic, m, p->len, NULL, 0, NULL, p->inv);
		}
		free(p);
		if (r < 0) {
			iser_conn_fail(ic, r, "cannot send a queued PDU");
			break;
		}
	}
	iser_unplug(ic);
}

void iser_pend_drop_task(struct iser_conn *ic, struct idm_task *t)
{
	struct iser_pend *p = iser_task(t)->cmd_pend;
	struct idm_sq_link *prev = NULL, *l;

	if (!p)
		return;
	for (l = ic->pend.head; l; prev = l, l = l->next) {
		if (l == &p->link) {
			idm_sq_remove(&ic->pend, prev, l);
			pend_gone(ic, p);
			free(p);
			break;
		}
	}
	iser_task(t)->cmd_pend = NULL;
}

void iser_pend_free_all(struct iser_conn *ic)
{
	struct iser_pend *p;

	while ((p = pend_of(idm_sq_pop(&ic->pend))) != NULL) {
		pend_gone(ic, p);
		if (p->task)
			iser_task(p->task)->cmd_pend = NULL;
		free(p);
	}
}
