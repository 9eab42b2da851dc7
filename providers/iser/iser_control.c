/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Control PDUs (everything but SCSI Commands and the data the RCaP moves)
 * go out as one iSER message each: iSER header, BHS, AHS and data copied
 * into a registered send buffer. In the login phase each one also decides
 * which receive buffer must be ready for the answer.
 */
#include "iser_control.h"
#include "iser_recv.h"
#include "iser_send.h"

#include <errno.h>
#include <string.h>

#include <libidm/iscsi.h>

static bool final_login_rsp(const uint8_t *bhs)
{
	return idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_LOGIN_RSP &&
	       (bhs[1] & IDM_ISCSI_LOGIN_TRANSIT) &&
	       (bhs[1] & IDM_ISCSI_LOGIN_NSG_MASK) == IDM_ISCSI_STAGE_FULL_FEATURE &&
	       bhs[36] == 0; /* Status-Class success */
}

static void encode_control(uint8_t *dst, const uint8_t *bhs, const void *ahs,
			   size_t ahs_len, const void *data, size_t data_len)
{
	struct iser_hdr h = {.opcode = ISER_OP_CTRL};
	uint8_t *p = dst + ISER_HDR_LEN;

	iser_hdr_encode(dst, &h);
	memcpy(p, bhs, IDM_ISCSI_BHS_LEN);
	p[IDM_ISCSI_BHS_TOTAL_AHS_LEN] = (uint8_t)(ahs_len / 4);
	idm_iscsi_bhs_set_data_len(p, (uint32_t)data_len);
	if (ahs_len)
		memcpy(p + IDM_ISCSI_BHS_LEN, ahs, ahs_len);
	if (data_len)
		memcpy(p + IDM_ISCSI_BHS_LEN + ahs_len, data, data_len);
}

int iser_ctl_send(struct iser_conn *ic, const uint8_t *bhs, const void *ahs,
		  size_t ahs_len, const void *data, size_t data_len,
		  uint32_t inv)
{
	struct idm_conn *c = ic->conn;
	bool login = idm_prov_conn_phase(c) == IDM_CONN_PHASE_LOGIN;
	uint8_t op = idm_iscsi_bhs_opcode(bhs);
	struct iser_pool *tx;
	struct iser_msg *m;
	size_t len = ISER_HDR_LEN + IDM_ISCSI_BHS_LEN + ahs_len + data_len;
	int r;

	if (ic->state != ISER_UP)
		return -ENOTCONN;
	if (login) {
		if (idm_conn_role(c) == IDM_ROLE_TARGET && final_login_rsp(bhs))
			r = iser_rsrc_ffp(ic);
		else if (op == IDM_ISCSI_OP_LOGIN_REQ ||
			 (op == IDM_ISCSI_OP_LOGIN_RSP && !(bhs[36])))
			r = iser_expect_login_pdu(ic);
		else
			r = 0;
		if (r < 0)
			return r;
	}
	tx = iser_tx_pool(ic);
	/* what the peer can receive: its declared RecvDataSegmentLength
	 * (login: 8192) and the AHS room of its buffers */
	if (data_len > (login ? IDM_ISCSI_LOGIN_MAX_DATA_SEGMENT_LENGTH
			      : ic->send_dsl) ||
	    ahs_len > ISER_AHS_CAP)
		return -EMSGSIZE;
	/* No message buffer free, or PDUs already waiting for one: keep
	 * this one in order behind them (iser_send.c) rather than fail. */
	m = NULL;
	if (idm_sq_empty(&ic->pend) && !ic->hello_wait) {
		m = iser_tx_msg(ic, (uint32_t)len);
		if (!m && len > tx->size)
			return -ENOMEM; /* the one-off message */
	}
	if (!m) {
		uint8_t *q;

		/* backpressure: the backlog is bounded (iser_send.c) */
		if (!idm_prov_sq_admit(iser_limits(ic), ic->pend_n,
				       ic->pend_bytes, op, len))
			return -EAGAIN;
		q = iser_pend_control(ic, (uint32_t)len, inv);

		if (!q)
			return -ENOMEM;
		encode_control(q, bhs, ahs, ahs_len, data, data_len);
		return 0;
	}
	encode_control(m->mem, bhs, ahs, ahs_len, data, data_len);
	return iser_send_msg(ic, m, (uint32_t)len, NULL, 0, NULL, inv);
}

/* 5.1.1: the Hello is the first iSER message of the full feature phase,
 * and nothing else goes out before the HelloReply: PDUs meanwhile wait in
 * the backlog (iser_send.c). */
int iser_ctl_hello(struct iser_conn *ic)
{
	struct iser_hello hello = {
		.opcode = ISER_OP_HELLO,
		.max_ver = ISER_VERSION,
		.min_ver = ISER_VERSION,
		.ird_ord = (uint16_t)ic->ird,
	};
	struct iser_msg *m;
	int r;

	if (!ic->params->iser_hello_required)
		return 0;
	m = iser_tx_get(ic);
	if (!m)
		return -EAGAIN;
	iser_hello_encode(m->mem, &hello);
	r = iser_send_msg(ic, m, ISER_HDR_LEN, NULL, 0, NULL, 0);
	if (r == 0)
		ic->hello_wait = true;
	return r;
}
