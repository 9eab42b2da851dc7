/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The send queue of one connection. Every work request is an op slot that
 * goes through two FIFOs: "waiting" (built, not posted: the send queue is
 * full, the RDMA Read depth is used up, or the queue is plugged while a
 * primitive builds a chain) and "posted" (on the SQ, in post order).
 *
 * Selective signalling: a chain handed to ibv_post_send has only its last
 * WR signalled (and every ISER_SIGNAL_EVERY-th inside a long one). An RC
 * send queue completes in order, so a signalled completion also retires
 * every WR posted before it; a failed WR always completes, signalled or
 * not, so errors are still seen. A task that waits for its Send (the
 * initiator's command) is never stranded: its chain ends with a signalled
 * WR. Memory window binds and local invalidations are always signalled
 * (see iser_sq_kick).
 *
 * Binds on soft-RoCE (dev->bind_idle): rxe rewinds its send queue to the
 * oldest unacknowledged WR for a retransmission or an RNR retry and walks
 * it again, executing an already executed bind a second time; the WRs
 * behind that bind are then never sent and the QP stays in RTS (shown by
 * tests/iser/rxe_mw_retry.c). A bind that has only local operations ahead
 * of it is retired as soon as it ran and is never in a rewind. So there a
 * bind waits, with everything behind it, until no WR that goes on the
 * wire is outstanding, and then every waiting bind is posted first, ahead
 * of the waiting Sends (binding early is harmless: the peer learns the
 * STag only from the command's Send, which stays behind its bind).
 */
#include "iser_sq.h"
#include "iser_fail.h"
#include "iser_msgpool.h"
#include "iser_mw.h"
#include "iser_stage.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int iser_sq_init(struct iser_conn *ic)
{
	uint32_t i;

	ic->ops = calloc(ISER_OPS, sizeof(*ic->ops));
	if (!ic->ops)
		return -ENOMEM;
	for (i = ISER_OPS; i-- > 0;) {
		ic->ops[i].next = ic->op_free;
		ic->op_free = &ic->ops[i];
	}
	return 0;
}

/* Op slots outlive the QP until conn_free, like the messages. */
void iser_sq_fini(struct iser_conn *ic)
{
	free(ic->ops);
	ic->ops = NULL;
	ic->op_free = NULL;
	free(ic->sgl);
	ic->sgl = NULL;
}

struct ibv_sge *iser_op_sgl(struct iser_conn *ic, struct iser_op *op)
{
	if (!ic->sgl) {
		/* once per connection, on its first scatter-gather range */
		ic->sgl = calloc((size_t)ISER_OPS * ISER_WR_SGE, sizeof(*ic->sgl));
		if (!ic->sgl)
			return NULL;
	}
	return &ic->sgl[(size_t)(op - ic->ops) * ISER_WR_SGE];
}

struct iser_op *iser_op_get(struct iser_conn *ic, enum iser_op_kind kind)
{
	struct iser_op *op = ic->op_free;

	if (!op)
		return NULL;
	ic->op_free = op->next;
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	ic->ops_used++;
	return op;
}

void iser_op_task(struct iser_op *op, struct idm_task *t)
{
	op->task = t;
	if (t)
		iser_task(t)->ops_out++;
}

void iser_op_put(struct iser_conn *ic, struct iser_op *op)
{
	if (op->task && iser_task(op->task)->ops_out)
		iser_task(op->task)->ops_out--;
	op->kind = ISER_OP_FREE;
	op->posted = false;
	op->task = NULL;
	op->dop = NULL;
	op->msg = NULL;
	op->next = ic->op_free;
	ic->op_free = op;
	ic->ops_used--;
}

void iser_op_release(struct iser_conn *ic, struct iser_op *op)
{
	if (op->msg)
		iser_pool_put(op->msg);
	iser_mw_put(ic, op->mw);
	iser_stage_put(ic, &op->stage);
	iser_op_put(ic, op);
}

uint64_t iser_op_wr_id(struct iser_conn *ic, struct iser_op *op)
{
	return (uint64_t)(op - ic->ops) + 1;
}

const char *iser_op_name(enum iser_op_kind k)
{
	switch (k) {
	case ISER_OP_SEND: return "Send";
	case ISER_OP_WRITE: return "RDMA Write (Put_Data)";
	case ISER_OP_READ: return "RDMA Read (Get_Data)";
	case ISER_OP_ACK_READ: return "DataACK RDMA Read";
	case ISER_OP_BIND: return "memory window bind";
	case ISER_OP_LINV: return "local invalidate";
	case ISER_OP_PROBE: return "keepalive probe";
	case ISER_OP_DRAIN: return "drain marker";
	default: return "?";
	}
}

static struct iser_op *op_of(struct iser_conn *ic, uint64_t wr_id)
{
	if (!ic->ops || wr_id == 0 || wr_id > ISER_OPS)
		return NULL;
	return &ic->ops[wr_id - 1];
}

/* The task is being freed while WRs naming it are outstanding: their
 * completions must not touch it (the slot may be reused at once). */
void iser_ops_orphan(struct iser_conn *ic, struct idm_task *t)
{
	uint32_t i;

	if (!ic->ops || iser_task(t)->ops_out == 0)
		return;
	for (i = 0; i < ISER_OPS; i++) {
		if (ic->ops[i].kind != ISER_OP_FREE && ic->ops[i].task == t) {
			ic->ops[i].task = NULL;
			ic->ops[i].dop = NULL;
		}
	}
	iser_task(t)->ops_out = 0;
}

/* idm_conn_get_stats(): what a work request puts on the wire. */
static void count_wr(struct iser_conn *ic, const struct iser_op *op)
{
	struct idm_prov_stats *st = ic->st;
	uint64_t len = 0;

	if (!st)
		return;
	for (int i = 0; i < op->wr.num_sge; i++)
		len += op->wr.sg_list[i].length;
	switch (op->wr.opcode) {
	case IBV_WR_SEND_WITH_INV:
		st->send_invalidates++;
		/* fall through */
	case IBV_WR_SEND:
		if (op->wr.num_sge &&
		    op->sge[0].length >= ISER_HDR_LEN + IDM_ISCSI_BHS_LEN)
			idm_prov_stats_pdu(st, 1,
					   (const uint8_t *)(uintptr_t)op->sge[0].addr +
						   ISER_HDR_LEN,
					   len);
		else
			st->bytes_tx += len; /* Hello / HelloReply */
		break;
	case IBV_WR_RDMA_WRITE:
		if (len) { /* not the keepalive's empty Write */
			st->rdma_writes++;
			st->bytes_tx += len;
		}
		break;
	case IBV_WR_RDMA_READ:
		if (len) { /* not a DataACK's empty Read */
			st->rdma_reads++;
			st->bytes_rx += len;
		}
		break;
	default:
		break;
	}
}

int iser_post(struct iser_conn *ic, struct ibv_send_wr *wr)
{
	struct iser_op *op = op_of(ic, wr->wr_id);
	int i;

	if (ic->state != ISER_UP || !ic->qp || !op)
		return -ENOTCONN;
	if (wr != &op->wr)
		op->wr = *wr;
	if (op->wr.num_sge > 2) {
		/* a list in ic->sgl (iser_op_sgl): it stays there */
		if (op->wr.num_sge > ISER_WR_SGE || !ic->sgl ||
		    wr->sg_list != iser_op_sgl(ic, op))
			return -EINVAL;
	} else {
		for (i = 0; wr->sg_list != op->sge && i < op->wr.num_sge; i++)
			op->sge[i] = wr->sg_list[i];
		op->wr.sg_list = op->wr.num_sge ? op->sge : NULL;
	}
	op->wr.next = NULL;
	count_wr(ic, op);
	op->next = NULL;
	if (op->kind == ISER_OP_BIND)
		ic->binds_waiting++;
	if (ic->sq_wait_tail)
		ic->sq_wait_tail->next = op;
	else
		ic->sq_wait = op;
	ic->sq_wait_tail = op;
	if (!ic->plugged)
		iser_sq_kick(ic);
	return 0;
}

void iser_plug(struct iser_conn *ic)
{
	ic->plugged++;
}

void iser_unplug(struct iser_conn *ic)
{
	if (ic->plugged > 0 && --ic->plugged == 0)
		iser_sq_kick(ic);
}

static bool is_read(const struct iser_op *op)
{
	return op->kind == ISER_OP_READ || op->kind == ISER_OP_ACK_READ;
}

/* A WR the device may have to retransmit (not a local operation). */
static bool on_wire(const struct iser_op *op)
{
	return op->kind != ISER_OP_BIND && op->kind != ISER_OP_LINV &&
	       op->kind != ISER_OP_DRAIN;
}

/* Move every waiting bind to the head of the wait FIFO, keeping the
 * order of the binds and of the rest. */
static void hoist_binds(struct iser_conn *ic)
{
	struct iser_op *binds = NULL, *btail = NULL, *rest = NULL, *rtail = NULL;
	struct iser_op *op, *n;

	for (op = ic->sq_wait; op; op = n) {
		n = op->next;
		op->next = NULL;
		if (op->kind == ISER_OP_BIND) {
			if (btail)
				btail->next = op;
			else
				binds = op;
			btail = op;
		} else {
			if (rtail)
				rtail->next = op;
			else
				rest = op;
			rtail = op;
		}
	}
	if (btail) {
		btail->next = rest;
		ic->sq_wait = binds;
	} else {
		ic->sq_wait = rest;
	}
	ic->sq_wait_tail = rtail ? rtail : btail;
}

/* op leaves the send queue's books (completed, flushed or refused). */
static void op_unposted(struct iser_conn *ic, struct iser_op *op)
{
	op->next = NULL;
	op->posted = false;
	ic->sq_posted--;
	if (on_wire(op))
		ic->sq_remote--;
	if (is_read(op))
		ic->reads_out--;
}

/* ibv_post_send refused the chain from 'bad' on: those WRs never reached
 * the SQ. Take them off the posted FIFO (they are its tail). */
static void unpost_tail(struct iser_conn *ic, struct ibv_send_wr *bad)
{
	struct iser_op *first = op_of(ic, bad->wr_id), *p, *prev = NULL;

	for (p = ic->posted; p && p != first; p = p->next)
		prev = p;
	if (!p)
		return;
	if (prev)
		prev->next = NULL;
	else
		ic->posted = NULL;
	ic->posted_tail = prev;
	while (p) {
		struct iser_op *n = p->next;

		op_unposted(ic, p);
		iser_op_release(ic, p);
		p = n;
	}
}

/* take_head: whether the head of the wait list may go now (a bind waits
 * for the wire WRs ahead of it where the device wants that, a Read for the
 * read depth); if so it is taken off the list and counted. */
static bool take_head(struct iser_conn *ic, struct iser_op *op)
{
	if (op->kind == ISER_OP_BIND) {
		/* head of line until the wire WRs ahead completed */
		if (ic->dev->bind_idle && ic->sq_remote > 0)
			return false;
	}
	if (is_read(op)) {
		if (ic->reads_out >= ic->ord)
			return false; /* head of line until a Read completes */
		ic->reads_out++;
	}
	if (op->kind == ISER_OP_BIND)
		ic->binds_waiting--;
	else if (on_wire(op))
		ic->sq_remote++;
	ic->sq_wait = op->next;
	op->next = NULL;
	return true;
}

/* append_posted: op's WR ready to post (selectively signalled) and op at
 * the tail of the posted list, where its completion retires it. */
static void append_posted(struct iser_conn *ic, struct iser_op *op)
{
	op->posted = true;
	op->wr.wr_id = iser_op_wr_id(ic, op);
	op->wr.next = NULL;
	op->wr.send_flags &= ~(unsigned int)IBV_SEND_SIGNALED;
	if (op->kind == ISER_OP_BIND || op->kind == ISER_OP_LINV) {
		/* Local operations stay signalled: rxe (Linux 6.1)
		 * stalls the send queue behind an unsignalled one,
		 * and window recycling wants their completion. */
		op->wr.send_flags |= IBV_SEND_SIGNALED;
	} else if (++ic->since_signal >= ISER_SIGNAL_EVERY) {
		op->wr.send_flags |= IBV_SEND_SIGNALED;
		ic->since_signal = 0;
	}
	if (ic->posted_tail)
		ic->posted_tail->next = op;
	else
		ic->posted = op;
	ic->posted_tail = op;
}

void iser_sq_kick(struct iser_conn *ic)
{
	struct ibv_send_wr *first = NULL, **link = &first, *bad = NULL, *wr;
	struct iser_op *op, *last = NULL;
	uint32_t n = 0;
	int r;

	if (ic->state != ISER_UP || !ic->qp || ic->plugged)
		return;
	if (ic->dev->bind_idle && ic->binds_waiting && ic->sq_remote == 0 &&
	    ic->sq_wait->kind != ISER_OP_BIND)
		hoist_binds(ic);
	while ((op = ic->sq_wait) && ic->sq_posted + n < ISER_SQ_DEPTH) {
		if (!take_head(ic, op))
			break;
		append_posted(ic, op);
		*link = &op->wr;
		link = &op->wr.next;
		last = op;
		n++;
	}
	if (!ic->sq_wait)
		ic->sq_wait_tail = NULL;
	if (!n)
		return;
	if (!(last->wr.send_flags & IBV_SEND_SIGNALED)) {
		last->wr.send_flags |= IBV_SEND_SIGNALED;
		ic->since_signal = 0;
	}
	ic->sq_posted += n;
	ic->stat_wrs += n;
	r = ibv_post_send(ic->qp, first, &bad);
	/* A type-2 window is named by its current rkey when a bind is
	 * posted; from now on the bound key is the current one. */
	for (wr = first; wr && wr != bad; wr = wr->next)
		if (wr->opcode == IBV_WR_BIND_MW)
			wr->bind_mw.mw->rkey = wr->bind_mw.rkey;
	if (r) {
		if (bad)
			unpost_tail(ic, bad);
		iser_conn_fail(ic, -r, "ibv_post_send: %s", strerror(r));
	}
}

struct iser_op *iser_sq_pop(struct iser_conn *ic)
{
	struct iser_op *op = ic->posted;

	if (!op)
		return NULL;
	ic->posted = op->next;
	if (!ic->posted)
		ic->posted_tail = NULL;
	op_unposted(ic, op);
	return op;
}

void iser_sq_reap(struct iser_conn *ic, const struct ibv_wc *wc,
		  void (*on_done)(struct iser_conn *, struct iser_op *,
				  const struct ibv_wc *))
{
	struct iser_op *x = op_of(ic, wc->wr_id), *op;
	bool was_up = ic->state == ISER_UP;
	struct ibv_wc ok;

	if (!x || x->kind == ISER_OP_FREE || !x->posted)
		return; /* not ours, or already retired */
	ic->stat_signalled++; /* one completion reaped */
	memset(&ok, 0, sizeof(ok));
	ok.status = IBV_WC_SUCCESS;
	while ((op = iser_sq_pop(ic)) != NULL) {
		bool last = op == x;

		ok.wr_id = iser_op_wr_id(ic, op);
		on_done(ic, op, last ? wc : &ok);
		/* a callback may have torn the connection down: the drain
		 * then took every remaining op back */
		if (last || (was_up && ic->state != ISER_UP))
			break;
	}
}

void iser_sq_purge_task(struct iser_conn *ic, struct idm_task *t)
{
	struct iser_op **pp = &ic->sq_wait, *prev = NULL, *op;
	struct iser_task *it = iser_task(t);
	int i;

	while ((op = *pp) != NULL) {
		if (op->task != t || op->kind == ISER_OP_LINV) {
			/* an invalidation must still happen */
			prev = op;
			pp = &op->next;
			continue;
		}
		*pp = op->next;
		if (ic->sq_wait_tail == op)
			ic->sq_wait_tail = prev;
		if (op->kind == ISER_OP_BIND) {
			ic->binds_waiting--;
			/* never bound: the window is free again and must not
			 * be invalidated later */
			for (i = 0; i < 2; i++) {
				if (it->mw[i] == op->bind_mw) {
					it->mw[i] = NULL;
					it->stag_valid[i] = false;
				}
			}
			iser_mw_put(ic, op->bind_mw);
		}
		if (op->kind == ISER_OP_SEND && it->sends_pending)
			it->sends_pending--;
		iser_op_release(ic, op);
	}
}

void iser_sq_stats(struct idm_conn *conn, struct idm_prov_stats *st)
{
	const struct iser_conn *ic = idm_prov_conn_priv(conn);
	uint32_t n = 0;
	uint64_t bytes = 0;

	for (const struct iser_op *op = ic->sq_wait; op; op = op->next) {
		n++;
		bytes += op->len;
	}
	for (const struct idm_sq_link *l = ic->pend.head; l; l = l->next)
		n++;
	st->sendq_entries = n;
	st->sendq_bytes = bytes;
}
