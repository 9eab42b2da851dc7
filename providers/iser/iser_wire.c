/* SPDX-License-Identifier: BSD-2-Clause */
/* iSER header, Hello and CM private data codec (see iser_wire.h). */
#include "iser_wire.h"

#include <errno.h>
#include <string.h>

#include <libidm/iscsi.h>

void iser_hdr_encode(uint8_t out[ISER_HDR_LEN], const struct iser_hdr *h)
{
	memset(out, 0, ISER_HDR_LEN);
	out[0] = h->opcode & ISER_OP_MASK;
	if (h->wsv) {
		out[0] |= ISER_WSV;
		idm_iscsi_put32(out + 4, h->write_stag);
		idm_iscsi_put64(out + 8, h->write_va);
	}
	if (h->rsv) {
		out[0] |= ISER_RSV;
		idm_iscsi_put32(out + 16, h->read_stag);
		idm_iscsi_put64(out + 20, h->read_va);
	}
}

int iser_hdr_decode(const uint8_t *msg, size_t len, struct iser_hdr *h)
{
	memset(h, 0, sizeof(*h));
	if (len < ISER_HDR_LEN)
		return -EPROTO;
	h->opcode = msg[0] & ISER_OP_MASK;
	switch (h->opcode) {
	case ISER_OP_CTRL:
		if (len < ISER_HDR_LEN + IDM_ISCSI_BHS_LEN)
			return -EPROTO;
		break;
	case ISER_OP_HELLO:
	case ISER_OP_HELLO_REPLY:
		/* header only (RFC 7145 9.3/9.4, 10.1.3.3) */
		return len == ISER_HDR_LEN ? 0 : -EPROTO;
	default:
		return -EPROTO;
	}
	/* fields of an invalid half MUST be ignored (9.2) */
	h->wsv = msg[0] & ISER_WSV;
	h->rsv = msg[0] & ISER_RSV;
	if (h->wsv) {
		h->write_stag = idm_iscsi_get32(msg + 4);
		h->write_va = idm_iscsi_get64(msg + 8);
	}
	if (h->rsv) {
		h->read_stag = idm_iscsi_get32(msg + 16);
		h->read_va = idm_iscsi_get64(msg + 20);
	}
	return 0;
}

void iser_hello_encode(uint8_t out[ISER_HDR_LEN], const struct iser_hello *h)
{
	memset(out, 0, ISER_HDR_LEN);
	out[0] = h->opcode & ISER_OP_MASK;
	if (h->opcode == ISER_OP_HELLO_REPLY && h->reject)
		out[0] |= ISER_HELLO_REJ;
	out[1] = (uint8_t)((h->max_ver & 0x0f) << 4 | (h->min_ver & 0x0f));
	idm_iscsi_put16(out + 2, h->ird_ord);
}

int iser_hello_decode(const uint8_t *msg, size_t len, struct iser_hello *h)
{
	memset(h, 0, sizeof(*h));
	if (len != ISER_HDR_LEN)
		return -EPROTO;
	h->opcode = msg[0] & ISER_OP_MASK;
	if (h->opcode != ISER_OP_HELLO && h->opcode != ISER_OP_HELLO_REPLY)
		return -EPROTO;
	h->reject = h->opcode == ISER_OP_HELLO_REPLY && (msg[0] & ISER_HELLO_REJ);
	h->max_ver = msg[1] >> 4;
	h->min_ver = msg[1] & 0x0f;
	h->ird_ord = idm_iscsi_get16(msg + 2);
	return 0;
}

void iser_cm_word_encode(uint8_t out[ISER_CM_WORD_LEN], uint8_t flags)
{
	out[0] = flags & (ISER_CM_ZBVA_NOT_SUP | ISER_CM_SEND_INV_NOT_SUP);
	out[1] = out[2] = out[3] = 0;
}

uint8_t iser_cm_word_flags(const void *priv, size_t len)
{
	/* reserved bits (29..0) are ignored on receive */
	if (!priv || len < ISER_CM_WORD_LEN)
		return 0;
	return ((const uint8_t *)priv)[0] &
	       (ISER_CM_ZBVA_NOT_SUP | ISER_CM_SEND_INV_NOT_SUP);
}

uint8_t iser_cm_rep_flags(uint8_t req_flags, bool can_send_inv)
{
	/* libidm never uses zero-based addressing (Annex A12.6) */
	uint8_t f = ISER_CM_ZBVA_NOT_USED;

	if ((req_flags & ISER_CM_SEND_INV_NOT_SUP) || !can_send_inv)
		f |= ISER_CM_SEND_INV_NOT_USED;
	return f;
}

void iser_cm_negotiate(uint8_t req_flags, uint8_t rep_flags,
		       struct iser_cm_nego *out)
{
	/* Send with Invalidate only when both sides allow it (A12.5). */
	out->send_inv = !(req_flags & ISER_CM_SEND_INV_NOT_SUP) &&
			!(rep_flags & ISER_CM_SEND_INV_NOT_USED);
}
