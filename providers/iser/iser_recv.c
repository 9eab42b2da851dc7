/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Received Sends: check the iSER header and the iSCSI lengths against the
 * message the RCaP delivered before anything is used (iser_rx_check.c,
 * verbs-free so that it is fuzzed on its own), then hand the PDU to
 * the role's handler or to the caller (Control_Notify). A peer that breaks
 * the wire rules fails the connection with the reason; it never reaches
 * past the receive buffer.
 *
 * Receive buffers: login-phase ones are posted one per login PDU we
 * expect; the full feature phase ones all at Enable_Datamover and reposted
 * as soon as their PDU was handled, unless the Send backlog is over its
 * high mark (iser_send.c): they are held then, so the peer's Sends meet
 * receiver-not-ready once the posted ones are used up and no new request
 * arrives, and reposted when the backlog drained (iser_rx_resume).
 */

/* RNR NAK timer we ask senders to wait (IB encoding 12 = 0.64 ms). The
 * default 0 means 655 ms: one burst of unsolicited Data-Out beyond the
 * posted receives would stall the connection for seconds. */
#define ISER_MIN_RNR_TIMER 12
#include "iser_recv.h"
#include "iser_fail.h"
#include "iser_msgpool.h"
#include "iser_send.h"
#include "iser_srq.h"

#include <errno.h>

int iser_post_recv(struct iser_conn *ic, struct iser_msg *m)
{
	struct ibv_sge sge = {.addr = (uintptr_t)m->mem, .length = m->size,
			      .lkey = m->lkey};
	struct ibv_recv_wr wr = {.wr_id = (uintptr_t)m, .sg_list = &sge,
				 .num_sge = 1};
	struct ibv_recv_wr *bad;
	int r;

	if (iser_srq_msg(m))
		return iser_srq_repost(m);
	r = ibv_post_recv(ic->qp, &wr, &bad);
	if (r) {
		iser_pool_put(m);
		return -r;
	}
	ic->rx_posted++;
	return 0;
}

void iser_rx_give_back(struct iser_msg *m)
{
	if (iser_srq_msg(m))
		iser_srq_repost(m);
	else
		iser_pool_put(m);
}

/* A shared buffer goes back on its queue at once, whatever the phase or
 * state of the connection, unless backpressure holds it (below): it
 * serves every connection of the queue. */
static void rx_done_shared(struct iser_conn *ic, struct iser_msg *m)
{
	int r;

	if (ic->rx_stopped && ic->state == ISER_UP) {
		m->next = ic->rx_held;
		ic->rx_held = m;
		return;
	}
	r = iser_srq_repost(m);
	if (r < 0 && ic->state == ISER_UP)
		iser_conn_fail(ic, r, "cannot repost a shared receive buffer");
}

void iser_rx_done(struct iser_conn *ic, struct iser_msg *m)
{
	if (iser_srq_msg(m)) {
		rx_done_shared(ic, m);
		return;
	}
	/* Full feature phase buffers go straight back on the RQ; login ones
	 * are posted on demand, one per expected login PDU (below),
	 * so none of them is left on the RQ once larger PDUs may arrive. */
	if (m->pool == &ic->rx_ffp && ic->state == ISER_UP) {
		int r;

		if (ic->rx_stopped) {
			m->next = ic->rx_held;
			ic->rx_held = m;
			return;
		}
		r = iser_post_recv(ic, m);

		if (r < 0)
			iser_conn_fail(ic, r, "cannot repost a receive buffer");
		return;
	}
	iser_pool_put(m);
}

void iser_rx_resume(struct iser_conn *ic)
{
	struct iser_msg *m;

	if (!ic->rx_stopped || ic->state != ISER_UP ||
	    !idm_prov_sq_resume_input(iser_limits(ic), ic->pend_n,
				      ic->pend_bytes))
		return;
	ic->rx_stopped = false;
	while ((m = ic->rx_held) != NULL) {
		int r;

		ic->rx_held = m->next;
		m->next = NULL;
		r = iser_post_recv(ic, m);
		if (r < 0) {
			iser_conn_fail(ic, r, "cannot repost a receive buffer");
			return;
		}
	}
}

/* Login buffers are posted one per login PDU we expect next, so that none
 * is left on the receive queue when full feature phase PDUs, possibly
 * larger, start to arrive (the RQ is FIFO). Once the full feature phase
 * buffers are posted they serve the rest of the login too. */
int iser_expect_login_pdu(struct iser_conn *ic)
{
	struct iser_msg *m;

	/* the shared queue's buffers serve the login too */
	if (ic->ffp_rsrc || ic->srq)
		return 0;
	m = iser_pool_get(&ic->rx_login);
	if (!m)
		return -ENOBUFS;
	return iser_post_recv(ic, m);
}

/* Enable_Datamover with a shared receive queue: the buffers this
 * connection would have posted are added to the queue's size instead,
 * provided its PDUs fit the queue's buffers. */
static int rsrc_ffp_shared(struct iser_conn *ic)
{
	if (!iser_srq_fits(ic->ffp.rx_msg)) {
		idm_prov_warn(ic->ctx, "iser: RecvDataSegmentLength %u needs "
			      "receive buffers of %u bytes, the shared ones "
			      "have %u (declare at most %u with shared receive)",
			      ic->recv_dsl, ic->ffp.rx_msg, ic->srq->msg_size,
			      ISER_SRQ_DSL);
		return -EMSGSIZE;
	}
	return iser_srq_want(ic, ic->ffp.rx_depth);
}

