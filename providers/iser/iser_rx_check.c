/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The receive path's checks of a Send, apart from the verbs objects that
 * carry it (iser_recv.c acts on the outcome): nothing of a message is
 * used before its iSER header, the iSCSI lengths and the opcode were
 * found to fit. See iser_rx_check.h.
 */
#include "iser_rx_check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libidm/iscsi.h>

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

int iser_rx_check(const uint8_t *msg, uint32_t len, uint32_t size,
		  enum idm_role role, bool login, struct iser_rx *rx,
		  char *why, size_t whylen)
{
	bool target = role == IDM_ROLE_TARGET;
	const uint8_t *bhs;
	uint32_t ahs_len, dlen;
	uint8_t op;
	int r;

	memset(rx, 0, sizeof(*rx));
	if (len > size || iser_hdr_decode(msg, len, &rx->hdr) < 0) {
		snprintf(why, whylen, "malformed iSER message (byte 0 %#x, %u bytes)",
			 len ? msg[0] : 0, len);
		return -EPROTO;
	}
	if (rx->hdr.opcode != ISER_OP_CTRL) {
		rx->is_hello = true;
		if (iser_hello_decode(msg, len, &rx->hello) < 0) {
			snprintf(why, whylen, "malformed iSER Hello/HelloReply");
			return -EPROTO;
		}
		return 0;
	}
	bhs = msg + ISER_HDR_LEN;
	op = idm_iscsi_bhs_opcode(bhs);
	ahs_len = idm_iscsi_bhs_ahs_len(bhs);
	dlen = idm_iscsi_bhs_data_len(bhs);
	/* The padding of the data segment is optional inside a Send (A13). */
	if ((uint64_t)ISER_HDR_LEN + IDM_ISCSI_BHS_LEN + ahs_len + dlen > len) {
		snprintf(why, whylen,
			 "PDU (opcode %#x, AHS %u, data %u) longer than its "
			 "%u-byte Send", op, ahs_len, dlen, len);
		return -EPROTO;
	}
	/* the lengths fit: rx->pdu is set even when the opcode is refused
	 * below (iser_recv() counts such a PDU in the statistics) */
	iser_rx_pdu(&rx->pdu, bhs);
	/* The shared opcode table (RFC 7143 section 11). Data-Out travels
	 * in Sends, hence IDM_PROV_OP_DATA; Data-In and R2T pass it and are
	 * refused below with the iSER reason. */
	r = idm_prov_opcode_check(target ? IDM_ROLE_INITIATOR : IDM_ROLE_TARGET, op,
				  login ? IDM_CONN_PHASE_LOGIN : IDM_CONN_PHASE_FFP,
				  IDM_PROV_OP_DATA);
	if (r < 0 && !login) {
		/* well framed all the same (checked above): the caller's to
		 * Reject (RFC 7143 11.17); during login it fails instead */
		rx->unexpected = true;
		return 0;
	}
	if (r < 0) {
		if (r == -EINVAL)
			snprintf(why, whylen, "opcode %#x not valid from the %s",
				 op, target ? "initiator" : "target");
		else
			snprintf(why, whylen, "opcode %#x not allowed in the %s phase",
				 op, login ? "login" : "full feature");
		return -EPROTO;
	}
	if (op == IDM_ISCSI_OP_DATA_IN || op == IDM_ISCSI_OP_R2T) {
		/* RDMA Write / Read replace them (RFC 7145 7.3.5, 7.3.6) */
		snprintf(why, whylen, "%s PDU on an iSER connection",
			 op == IDM_ISCSI_OP_R2T ? "R2T" : "Data-In");
		return -EPROTO;
	}
	return 0;
}

void iser_hello_answer(const struct iser_hello *h, uint32_t ord,
		       struct iser_hello *rep)
{
	memset(rep, 0, sizeof(*rep));
	rep->opcode = ISER_OP_HELLO_REPLY;
	rep->max_ver = ISER_VERSION;
	rep->min_ver = ISER_VERSION;
	rep->ird_ord = (uint16_t)(h->ird_ord < ord ? h->ird_ord : ord);
	rep->reject = h->min_ver > ISER_VERSION || h->max_ver < ISER_VERSION ||
		      (h->ird_ord > 0 && ord == 0);
}
