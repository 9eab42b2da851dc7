/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Received Sends: check the iSER header and the iSCSI lengths against the
 * message the RCaP delivered before anything is used, then hand the PDU to
 * the role's handler or to the caller (Control_Notify). A peer that breaks
 * the wire rules fails the connection with the reason; it never reaches
 * past the receive buffer.
 *
 * Receive buffers: login-phase ones are posted one per login PDU we
 * expect; the full feature phase ones all at Enable_Datamover and reposted
 * as soon as their PDU was handled.
 */

/* RNR NAK timer we ask senders to wait (IB encoding 12 = 0.64 ms). The
 * default 0 means 655 ms: one burst of unsolicited Data-Out beyond the
 * posted receives would stall the connection for seconds. */
#define ISER_MIN_RNR_TIMER 12
#include "iser_recv.h"
#include "iser_mem.h"
#include "iser_send.h"

#include <errno.h>
#include <string.h>

#include <libidm/iscsi.h>

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

void iser_rx_done(struct iser_conn *ic, struct iser_msg *m)
{
	/* Full feature phase buffers go straight back on the RQ; login ones
	 * are posted on demand, one per expected login PDU (below),
	 * so none of them is left on the RQ once larger PDUs may arrive. */
	if (m->pool == &ic->rx_ffp && ic->state == ISER_UP) {
		int r = iser_post_recv(ic, m);

		if (r < 0)
			iser_conn_fail(ic, r, "cannot repost a receive buffer");
		return;
	}
	iser_pool_put(m);
}

/* Login buffers are posted one per login PDU we expect next, so that none
 * is left on the receive queue when full feature phase PDUs, possibly
 * larger, start to arrive (the RQ is FIFO). Once the full feature phase
 * buffers are posted they serve the rest of the login too. */
