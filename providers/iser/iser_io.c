/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Messages, receive buffers and completions. Each CQ is drained in batches
 * (poll, re-arm, poll again so no completion is missed between the last
 * poll and the arm). Send completions are selective (iser_sq.c): one
 * completion retires every WR posted before it, and a task still completes
 * only after its own Send did (the "don't suppress send completions"
 * lesson of Linux iser holds: the Send that ends a chain is signalled).
 */
#include "iser.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CQ_ACK_BATCH 64u

int iser_mw_get(struct iser_conn *ic, struct ibv_mw **out)
{
	struct ibv_mw **grown;

	if (ic->n_mw_free) {
		*out = ic->mw_free[--ic->n_mw_free];
		return 0;
	}
	/* Warm-up only: windows are recycled, never freed before teardown. */
	grown = realloc(ic->mw_free, (ic->n_mw + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	ic->mw_free = grown;
	*out = ibv_alloc_mw(ic->dev->pd, IBV_MW_TYPE_2);
	if (!*out)
		return errno ? -errno : -ENOMEM;
	ic->n_mw++;
	return 0;
}

void iser_mw_put(struct iser_conn *ic, struct ibv_mw *mw)
{
	if (mw)
		ic->mw_free[ic->n_mw_free++] = mw;
}

int iser_post_recv(struct iser_conn *ic, struct iser_msg *m)
{
	struct ibv_sge sge = {.addr = (uintptr_t)m->mem, .length = m->size,
			      .lkey = m->lkey};
	struct ibv_recv_wr wr = {.wr_id = (uintptr_t)m, .sg_list = &sge,
				 .num_sge = 1};
	struct ibv_recv_wr *bad;
	int r;

	r = ibv_post_recv(ic->qp, &wr, &bad);
	if (r) {
		iser_pool_put(m);
		return -r;
	}
	ic->rx_posted++;
	return 0;
}

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

static const char *op_name(enum iser_op_kind k)
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

/* One send-queue WR is done (signalled or retired by a later one). */
static void op_done(struct iser_conn *ic, struct iser_op *op,
		    const struct ibv_wc *wc)
{
	struct idm_task *t;
	struct iser_dop *dop;
	enum iser_op_kind kind;
	uint32_t len;

	/* Give the slot (and its message / window) back before anything
	 * that may call the caller: a callback that ends the connection
	 * drains the QP, which waits for every slot to come back. */
	kind = op->kind;
	t = op->task;
	dop = op->dop;
	len = op->len;
	iser_op_release(ic, op);
	if (wc->status != IBV_WC_SUCCESS) {
		iser_conn_fail(ic, wc->status == IBV_WC_WR_FLUSH_ERR ? -ECONNRESET
								      : -EIO,
			       "%s failed: %s (vendor error %#x)", op_name(kind),
			       ibv_wc_status_str(wc->status), wc->vendor_err);
		return;
	}
	ic->activity = true;
	switch (kind) {
	case ISER_OP_SEND:
		if (ic->conn->role == IDM_ROLE_INITIATOR && t) {
			iser_task(t)->sends_pending--;
			iser_ini_try_complete(ic, t);
		}
		break;
	case ISER_OP_WRITE:
	case ISER_OP_READ:
		if (t && dop)
			iser_dop_progress(ic, dop, len, 0);
		break;
	case ISER_OP_ACK_READ:
		if (t)
			idm_prov_data_ack(t, iser_task(t)->datasn);
		break;
	case ISER_OP_LINV:
		if (t) {
			iser_task(t)->linv_pending--;
			iser_ini_try_complete(ic, t);
		}
		break;
	case ISER_OP_PROBE:
		ic->probe_out = false;
		break;
	default:
		break;
	}
}

static void send_done(struct iser_conn *ic, const struct ibv_wc *wc)
{
	iser_sq_reap(ic, wc, op_done);
}

/* Send queue room, op slots and messages came back: move what waited. */
static void sq_refill(struct iser_conn *ic)
{
	if (ic->state != ISER_UP)
		return;
	iser_plug(ic);
	if (ic->dout_head)
		iser_ini_dout_resume(ic);
	if (ic->pend && ic->state == ISER_UP)
		iser_pend_run(ic);
	iser_unplug(ic);
}

static void recv_done(struct iser_conn *ic, const struct ibv_wc *wc)
{
	struct iser_msg *m = (struct iser_msg *)(uintptr_t)wc->wr_id;

	ic->rx_posted--;
	if (wc->status != IBV_WC_SUCCESS) {
		iser_pool_put(m);
		iser_conn_fail(ic, wc->status == IBV_WC_WR_FLUSH_ERR ? -ECONNRESET
								      : -EIO,
			       "receive failed: %s (vendor error %#x)",
			       ibv_wc_status_str(wc->status), wc->vendor_err);
		return;
	}
	ic->activity = true;
	iser_recv(ic, m, wc);
}

static void cq_events(struct ibv_comp_channel *cc, uint32_t *unacked)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	while (ibv_get_cq_event(cc, &cq, &cq_ctx) == 0) {
		if (++*unacked >= CQ_ACK_BATCH) {
			ibv_ack_cq_events(cq, *unacked);
			*unacked = 0;
		}
	}
}

/* Arm, then poll until empty: a completion that arrives between the last
 * poll and the arm still raises an event. */
void iser_cq_poll(struct iser_conn *ic, bool is_send)
{
	struct ibv_cq *cq = is_send ? ic->scq : ic->rcq;
	struct ibv_wc *wc = ic->batch;
	int n;

	if (ic->state != ISER_UP)
		return;
	if (ibv_req_notify_cq(cq, 0)) {
		iser_conn_fail(ic, -EIO, "cannot arm the completion queue");
		return;
	}
	/* WRs that the handlers post (responses, RDMA for the commands
	 * just received) leave as one chain per batch of completions. */
	iser_plug(ic);
	do {
		/* The batch lives in the connection so that a teardown
		 * started by one completion (iser_drain) also takes back
		 * the WRs of the completions polled after it. */
		n = ibv_poll_cq(cq, ISER_CQ_BATCH, wc);
		ic->batch_n = n > 0 ? n : 0;
		ic->batch_send = is_send;
		for (ic->batch_pos = 0;
		     ic->batch_pos < ic->batch_n && ic->state == ISER_UP;
		     ic->batch_pos++) {
			if (is_send)
				send_done(ic, &wc[ic->batch_pos]);
			else
				recv_done(ic, &wc[ic->batch_pos]);
		}
		ic->batch_n = 0;
		if (is_send)
			sq_refill(ic);
		/* post what this batch produced before polling the next */
		iser_unplug(ic);
		iser_plug(ic);
		/* A busy receive CQ must not starve the send CQ: while
		 * commands keep arriving, the Sends of their responses only
		 * complete (and give their messages back) here. */
		if (!is_send && n > 0 && ic->state == ISER_UP)
			iser_cq_poll(ic, true);
	} while (n > 0 && ic->state == ISER_UP);
	iser_unplug(ic);
	if (n < 0 && ic->state == ISER_UP)
		iser_conn_fail(ic, -EIO, "polling the completion queue failed");
}

/* Completions that arrive before ESTABLISHED was seen (the initiator may
 * send its first Login Request right after the RTU) wait on the CQ until
 * established() polls them. */
void iser_scq_watch(struct idm_prov_watch *w, uint32_t revents)
{
	struct iser_conn *ic = (struct iser_conn *)((char *)w -
					offsetof(struct iser_conn, scq_w));

	(void)revents;
	cq_events(ic->scc, &ic->scq_unacked);
	iser_cq_poll(ic, true);
}

void iser_rcq_watch(struct idm_prov_watch *w, uint32_t revents)
{
	struct iser_conn *ic = (struct iser_conn *)((char *)w -
					offsetof(struct iser_conn, rcq_w));

	(void)revents;
	cq_events(ic->rcc, &ic->rcq_unacked);
	iser_cq_poll(ic, false);
}

/*
 * Dead peer detection. RC retries end a connection only when something is
 * being sent; an idle connection to a vanished host would never notice.
 * So when nothing completed for a whole period, post a signalled
 * zero-length RDMA Write (no STag is checked for zero length): an ACK
 * proves the peer's QP is there, and if it is gone the retries
 * ((retry_count + 1) x ACK timeout) fail the WR and so the connection.
 * Retries are not trusted to end (7 means forever, a device may stretch
 * the timeout, a completion may be lost), so the probe also has a
 * deadline: still not completed after liveness_ms (counted in keepalive
 * ticks), the connection fails. The probe completes only after every WR
 * posted before it, so it bounds those too. Any completion proves the
 * peer alive and restarts the count. Detection takes at most
 * 2 x keepalive + min((retry_count + 1) x ACK timeout, liveness rounded
 * up to a keepalive tick); a peer whose process died sends a DREQ and is
 * seen at once.
 */
/* What the send queue holds when the peer went silent: which WRs the
 * device still owes a completion for, oldest first (info level: it is
 * what tells a dead peer from a wedged send queue). */
static void sq_report(struct iser_conn *ic)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct iser_op *op;
	char buf[900];
	size_t n = 0;
	uint32_t i = 0, waiting = 0;

	for (op = ic->sq_wait; op; op = op->next)
		waiting++;
	for (op = ic->posted; op && i < 60; op = op->next, i++) {
		int k = snprintf(buf + n, sizeof(buf) - n, "%s%s%s",
				 i ? "," : "", op_name(op->kind),
				 (op->wr.send_flags & IBV_SEND_SIGNALED) ? "*" : "");
		if (k < 0 || (size_t)k >= sizeof(buf) - n)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	memset(&qa, 0, sizeof(qa));
	if (ibv_query_qp(ic->qp, &qa, IBV_QP_STATE, &qia))
		qa.qp_state = IBV_QPS_UNKNOWN;
	idm_prov_info(ic->ctx, "iser: send queue: QP state %d, %u posted (%s%s), "
		  "%u waiting, %llu WRs / %llu completions so far",
		  (int)qa.qp_state, ic->sq_posted, buf, ic->sq_posted > i ? ",..." : "",
		  waiting, (unsigned long long)ic->stat_wrs,
		  (unsigned long long)ic->stat_signalled);
}

void iser_timer_watch(struct idm_prov_watch *w, uint32_t revents)
{
	struct iser_conn *ic = (struct iser_conn *)((char *)w -
					offsetof(struct iser_conn, timer_w));
	struct ibv_send_wr wr;
	struct iser_op *op;
	uint64_t ticks;
	int live = ic->ip->liveness_ms;

	(void)revents;
	if (read(ic->timer_fd, &ticks, sizeof(ticks)) < 0 ||
	    ic->state != ISER_UP)
		return;
	if (ic->activity) {
		ic->activity = false;
		ic->probe_wait_ms = 0;
		return;
	}
	if (ic->probe_out) {
		ic->probe_wait_ms += ic->ip->keepalive_ms;
		if (live > 0 && ic->probe_wait_ms >= live) {
			sq_report(ic);
			iser_conn_fail(ic, -ETIMEDOUT,
				       "peer silent: keepalive probe not "
				       "completed after %d ms", ic->probe_wait_ms);
		}
		return;
	}
	op = iser_op_get(ic, ISER_OP_PROBE);
	if (!op)
		return;
	idm_prov_dbg(ic->ctx, "iser: idle, probing the peer");
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = iser_op_wr_id(ic, op);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (iser_post(ic, &wr) < 0) {
		iser_op_put(ic, op);
		return;
	}
	ic->probe_out = true;
	ic->probe_wait_ms = 0;
}
