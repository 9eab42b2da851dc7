/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The iSER provider's checks of what a peer Sends (providers/iser:
 * iser_rx_check.c, iser_wire.c): the iSER header (RFC 7145 section 9:
 * opcode, WSV/RSV flags, write and read STags and VAs), Hello and
 * HelloReply, the iSCSI PDU after the header (its AHS and data lengths
 * against the Send, the opcode against the sender and the phase), and the
 * decisions the receive path takes on them: the target's HelloReply to a
 * Hello, and for a SCSI Command and unsolicited Data-Out the shared
 * unsolicited-data rules the iSER target applies (idm_prov_unsol_*), with
 * the data staged and taken back as a Get_Data would. No verbs object is
 * involved: iser_recv.c hands the same (bytes, length, buffer size) to
 * iser_rx_check() and acts on its result.
 *
 * Input: a configuration byte, a parameter byte, then Sends, each as a
 * 2-byte big-endian length and that many bytes (the last one takes what
 * is left). Each Send is copied into a buffer of exactly its length, so
 * ASan sees any read past the message.
 *   config bit 0     role: 1 target (receives from an initiator), 0 initiator
 *          bit 1     login phase (else full feature phase)
 *          bits 2-3  our iSER-ORD: 0, 1, 4 or 16
 *          bits 4-6  receive buffer size beyond the Send (x 64 bytes)
 *          bit 7     receive buffer one byte smaller than the Send
 *                    (what a broken RCaP would report: must be refused)
 *   params bit 0     ImmediateData, bit 1 InitialR2T,
 *          bits 2-5  FirstBurstLength 512 << n (capped at 16 MiB - 1)
 */
#include "fuzz.h"

#include "iser_rx_check.h"
#include "iser_wire.h"

#include <libidm/iscsi.h>
#include <libidm/provider.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SENDS 64

/* A broken invariant is a finding: libFuzzer keeps the input. */
#define CHECK(c)                                                                   \
	do {                                                                       \
		if (!(c)) {                                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
			abort();                                                   \
		}                                                                  \
	} while (0)

static const uint32_t ords[4] = { 0, 1, 4, 16 };

/* A read of every byte the parser hands out: ASan reports one outside
 * the message. */
static unsigned touch(const uint8_t *p, size_t n)
{
	unsigned s = 0;

	for (size_t i = 0; i < n; i++)
		s += p[i];
	return s;
}

static void hello_checks(const struct iser_rx *rx, bool target, uint32_t ord, uint32_t len)
{
	struct iser_hello back, rep;
	uint8_t wire[ISER_HDR_LEN];

	CHECK(len == ISER_HDR_LEN);
	CHECK(rx->hello.opcode == ISER_OP_HELLO || rx->hello.opcode == ISER_OP_HELLO_REPLY);
	/* what we decoded encodes to the same fields */
	iser_hello_encode(wire, &rx->hello);
	CHECK(iser_hello_decode(wire, sizeof(wire), &back) == 0);
	CHECK(memcmp(&back, &rx->hello, sizeof(back)) == 0);
	if (!target || rx->hello.opcode != ISER_OP_HELLO)
		return;
	/* the target's answer (iser_recv.c) */
	iser_hello_answer(&rx->hello, ord, &rep);
	CHECK(rep.opcode == ISER_OP_HELLO_REPLY);
	CHECK(rep.ird_ord <= ord && rep.ird_ord <= rx->hello.ird_ord);
	CHECK(rep.reject == (rx->hello.min_ver > ISER_VERSION ||
			     rx->hello.max_ver < ISER_VERSION ||
			     (rx->hello.ird_ord > 0 && ord == 0)));
	iser_hello_encode(wire, &rep);
	CHECK(iser_hello_decode(wire, sizeof(wire), &back) == 0);
	CHECK(back.opcode == ISER_OP_HELLO_REPLY && back.reject == rep.reject &&
	      back.ird_ord == rep.ird_ord && back.max_ver == ISER_VERSION &&
	      back.min_ver == ISER_VERSION);
}

struct tgt_state {
	struct idm_conn_params p;
	struct idm_prov_unsol u; /* of the last write command */
	bool have_cmd;
	uint32_t itt;
	uint8_t *buf; /* its "Get_Data buffer": EDTL bytes, up to 64 KiB */
	uint32_t buflen;
};