int iser_expect_login_pdu(struct iser_conn *ic)
{
	struct iser_msg *m;

	if (ic->ffp_rsrc)
		return 0;
	m = iser_pool_get(&ic->rx_login);
	if (!m)
		return -ENOBUFS;
	return iser_post_recv(ic, m);
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

static void hello(struct iser_conn *ic, struct iser_msg *m, uint32_t len)
{
	struct iser_hello h, rep;
	struct iser_msg *tx;
	int r;

	if (iser_hello_decode(m->mem, len, &h) < 0) {
		iser_rx_done(ic, m);
		iser_conn_fail(ic, -EPROTO, "malformed iSER Hello/HelloReply");
		return;
	}
	iser_rx_done(ic, m);
	if (idm_conn_role(ic->conn) == IDM_ROLE_INITIATOR) {
		if (h.opcode != ISER_OP_HELLO_REPLY || !ic->hello_wait) {
			iser_conn_fail(ic, -EPROTO, "unexpected iSER Hello message");
			return;
		}
		if (h.reject) {
			iser_conn_fail(ic, -ECONNREFUSED,
				       "target rejected the iSER Hello");
			return;
		}
		/* 5.1.3: the initiator MAY lower its IRD; the QP keeps it.
		 * What the caller sent meanwhile may go now. */
		ic->hello_wait = false;
		iser_pend_run(ic);
		return;
	}
	if (h.opcode != ISER_OP_HELLO) {
		iser_conn_fail(ic, -EPROTO, "unexpected iSER HelloReply");
		return;
	}
	/* 5.1.3: answer even when the key was not negotiated. */
	memset(&rep, 0, sizeof(rep));
	rep.opcode = ISER_OP_HELLO_REPLY;
	rep.max_ver = ISER_VERSION;
	rep.min_ver = ISER_VERSION;
	rep.ird_ord = (uint16_t)(h.ird_ord < ic->ord ? h.ird_ord : ic->ord);
	rep.reject = h.min_ver > ISER_VERSION || h.max_ver < ISER_VERSION ||
		     (h.ird_ord > 0 && ic->ord == 0);
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
	else if (h.ird_ord < ic->ord)
		ic->ord = h.ird_ord;
}

void iser_rx_pdu(struct idm_pdu *pdu, const uint8_t *bhs)
{
	uint32_t ahs_len = idm_iscsi_bhs_ahs_len(bhs);
	uint32_t dlen = idm_iscsi_bhs_data_len(bhs);

	memset(pdu, 0, sizeof(*pdu));
	pdu->bhs = bhs;
	pdu->ahs = ahs_len ? bhs + IDM_ISCSI_BHS_LEN : NULL;
	pdu->ahs_len = ahs_len;
	pdu->data = dlen ? bhs + IDM_ISCSI_BHS_LEN + ahs_len : NULL;
	pdu->data_len = dlen;
}

void iser_recv(struct iser_conn *ic, struct iser_msg *m, const struct ibv_wc *wc)
{
	struct idm_conn *c = ic->conn;
	bool target = idm_conn_role(c) == IDM_ROLE_TARGET;
	bool login = idm_prov_conn_phase(c) == IDM_CONN_PHASE_LOGIN;
	uint32_t len = wc->byte_len;
	struct iser_hdr h;
	struct idm_pdu pdu;
	const uint8_t *bhs;
	uint32_t ahs_len, dlen;
	uint8_t op;
	int r;

	if (len > m->size || iser_hdr_decode(m->mem, len, &h) < 0) {
		uint8_t b0 = len ? m->mem[0] : 0;

		iser_rx_done(ic, m);
		iser_conn_fail(ic, -EPROTO,
			       "malformed iSER message (byte 0 %#x, %u bytes)",
			       b0, len);
		return;
	}
	if (h.opcode != ISER_OP_CTRL) {
		hello(ic, m, len);
		return;
	}
	bhs = m->mem + ISER_HDR_LEN;
	op = idm_iscsi_bhs_opcode(bhs);
	ahs_len = idm_iscsi_bhs_ahs_len(bhs);
	dlen = idm_iscsi_bhs_data_len(bhs);
	/* The padding of the data segment is optional inside a Send (A13). */
	if ((uint64_t)ISER_HDR_LEN + IDM_ISCSI_BHS_LEN + ahs_len + dlen > len) {
		iser_rx_done(ic, m);
		iser_conn_fail(ic, -EPROTO,
			       "PDU (opcode %#x, AHS %u, data %u) longer than its "
			       "%u-byte Send", op, ahs_len, dlen, len);
		return;
	}
	/* The shared opcode table (RFC 7143 section 11). Data-Out travels
	 * in Sends, hence IDM_PROV_OP_DATA. During login a PDU it refuses
	 * fails the connection; in full feature phase it is well framed all
	 * the same (checked above), so it goes to the caller, which answers
	 * with a Reject (RFC 7143 11.17) and goes on. */
	r = idm_prov_opcode_check(target ? IDM_ROLE_INITIATOR : IDM_ROLE_TARGET, op,
				  login ? IDM_CONN_PHASE_LOGIN : IDM_CONN_PHASE_FFP,
				  IDM_PROV_OP_DATA);
	if (r < 0 && login) {
		iser_rx_done(ic, m);
		if (r == -EINVAL)
			iser_conn_fail(ic, -EPROTO, "opcode %#x not valid from the %s",
				       op, target ? "initiator" : "target");
		else
			iser_conn_fail(ic, -EPROTO,
				       "opcode %#x not allowed in the login phase",
				       op);
		return;
	}
	if (r < 0) {
		idm_prov_dbg(ic->ctx, "iser: opcode %#x is not one the %s sends in "
			     "full feature phase: passed to the caller", op,
			     target ? "initiator" : "target");
	} else if (op == IDM_ISCSI_OP_DATA_IN || op == IDM_ISCSI_OP_R2T) {
		/* RDMA Write / Read replace them (RFC 7145 7.3.5, 7.3.6): a
		 * transport rule of iSER, not an iSCSI-level error */
		iser_rx_done(ic, m);
		iser_conn_fail(ic, -EPROTO, "%s PDU on an iSER connection",
			       op == IDM_ISCSI_OP_R2T ? "R2T" : "Data-In");
		return;
	}

	iser_rx_pdu(&pdu, bhs);
	/* the role's own PDUs: commands and Data-Out (target), SCSI
	 * Responses (initiator) */
	if (ic->role->recv(ic, m, &h, &pdu, wc))
		return;
	idm_prov_control_notify(c, &pdu);
	iser_rx_done(ic, m);
}