/* Enable_Datamover: post the full feature phase receive buffers (before
 * the last login PDU, so the peer's first full feature PDU finds one). */
int iser_rsrc_ffp(struct iser_conn *ic)
{
	struct iser_msg *m;
	int r;

	if (ic->ffp_rsrc)
		return 0;
	r = iser_rsrc_ffp_alloc(ic);
	if (r < 0)
		return r;
	if (ic->srq) {
		r = rsrc_ffp_shared(ic);
		if (r < 0)
			return r;
	}
	while ((m = iser_pool_get(&ic->rx_ffp))) {
		r = iser_post_recv(ic, m);
		if (r < 0)
			return r; /* the QP is broken; teardown reclaims */
	}
	ic->ffp_rsrc = true;
	idm_prov_dbg(ic->ctx, "iser: full feature phase: %u receive buffers of %u "
		 "bytes (%u KiB; window %u, %u per command), %u send buffers "
		 "of %u", ic->ffp.rx_depth, ic->ffp.rx_msg,
		 (unsigned)(((uint64_t)ic->ffp.rx_depth * ic->ffp.rx_msg) >> 10),
		 idm_prov_conn_cmd_window(ic->conn),
		 iser_rx_per_cmd(ic->params, idm_conn_role(ic->conn)),
		 ic->ffp.tx_depth, ic->ffp.tx_msg);
	{
		struct ibv_qp_attr a = {.min_rnr_timer = ISER_MIN_RNR_TIMER};

		/* RTS to RTS: allowed, and not every device does it */
		if (ibv_modify_qp(ic->qp, &a, IBV_QP_MIN_RNR_TIMER))
			idm_prov_dbg(ic->ctx, "iser: cannot shorten the RNR timer");
	}
	return 0;
}

static void hello(struct iser_conn *ic, struct iser_msg *m,
		  const struct iser_hello *h)
{
	struct iser_hello rep;
	struct iser_msg *tx;
	int r;

	iser_rx_done(ic, m);
	if (idm_conn_role(ic->conn) == IDM_ROLE_INITIATOR) {
		if (h->opcode != ISER_OP_HELLO_REPLY || !ic->hello_wait) {
			iser_conn_fail(ic, -EPROTO, "unexpected iSER Hello message");
			return;
		}
		if (h->reject) {
			iser_conn_fail(ic, -ECONNREFUSED,
				       "target rejected the iSER Hello");
			return;
		}
		/* 5.1.3: the initiator MAY lower its IRD; the QP keeps it.
		 * What the caller sent meanwhile may go now. */
		ic->hello_wait = false;
		iser_pend_run(ic);
		iser_rx_resume(ic);
		return;
	}
	if (h->opcode != ISER_OP_HELLO) {
		iser_conn_fail(ic, -EPROTO, "unexpected iSER HelloReply");
		return;
	}
	/* 5.1.3: answer even when the key was not negotiated. */
	iser_hello_answer(h, ic->ord, &rep);
	tx = iser_tx_get(ic);
	if (!tx) {
		iser_conn_fail(ic, -ENOBUFS, "no send buffer for HelloReply");
		return;
	}
	iser_hello_encode(tx->mem, &rep);
	r = iser_send_msg(ic, tx, ISER_HDR_LEN, NULL, 0, NULL, 0);
	if (r < 0 || rep.reject)
		iser_conn_fail(ic, r < 0 ? r : -EPROTO,
			       "iSER Hello: version/IRD negotiation failed");
	else if (h->ird_ord < ic->ord)
		ic->ord = h->ird_ord;
}

void iser_recv(struct iser_conn *ic, struct iser_msg *m, const struct ibv_wc *wc)
{
	struct iser_rx rx;
	char why[160];
	int r;

	r = iser_rx_check(m->mem, wc->byte_len, m->size, ic->conn_role,
			  idm_prov_conn_phase(ic->conn) == IDM_CONN_PHASE_LOGIN,
			  &rx, why, sizeof(why));
	/* a PDU whose lengths fit the Send counts, refused or not */
	if (ic->st && rx.pdu.bhs)
		idm_prov_stats_pdu(ic->st, 0, rx.pdu.bhs, wc->byte_len);
	if (r < 0) {
		iser_rx_done(ic, m);
		iser_conn_fail(ic, r, "%s", why);
		return;
	}
	if (rx.is_hello) {
		hello(ic, m, &rx.hello);
		return;
	}
	if (rx.unexpected) {
		/* well framed, but not a PDU the peer's role sends in full
		 * feature phase: the caller answers with a Reject (RFC 7143
		 * 11.17, doc/api.md 7.1) and the connection goes on */
		idm_prov_dbg(ic->ctx, "iser: opcode %#x is not one the %s sends "
			     "in full feature phase: passed to the caller",
			     idm_iscsi_bhs_opcode(rx.pdu.bhs),
			     idm_conn_role(ic->conn) == IDM_ROLE_TARGET
				     ? "initiator" : "target");
	} else if (ic->role->recv(ic, m, &rx.hdr, &rx.pdu, wc)) {
		/* the role's own PDUs: commands and Data-Out (target), SCSI
		 * Responses (initiator) */
		return;
	}
	idm_prov_control_notify(ic->conn, &rx.pdu);
	iser_rx_done(ic, m);
}