static void tgt_scsi_cmd(struct tgt_state *s, const struct idm_pdu *pdu)
{
	const uint8_t *bhs = pdu->bhs;
	uint32_t edtl = idm_iscsi_get32(bhs + IDM_ISCSI_CMD_EDTL);
	bool write = bhs[1] & IDM_ISCSI_CMD_WRITE;
	const char *why = NULL;
	int r;

	idm_prov_unsol_free(&s->u);
	free(s->buf);
	s->buf = NULL;
	s->have_cmd = false;
	r = idm_prov_unsol_cmd(&s->u, &s->p, write, edtl, pdu->data_len,
			       bhs[1] & IDM_ISCSI_FLAG_FINAL, &why);
	CHECK(why != NULL);
	if (r < 0) {
		CHECK(r == -EPROTO && why[0]);
		return;
	}
	CHECK(s->u.imm_len == (write ? pdu->data_len : 0));
	CHECK(s->u.end <= edtl || !write);
	CHECK(s->u.imm_len <= s->u.end);
	if (!write)
		return;
	s->have_cmd = true;
	s->itt = idm_iscsi_bhs_itt(bhs);
	/* the caller's Get_Data during the notify takes the immediate data
	 * in place, up to what its buffer holds */
	s->buflen = edtl < 65536 ? edtl : 65536;
	s->buf = malloc(s->buflen ? s->buflen : 1);
	CHECK(s->buf != NULL);
	s->u.imm = pdu->data;
	if (pdu->data_len && (bhs[2] & 1))
		CHECK(idm_prov_unsol_take(&s->u, 0, s->buflen, s->buf) <= s->buflen);
	/* the notify returned: what it did not take is staged */
	CHECK(idm_prov_unsol_cmd_done(&s->u) == 0);
	CHECK(s->u.imm == NULL);
}

static void tgt_data_out(struct tgt_state *s, const struct idm_pdu *pdu)
{
	const uint8_t *bhs = pdu->bhs;
	uint32_t off = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET);
	uint32_t datasn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_DATASN);
	char why[160];
	uint8_t *dst;

	/* only unsolicited Data-Out travels in Sends on iSER */
	if (!s->have_cmd || idm_iscsi_bhs_itt(bhs) != s->itt ||
	    idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT) != IDM_ISCSI_RESERVED_TAG)
		return;
	why[0] = '\0';
	if (idm_prov_unsol_dataout(&s->u, off, pdu->data_len, datasn, why, sizeof(why)) < 0) {
		CHECK(why[0]);
		s->have_cmd = false;
		return;
	}
	CHECK((uint64_t)off + pdu->data_len <= s->u.end);
	if (pdu->data_len) {
		dst = idm_prov_unsol_stage(&s->u, off);
		CHECK(dst != NULL);
		memcpy(dst, pdu->data, pdu->data_len);
	}
	if (idm_prov_unsol_arrived(&s->u, pdu->data_len, bhs[1] & IDM_ISCSI_FLAG_FINAL,
				   why, sizeof(why)) < 0) {
		CHECK(why[0]);
		s->have_cmd = false;
		return;
	}
	/* a Get_Data now takes what arrived */
	CHECK(idm_prov_unsol_take(&s->u, 0, s->buflen, s->buf) <= s->buflen);
}

