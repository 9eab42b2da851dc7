/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Received Sends: check the iSER header and the iSCSI lengths against the
 * message the RCaP delivered before anything is used, then hand the PDU to
 * the role's handler or to the caller (Control_Notify). A peer that breaks
 * the wire rules fails the connection with the reason; it never reaches
 * past the receive buffer.
 */
#include "iser.h"

#include <errno.h>
#include <string.h>

#include <libidm/iscsi.h>

void iser_rx_done(struct iser_conn *ic, struct iser_msg *m)
{
	/* Full feature phase buffers go straight back on the RQ; login ones
	 * are posted on demand, one per expected login PDU (iser_provider.c),
	 * so none of them is left on the RQ once larger PDUs may arrive. */
	if (m->pool == &ic->rx_ffp && ic->state == ISER_UP) {
		int r = iser_post_recv(ic, m);

		if (r < 0)
			iser_conn_fail(ic, r, "cannot repost a receive buffer");
		return;
	}
	iser_pool_put(m);
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
	if (ic->conn->role == IDM_ROLE_INITIATOR) {
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

static bool initiator_op(uint8_t op)
{
	return op <= ISCSI_OP_LOGOUT_REQ || op == ISCSI_OP_SNACK_REQ;
}

static bool target_op(uint8_t op)
{
	return (op >= ISCSI_OP_NOP_IN && op <= ISCSI_OP_LOGOUT_RSP) ||
	       op == ISCSI_OP_R2T || op == ISCSI_OP_ASYNC_MSG ||
	       op == ISCSI_OP_REJECT;
}

void iser_recv(struct iser_conn *ic, struct iser_msg *m, const struct ibv_wc *wc)
{
	struct idm_conn *c = ic->conn;
	uint32_t len = wc->byte_len;
	struct iser_hdr h;
	struct idm_pdu pdu;
	const uint8_t *bhs;
	uint32_t ahs_len, dlen;
	uint8_t op;

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
	op = iscsi_bhs_opcode(bhs);
	ahs_len = iscsi_bhs_ahs_len(bhs);
	dlen = iscsi_bhs_data_len(bhs);
	/* The padding of the data segment is optional inside a Send (A13). */
	if ((uint64_t)ISER_HDR_LEN + ISCSI_BHS_LEN + ahs_len + dlen > len) {
		iser_rx_done(ic, m);
		iser_conn_fail(ic, -EPROTO,
			       "PDU (opcode %#x, AHS %u, data %u) longer than its "
			       "%u-byte Send", op, ahs_len, dlen, len);
		return;
	}
	if (c->role == IDM_ROLE_TARGET ? !initiator_op(op) : !target_op(op)) {
		iser_rx_done(ic, m);
		iser_conn_fail(ic, -EPROTO, "opcode %#x not valid from the %s",
			       op, c->role == IDM_ROLE_TARGET ? "initiator"
							      : "target");
		return;
	}
	if ((op == ISCSI_OP_LOGIN_REQ || op == ISCSI_OP_LOGIN_RSP) !=
	    (c->state == IDM_CONN_PHASE_LOGIN)) {
		iser_rx_done(ic, m);
		iser_conn_fail(ic, -EPROTO, "opcode %#x not allowed in the %s phase",
			       op, c->state == IDM_CONN_PHASE_LOGIN ? "login"
							      : "full feature");
		return;
	}
	if (op == ISCSI_OP_DATA_IN || op == ISCSI_OP_R2T) {
		/* RDMA Write / Read replace them (RFC 7145 7.3.5, 7.3.6) */
		iser_rx_done(ic, m);
		iser_conn_fail(ic, -EPROTO, "%s PDU on an iSER connection",
			       op == ISCSI_OP_R2T ? "R2T" : "Data-In");
		return;
	}

	memset(&pdu, 0, sizeof(pdu));
	pdu.bhs = bhs;
	pdu.ahs = ahs_len ? bhs + ISCSI_BHS_LEN : NULL;
	pdu.ahs_len = ahs_len;
	pdu.data = dlen ? bhs + ISCSI_BHS_LEN + ahs_len : NULL;
	pdu.data_len = dlen;

	if (c->role == IDM_ROLE_TARGET && op == ISCSI_OP_DATA_OUT) {
		int r = iser_tgt_data_out(ic, bhs, pdu.data, dlen);

		iser_rx_done(ic, m);
		if (r < 0)
			iser_conn_fail(ic, r, "bad unsolicited Data-Out (ITT %#x)",
				       iscsi_bhs_itt(bhs));
		return;
	}
	if (c->role == IDM_ROLE_TARGET && op == ISCSI_OP_SCSI_CMD) {
		struct idm_task *t = NULL;
		int r = iser_tgt_cmd(ic, &h, bhs, pdu.data, dlen, &t);

		if (r < 0) {
			iser_rx_done(ic, m);
			iser_conn_fail(ic, r, "bad SCSI Command (ITT %#x)",
				       iscsi_bhs_itt(bhs));
			return;
		}
		pdu.task = t;
		ic->in_dispatch = true;
		idm_prov_control_notify(c, &pdu);
		ic->in_dispatch = false;
		if (ic->state == ISER_UP && t->active && t->conn == c)
			iser_tgt_cmd_done(ic, t);
		iser_rx_done(ic, m);
		return;
	}
	if (c->role == IDM_ROLE_INITIATOR && op == ISCSI_OP_SCSI_RSP) {
		struct idm_task *t = idm_prov_task_find(c, iscsi_bhs_itt(bhs));

		if (t) {
			iser_ini_rsp(ic, t, m, len, wc);
			return;
		}
	}
	idm_prov_control_notify(c, &pdu);
	iser_rx_done(ic, m);
}