static void pdu_checks(const struct iser_rx *rx, const uint8_t *msg, uint32_t len,
		       bool target, bool login, struct tgt_state *s)
{
	const struct idm_pdu *pdu = &rx->pdu;
	const uint8_t *end = msg + len;
	uint8_t op = idm_iscsi_bhs_opcode(pdu->bhs);
	uint8_t wire[ISER_HDR_LEN + IDM_ISCSI_BHS_LEN] = { 0 };
	struct iser_hdr back;

	CHECK(pdu->bhs == msg + ISER_HDR_LEN);
	CHECK(pdu->bhs + IDM_ISCSI_BHS_LEN <= end);
	CHECK(!pdu->ahs_len || (pdu->ahs && pdu->ahs + pdu->ahs_len <= end));
	CHECK(!pdu->data_len || (pdu->data && pdu->data + pdu->data_len <= end));
	CHECK(pdu->task == NULL);
	touch(pdu->bhs, IDM_ISCSI_BHS_LEN);
	if (pdu->ahs_len)
		touch(pdu->ahs, pdu->ahs_len);
	if (pdu->data_len)
		touch(pdu->data, pdu->data_len);
	/* never a PDU the sender may not send in this phase, unless it is
	 * flagged for the caller to Reject (full feature phase only) */
	if (rx->unexpected) {
		CHECK(!login);
		CHECK(idm_prov_opcode_check(target ? IDM_ROLE_INITIATOR : IDM_ROLE_TARGET,
					    op, IDM_CONN_PHASE_FFP,
					    IDM_PROV_OP_DATA) < 0);
	} else {
		CHECK(idm_prov_opcode_check(target ? IDM_ROLE_INITIATOR : IDM_ROLE_TARGET,
					    op, login ? IDM_CONN_PHASE_LOGIN
						      : IDM_CONN_PHASE_FFP,
					    IDM_PROV_OP_DATA) == 0);
		CHECK(op != IDM_ISCSI_OP_DATA_IN && op != IDM_ISCSI_OP_R2T);
	}
	/* the header's valid halves survive a round trip; invalid halves
	 * read as zero (RFC 7145 9.2) */
	CHECK(rx->hdr.opcode == ISER_OP_CTRL);
	CHECK(rx->hdr.wsv || (!rx->hdr.write_stag && !rx->hdr.write_va));
	CHECK(rx->hdr.rsv || (!rx->hdr.read_stag && !rx->hdr.read_va));
	iser_hdr_encode(wire, &rx->hdr);
	CHECK(iser_hdr_decode(wire, sizeof(wire), &back) == 0);
	CHECK(memcmp(&back, &rx->hdr, sizeof(back)) == 0);
	if (!target || login)
		return;
	if (op == IDM_ISCSI_OP_SCSI_CMD)
		tgt_scsi_cmd(s, pdu);
	else if (op == IDM_ISCSI_OP_DATA_OUT)
		tgt_data_out(s, pdu);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tgt_state s = { 0 };
	bool target, login, small;
	uint32_t ord, slack;
	size_t off = 2;

	if (size < 2)
		return 0;
	target = data[0] & 1;
	login = data[0] & 2;
	ord = ords[(data[0] >> 2) & 3];
	slack = ((data[0] >> 4) & 7) * 64u;
	small = data[0] & 0x80;
	idm_prov_params_default(&s.p);
	s.p.immediate_data = data[1] & 1;
	s.p.initial_r2t = data[1] & 2;
	s.p.first_burst_length = 512u << ((data[1] >> 2) & 15);
	if (s.p.first_burst_length > 0xffffff)
		s.p.first_burst_length = 0xffffff;

	for (int n = 0; n < MAX_SENDS && off < size; n++) {
		struct iser_rx rx;
		char why[160];
		uint32_t len, bufsize;
		uint8_t *msg;
		int r;

		if (size - off >= 2 && n + 1 < MAX_SENDS) {
			len = (uint32_t)data[off] << 8 | data[off + 1];
			off += 2;
			if (len > size - off)
				len = (uint32_t)(size - off);
		} else {
			len = (uint32_t)(size - off);
		}
		msg = malloc(len ? len : 1);
		CHECK(msg != NULL);
		memcpy(msg, data + off, len);
		off += len;
		bufsize = small && len ? len - 1 : len + slack;

		why[0] = '\0';
		r = iser_rx_check(msg, len, bufsize, target ? IDM_ROLE_TARGET : IDM_ROLE_INITIATOR,
				  login, &rx, why, sizeof(why));
		if (r < 0) {
			CHECK(r == -EPROTO && why[0]);
			/* refused for its opcode: the PDU view (counted in the
			 * statistics) is still inside the Send */
			if (rx.pdu.bhs)
				CHECK(rx.pdu.bhs == msg + ISER_HDR_LEN &&
				      (uint64_t)ISER_HDR_LEN + IDM_ISCSI_BHS_LEN + rx.pdu.ahs_len +
						      rx.pdu.data_len <= len);
		} else {
			/* a Send longer than its buffer never passes */
			CHECK(len <= bufsize);
			if (rx.is_hello) {
				hello_checks(&rx, target, ord, len);
			} else {
				CHECK(len >= ISER_HDR_LEN + IDM_ISCSI_BHS_LEN);
				pdu_checks(&rx, msg, len, target, login, &s);
			}
		}
		/* the CM private data word reads the same bytes */
		(void)iser_cm_word_flags(msg, len);
		free(msg);
	}
	idm_prov_unsol_free(&s.u);
	free(s.buf);
	return 0;
}
