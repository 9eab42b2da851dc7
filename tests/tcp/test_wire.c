/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The PDUs libidm generates, checked on the wire by a raw peer with its
 * own CRC32C (every received digest is verified):
 *  - target Put_Data: Data-In segments <= the initiator's
 *    MaxRecvDataSegmentLength, contiguous Buffer Offsets, DataSN from 0,
 *    sequences (F bit) <= MaxBurstLength and F at each MaxBurstLength
 *    boundary and at the end, S only on the last PDU, bytes right;
 *  - target Get_Data: R2Ts in order, R2TSN from 0, each <= MaxBurstLength,
 *    never more than MaxOutstandingR2T outstanding, first one after the
 *    unsolicited data;
 *  - initiator writes: immediate data and unsolicited Data-Out exactly as
 *    ImmediateData / InitialR2T / FirstBurstLength allow, F bits, R2Ts
 *    answered in order with the R2T's TTT, DataSN restarting per R2T,
 *    segments <= the target's MaxRecvDataSegmentLength.
 */
#include "raw_peer.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ITT 0x2000
#define N(a) (sizeof(a) / sizeof((a)[0]))

static uint32_t min3(uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t m = a < b ? a : b;

	return m < c ? m : c;
}

static void recv_ok(struct h *h, struct h_raw *r, uint8_t bhs[48],
		    uint8_t *data, size_t cap, uint32_t *dlen, const char *what)
{
	int rc = h_raw_recv_pdu(h, r, bhs, data, cap, dlen, 3000);

	ck_assert_msg(rc == 0, "%s: %s", what,
		      rc == -EBADMSG ? "digest does not match our CRC32C"
				     : rc == -ETIMEDOUT ? "timed out"
							: "connection closed");
}

/* ---- Put_Data ---------------------------------------------------------- */

struct din_case {
	uint32_t mrdsl, mbl, len;
	bool hd, dd;
	enum h_status_mode sm;
	bool split;
};

static void check_datain(const struct din_case *c)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48], *buf, *disk;
	uint32_t off = 0, sn = 0, seq = 0, dlen;
	bool done = false, s_seen = false;

	h_params_default(&p);
	p.ini_mrdsl = c->mrdsl;
	p.max_burst = c->mbl;
	p.first_burst = c->mbl < 65536 ? c->mbl : 65536;
	p.header_digest = c->hd;
	p.data_digest = c->dd;
	h_raw_evil_initiator(&h, &r, &p, c->len);
	h.status_mode = c->sm;
	h.split_put = c->split;
	disk = h_disk_slot(&h, 0);
	h_pattern(disk, c->len, 99);
	buf = malloc(c->mrdsl);
	ck_assert_ptr_nonnull(buf);
	h_raw_send_cmd(&h, &r, false, ITT, c->len);
	while (!done) {
		uint8_t f;
		uint32_t end;

		recv_ok(&h, &r, bhs, buf, c->mrdsl, &dlen, "Data-In");
		if (idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_SCSI_RSP) {
			ck_assert_msg(off == c->len, "SCSI Response after %u of %u bytes",
				      off, c->len);
			ck_assert_msg(!s_seen, "status twice");
			ck_assert_uint_eq(bhs[3], 0);
			break;
		}
		ck_assert_msg(idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_DATA_IN,
			      "opcode 0x%02x during Put_Data", idm_iscsi_bhs_opcode(bhs));
		f = bhs[1];
		ck_assert_uint_eq(idm_iscsi_bhs_itt(bhs), ITT);
		ck_assert_uint_eq(idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT), IDM_ISCSI_RESERVED_TAG);
		ck_assert_msg(dlen > 0 && dlen <= c->mrdsl,
			      "Data-In of %u bytes, MaxRecvDataSegmentLength %u",
			      dlen, c->mrdsl);
		ck_assert_msg(idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET) == off,
			      "Buffer Offset %u, expected %u",
			      idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET), off);
		ck_assert_msg(idm_iscsi_get32(bhs + IDM_ISCSI_BHS_DATASN) == sn,
			      "DataSN %u, expected %u",
			      idm_iscsi_get32(bhs + IDM_ISCSI_BHS_DATASN), sn);
		ck_assert_msg(!memcmp(buf, disk + off, dlen),
			      "Data-In bytes at %u differ from the buffer", off);
		end = off + dlen;
		ck_assert(end <= c->len);
		seq += dlen;
		ck_assert_msg(seq <= c->mbl, "sequence of %u bytes > MaxBurstLength %u",
			      seq, c->mbl);
		if (!c->split) {
			/* documented: F at every MaxBurstLength boundary */
			bool want = end == c->len || end % c->mbl == 0;

			ck_assert_msg(!!(f & IDM_ISCSI_FLAG_FINAL) == want,
				      "F=%d at %u (MBL %u, len %u)",
				      !!(f & IDM_ISCSI_FLAG_FINAL), end, c->mbl, c->len);
		}
		if (end == c->len)
			ck_assert_msg(f & IDM_ISCSI_FLAG_FINAL, "no F on the last Data-In");
		if (f & IDM_ISCSI_FLAG_FINAL)
			seq = 0;
		if (f & IDM_ISCSI_DATAIN_STATUS) {
			ck_assert_msg(end == c->len, "S bit before the end (%u)", end);
			ck_assert_uint_eq(bhs[3], 0);
			s_seen = done = true;
		}
		off = end;
		sn++;
	}
	ck_assert_msg(h_raw_recv_pdu(&h, &r, bhs, NULL, 0, NULL, 50) == -ETIMEDOUT,
		      "a PDU after the status (opcode 0x%02x)", idm_iscsi_bhs_opcode(bhs));
	ck_assert_int_eq(h.t.terminate_count, 0);
	ck_assert_int_eq(h_check_guards(&h), 0);
	free(buf);
	h_raw_end(&h, &r);
}

START_TEST(put_data_segmentation)
{
	static const struct din_case cases[] = {
		{ 512, 512, 4097, false, false, H_STATUS_IN_DATA, false },
		{ 512, 4096, 65537, true, true, H_STATUS_SEPARATE, false },
		{ 8192, 4096, 65536, false, true, H_STATUS_IN_DATA, false },
		{ 8192, 20000, 100000, true, false, H_STATUS_IN_DATA, false },
		{ 65536, 262144, 1048577, true, true, H_STATUS_SEPARATE, false },
		{ 262144, 65536, 1000000, false, false, H_STATUS_IN_DATA, false },
		{ 3000, 7000, 50001, true, true, H_STATUS_IN_DATA, true },
		{ 8192, 16384, 100001, false, false, H_STATUS_SEPARATE, true },
		{ 3001, 7001, 50001, true, true, H_STATUS_IN_DATA, false },
		{ 515, 513, 20000, false, true, H_STATUS_SEPARATE, false },
	};

	for (size_t i = 0; i < N(cases); i++)
		check_datain(&cases[i]);
	h_log("put_data_segmentation: %zu cases: Data-In <= MRDSL, offsets, DataSN, F per MaxBurstLength, S last, digests and bytes ok",
	      N(cases));
}
END_TEST

/* ---- Get_Data: R2T generation ---------------------------------------------- */

struct wr_case {
	bool imm, ir2t;
	uint32_t fbl, mbl, mrdsl, max_r2t, len;
	bool hd, dd;
};

struct r2t {
	uint32_t ttt, off, len;
};

/* Raw initiator: send len bytes of src at [off, off+len) as Data-Out
 * PDUs of at most mrdsl, DataSN from 0, F on the last. */
static void send_dataout(struct h *h, struct h_raw *r, const uint8_t *src,
			 uint32_t ttt, uint32_t off, uint32_t len,
			 uint32_t mrdsl)
{
	uint8_t bhs[48];
	uint32_t sn = 0;

	while (len) {
		uint32_t n = len < mrdsl ? len : mrdsl;

		h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, ITT, ttt, sn++, off, n == len);
		ck_assert_int_eq(h_raw_send_pdu(h, r, bhs, NULL, 0, src + off, n, 0), 0);
		off += n;
		len -= n;
	}
}

static void check_r2t(const struct wr_case *c)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	struct r2t q[64];
	size_t qn = 0;
	uint8_t bhs[48], *src;
	uint32_t imm, unsol, next, r2tsn = 0, dlen, answered;
	int rounds = 0;

	h_params_default(&p);
	p.immediate_data = c->imm;
	p.initial_r2t = c->ir2t;
	p.first_burst = c->fbl;
	p.max_burst = c->mbl;
	p.tgt_mrdsl = c->mrdsl;
	p.max_r2t = c->max_r2t;
	p.header_digest = c->hd;
	p.data_digest = c->dd;
	h_raw_evil_initiator(&h, &r, &p, c->len);
	h_disk_slot_clear(&h, 0);
	src = malloc(c->len);
	ck_assert_ptr_nonnull(src);
	h_pattern(src, c->len, 77);

	imm = c->imm ? min3(c->len, c->fbl, c->mrdsl) : 0;
	unsol = c->ir2t ? imm : min3(c->len, c->fbl, 0xffffffffu);
	h_build_scsi_cmd(bhs, true, ITT, r.cmdsn++, r.statsn + 1, c->len, 0,
			 unsol == imm);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, src, imm, 0), 0);
	if (unsol > imm)
		send_dataout(&h, &r, src, IDM_ISCSI_RESERVED_TAG, imm, unsol - imm,
			     c->mrdsl);
	next = unsol;
	answered = unsol;
	while (answered < c->len) {
		/* take every R2T the target sends now */
		for (;;) {
			int rc = h_raw_recv_pdu(&h, &r, bhs, NULL, 0, &dlen,
						qn ? 20 : 3000);
			uint32_t off, len;

			if (rc == -ETIMEDOUT && qn)
				break;
			ck_assert_msg(rc == 0, "waiting for an R2T (%u of %u answered): %d",
				      answered, c->len, rc);
			ck_assert_msg(idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_R2T,
				      "opcode 0x%02x while R2Ts expected",
				      idm_iscsi_bhs_opcode(bhs));
			off = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET);
			len = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_DESIRED_LEN);
			ck_assert_uint_eq(idm_iscsi_bhs_itt(bhs), ITT);
			ck_assert_uint_ne(idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT),
					  IDM_ISCSI_RESERVED_TAG);
			ck_assert_msg(idm_iscsi_get32(bhs + IDM_ISCSI_BHS_DATASN) == r2tsn,
				      "R2TSN %u, expected %u",
				      idm_iscsi_get32(bhs + IDM_ISCSI_BHS_DATASN), r2tsn);
			ck_assert_msg(off == next, "R2T offset %u, expected %u", off,
				      next);
			ck_assert_msg(len > 0 && len <= c->mbl && off + len <= c->len,
				      "R2T [%u, +%u): MBL %u, len %u", off, len,
				      c->mbl, c->len);
			ck_assert_msg(qn < c->max_r2t,
				      "more than MaxOutstandingR2T=%u R2Ts outstanding",
				      c->max_r2t);
			q[qn++] = (struct r2t){ idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT), off, len };
			r2tsn++;
			next += len;
			if (next == c->len && qn == c->max_r2t)
				break;
		}
		/* answer the oldest */
		send_dataout(&h, &r, src, q[0].ttt, q[0].off, q[0].len, c->mrdsl);
		answered += q[0].len;
		memmove(q, q + 1, --qn * sizeof(q[0]));
		rounds++;
	}
	while (qn) {
		send_dataout(&h, &r, src, q[0].ttt, q[0].off, q[0].len, c->mrdsl);
		memmove(q, q + 1, --qn * sizeof(q[0]));
	}
	recv_ok(&h, &r, bhs, NULL, 0, &dlen, "SCSI Response");
	ck_assert_msg(idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_SCSI_RSP && bhs[3] == 0,
		      "opcode 0x%02x status %u", idm_iscsi_bhs_opcode(bhs), bhs[3]);
	ck_assert_msg(!memcmp(h_disk_slot(&h, 0), src, c->len),
		      "the written data differs");
	ck_assert_int_eq(h_check_guards(&h), 0);
	ck_assert_int_eq(h.t.terminate_count, 0);
	free(src);
	h_raw_end(&h, &r);
}

START_TEST(get_data_r2ts)
{
	static const struct wr_case cases[] = {
		/* imm ir2t  fbl    mbl    mrdsl  r2t len */
		{ false, true, 512, 512, 512, 1, 5000, false, false },
		{ true, true, 4096, 8192, 2048, 4, 100000, true, true },
		{ true, false, 16384, 32768, 8192, 2, 100001, false, true },
		{ false, false, 65536, 262144, 65536, 3, 1048576, true, false },
		{ true, false, 65536, 65536, 262144, 8, 300000, false, false },
		{ true, true, 65536, 65536, 8192, 1, 8192, false, false },
		{ true, false, 4096, 4096, 8192, 2, 4096, true, true },
		{ true, false, 1001, 7001, 2999, 3, 60001, true, true },
		{ false, false, 513, 515, 517, 2, 9999, false, false },
	};

	for (size_t i = 0; i < N(cases); i++)
		check_r2t(&cases[i]);
	h_log("get_data_r2ts: %zu cases: R2T order, R2TSN, <= MaxBurstLength, <= MaxOutstandingR2T, after unsolicited data; data ok",
	      N(cases));
}
END_TEST

/* ---- initiator writes ---------------------------------------------------- */

/* Receive Data-Out for [off, off+len) with TTT ttt: segments <= mrdsl,
 * DataSN from 0, F only on the last; bytes equal to src. */
static void expect_dataout(struct h *h, struct h_raw *r, const uint8_t *src,
			   uint32_t ttt, uint32_t off, uint32_t len,
			   uint32_t mrdsl, uint8_t *buf)
{
	uint8_t bhs[48];
	uint32_t sn = 0, dlen, end = off + len;

	while (off < end) {
		recv_ok(h, r, bhs, buf, mrdsl, &dlen, "Data-Out");
		ck_assert_msg(idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_DATA_OUT,
			      "opcode 0x%02x, Data-Out expected", idm_iscsi_bhs_opcode(bhs));
		ck_assert_msg(idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT) == ttt,
			      "Data-Out TTT 0x%x, expected 0x%x (R2Ts answered in order?)",
			      idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT), ttt);
		ck_assert_msg(idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET) == off,
			      "Data-Out offset %u, expected %u",
			      idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET), off);
		ck_assert_msg(idm_iscsi_get32(bhs + IDM_ISCSI_BHS_DATASN) == sn,
			      "Data-Out DataSN %u, expected %u",
			      idm_iscsi_get32(bhs + IDM_ISCSI_BHS_DATASN), sn);
		ck_assert_msg(dlen > 0 && dlen <= mrdsl && off + dlen <= end,
			      "Data-Out of %u at %u (MRDSL %u, end %u)", dlen, off,
			      mrdsl, end);
		ck_assert_msg(!!(bhs[1] & IDM_ISCSI_FLAG_FINAL) == (off + dlen == end),
			      "Data-Out F bit %d at %u (end %u)",
			      !!(bhs[1] & IDM_ISCSI_FLAG_FINAL), off + dlen, end);
		ck_assert_msg(!memcmp(buf, src + off, dlen), "Data-Out bytes at %u differ",
			      off);
		off += dlen;
		sn++;
	}
}

static bool slot0_done(struct h *h)
{
	return h->slots[0].done || h->i.terminate_count;
}

static void check_initiator_write(const struct wr_case *c)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48], *buf, *src;
	uint32_t imm, unsol, next, dlen, ttt = 0x100, r2tsn = 0;
	struct r2t q[64];
	size_t qn = 0;

	h_params_default(&p);
	p.immediate_data = c->imm;
	p.initial_r2t = c->ir2t;
	p.first_burst = c->fbl;
	p.max_burst = c->mbl;
	p.tgt_mrdsl = c->mrdsl;
	p.max_r2t = c->max_r2t;
	p.header_digest = c->hd;
	p.data_digest = c->dd;
	h_raw_evil_target(&h, &r, &p, c->len);
	h_slot_prepare(&h, 0, true, c->len);
	src = h.slots[0].mem + H_GUARD;
	buf = malloc(c->mrdsl > 65536 ? c->mrdsl : 65536);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(h_slot_start(&h, 0, 0), 0);

	imm = c->imm ? min3(c->len, c->fbl, c->mrdsl) : 0;
	unsol = c->ir2t ? imm : min3(c->len, c->fbl, 0xffffffffu);
	recv_ok(&h, &r, bhs, buf, c->mrdsl, &dlen, "SCSI Command");
	ck_assert_uint_eq(idm_iscsi_bhs_opcode(bhs), IDM_ISCSI_OP_SCSI_CMD);
	ck_assert_uint_eq(idm_iscsi_get32(bhs + IDM_ISCSI_CMD_EDTL), c->len);
	ck_assert_msg(bhs[1] & IDM_ISCSI_CMD_WRITE, "W bit missing");
	ck_assert_msg(dlen == imm, "immediate data %u, expected %u", dlen, imm);
	ck_assert_msg(!memcmp(buf, src, imm), "immediate data bytes differ");
	ck_assert_msg(!!(bhs[1] & IDM_ISCSI_FLAG_FINAL) == (unsol == imm),
		      "command F bit %d with %u unsolicited after %u immediate",
		      !!(bhs[1] & IDM_ISCSI_FLAG_FINAL), unsol - imm, imm);
	if (unsol > imm)
		expect_dataout(&h, &r, src, IDM_ISCSI_RESERVED_TAG, imm, unsol - imm,
			       c->mrdsl, buf);
	ck_assert_msg(h_raw_recv_pdu(&h, &r, bhs, NULL, 0, NULL, 30) == -ETIMEDOUT,
		      "more than FirstBurstLength of unsolicited data");
	/* solicit the rest, MaxOutstandingR2T at a time */
	next = unsol;
	while (next < c->len || qn) {
		while (next < c->len && qn < c->max_r2t) {
			uint32_t len = c->len - next < c->mbl ? c->len - next : c->mbl;

			memset(bhs, 0, sizeof(bhs));
			bhs[0] = IDM_ISCSI_OP_R2T;
			bhs[1] = IDM_ISCSI_FLAG_FINAL;
			idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, h.slots[0].itt);
			idm_iscsi_put32(bhs + IDM_ISCSI_BHS_TTT, ttt);
			idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, r.statsn);
			idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, r.cmdsn + 1);
			idm_iscsi_put32(bhs + IDM_ISCSI_BHS_MAX_CMDSN, r.cmdsn + 64);
			idm_iscsi_put32(bhs + IDM_ISCSI_BHS_DATASN, r2tsn++);
			idm_iscsi_put32(bhs + IDM_ISCSI_BHS_BUF_OFFSET, next);
			idm_iscsi_put32(bhs + IDM_ISCSI_BHS_DESIRED_LEN, len);
			ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, NULL, 0, 0), 0);
			q[qn++] = (struct r2t){ ttt++, next, len };
			next += len;
		}
		/* Implementer's Guide 3.2: answered in order */
		expect_dataout(&h, &r, src, q[0].ttt, q[0].off, q[0].len, c->mrdsl,
			       buf);
		memmove(q, q + 1, --qn * sizeof(q[0]));
	}
	memset(bhs, 0, sizeof(bhs));
	bhs[0] = IDM_ISCSI_OP_SCSI_RSP;
	bhs[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, h.slots[0].itt);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, r.statsn++);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, r.cmdsn + 1);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_MAX_CMDSN, r.cmdsn + 64);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, NULL, 0, 0), 0);
	ck_assert_int_eq(h_progress_until(&h, slot0_done, 3000), 0);
	ck_assert_msg(h.slots[0].done && h.slots[0].scsi_status == 0,
		      "write not completed at the initiator");
	ck_assert_int_eq(h.i.terminate_count, 0);
	ck_assert_int_eq(h_check_guards(&h), 0);
	free(buf);
	h_raw_end(&h, &r);
}

START_TEST(initiator_write_pdus)
{
	static const struct wr_case cases[] = {
		{ false, true, 512, 512, 512, 1, 5000, false, false },
		{ true, true, 4096, 8192, 2048, 4, 100000, true, true },
		{ true, false, 16384, 32768, 8192, 2, 100001, false, true },
		{ false, false, 65536, 262144, 65536, 3, 1048576, true, false },
		{ true, false, 65536, 65536, 262144, 8, 300000, false, false },
		{ true, true, 65536, 65536, 8192, 1, 8192, false, false },
		{ true, false, 4096, 4096, 8192, 2, 4096, true, true },
		{ true, false, 8192, 16384, 4096, 2, 6000, false, false },
		{ true, false, 1001, 7001, 2999, 3, 60001, true, true },
		{ false, false, 513, 515, 517, 2, 9999, false, false },
	};

	for (size_t i = 0; i < N(cases); i++)
		check_initiator_write(&cases[i]);
	h_log("initiator_write_pdus: %zu cases: immediate/unsolicited per ImmediateData, InitialR2T, FirstBurstLength; R2Ts answered in order; digests and bytes ok",
	      N(cases));
}
END_TEST

/* ---- DataACK (ErrorRecoveryLevel >= 1) ------------------------------- */

static idm_task *ack_task;

/* Put_Data of the whole read with IDM_PUT_ACK and status in the last
 * Data-In; the test ends the task itself once the DataACK came. */
static bool ack_hook(struct h *h, idm_task *task, const uint8_t *bhs)
{
	uint8_t tmpl[48] = { 0 };
	uint32_t len = idm_iscsi_get32(bhs + IDM_ISCSI_CMD_EDTL);

	ack_task = task;
	idm_task_set_arg(task, NULL);
	tmpl[0] = IDM_ISCSI_OP_DATA_IN;
	tmpl[1] = IDM_ISCSI_FLAG_FINAL | IDM_ISCSI_DATAIN_STATUS;
	idm_iscsi_put32(tmpl + IDM_ISCSI_BHS_ITT, idm_iscsi_bhs_itt(bhs));
	idm_iscsi_put32(tmpl + IDM_ISCSI_BHS_CMDSN, h->t_statsn++);
	ck_assert_int_eq(idm_put_data(task, tmpl, h->disk_buf,
				      h_disk_slot_off(h, 0), 0, len, IDM_PUT_ACK), 0);
	return true;
}

START_TEST(data_ack)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48], snack[48] = { 0 };
	uint32_t dlen, sn = 0, ttt = 0, len = 20000;
	bool last = false;

	h_params_default(&p);
	p.erl = 1;
	p.ini_mrdsl = 4096;
	h_raw_evil_initiator(&h, &r, &p, len);
	h.cmd_hook = ack_hook;
	h_pattern(h_disk_slot(&h, 0), len, 3);
	h_raw_send_cmd(&h, &r, false, ITT, len);
	while (!last) {
		recv_ok(&h, &r, bhs, NULL, 0, &dlen, "Data-In");
		ck_assert_uint_eq(idm_iscsi_bhs_opcode(bhs), IDM_ISCSI_OP_DATA_IN);
		last = bhs[1] & IDM_ISCSI_DATAIN_STATUS;
		ck_assert_msg(!!(bhs[1] & IDM_ISCSI_DATAIN_ACK) == last,
			      "A bit %d on DataSN %u (only the last should ask)",
			      !!(bhs[1] & IDM_ISCSI_DATAIN_ACK), sn);
		if (last) {
			ttt = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT);
			/* RFC 7143 11.7.4: A=1 needs a valid TTT for the SNACK */
			ck_assert_msg(ttt != IDM_ISCSI_RESERVED_TAG,
				      "Data-In with A=1 but TTT 0xffffffff");
		}
		sn++;
	}
	ck_assert_int_eq(h.t.ack_count, 0);
	/* DataACK SNACK: ITT reserved, TTT from the Data-In, BegRun = the
	 * next DataSN expected */
	snack[0] = IDM_ISCSI_OP_SNACK_REQ;
	snack[1] = IDM_ISCSI_FLAG_FINAL | IDM_ISCSI_SNACK_DATA_ACK;
	idm_iscsi_put32(snack + IDM_ISCSI_BHS_ITT, IDM_ISCSI_RESERVED_TAG);
	idm_iscsi_put32(snack + IDM_ISCSI_BHS_TTT, ttt);
	idm_iscsi_put32(snack + IDM_ISCSI_BHS_EXP_STATSN, r.statsn + 1);
	idm_iscsi_put32(snack + IDM_ISCSI_BHS_BUF_OFFSET, sn);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, snack, NULL, 0, NULL, 0, 0), 0);
	for (int i = 0; i < 100 && !h.t.ack_count && !h.t.terminate_count; i++)
		(void)idm_ctx_progress(h.ctx, 10);
	ck_assert_msg(h.t.ack_count == 1 && h.t.ack_datasn == sn,
		      "data_ack_notify: %d calls, datasn %u (expected 1, %u); %s",
		      h.t.ack_count, h.t.ack_datasn, sn, h.t.error);
	idm_deallocate_task_resources(ack_task);
	h.cmd_hook = NULL;
	h_log("data_ack: A bit and a valid TTT on the last of %u Data-In only; the DataACK SNACK raised data_ack_notify(%u) once",
	      sn, h.t.ack_datasn);
	h_raw_end(&h, &r);
}
END_TEST

/* ---- control PDUs with data and AHS ------------------------------------ */

/* NOP-Out pings with data of every padding class, echoed by the harness
 * target as NOP-In data through Send_Control: padding and digests of
 * control PDUs both ways, and the data handed over intact. */
START_TEST(control_data_and_padding)
{
	static const uint32_t lens[] = { 1, 2, 3, 4, 5, 7, 511, 4096, 8191, 8192 };

	for (int dg = 0; dg < 2; dg++) {
		struct h h;
		struct h_raw r;
		struct h_params p;
		uint8_t bhs[48], out[8192], in[8192];
		uint8_t ahs[8] = { 0x00, 0x05, 0x3f, 0x00, 'a', 'h', 's', '!' };
		uint32_t dlen;

		h_params_default(&p);
		p.tgt_mrdsl = 8192;
		p.header_digest = p.data_digest = dg;
		h_raw_evil_initiator(&h, &r, &p, 8192);
		for (size_t i = 0; i < N(lens); i++) {
			h_pattern(out, lens[i], lens[i]);
			h_build_nop_out(bhs, 0x3000 + (uint32_t)i, r.cmdsn);
			/* an AHS too, on every other ping */
			ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, ahs, (i & 1) ? 8 : 0,
							out, lens[i], 0), 0);
			recv_ok(&h, &r, bhs, in, sizeof(in), &dlen, "NOP-In");
			ck_assert_uint_eq(idm_iscsi_bhs_opcode(bhs), IDM_ISCSI_OP_NOP_IN);
			ck_assert_uint_eq(idm_iscsi_bhs_itt(bhs), 0x3000 + i);
			ck_assert_msg(dlen == lens[i] && !memcmp(in, out, dlen),
				      "NOP-In data of %u bytes for %u sent", dlen, lens[i]);
			ck_assert_msg(h.t.ahs_len == ((i & 1) ? 8u : 0u) &&
					      (!(i & 1) || !memcmp(h.t.ahs, ahs, 8)),
				      "AHS handed over as %zu bytes", h.t.ahs_len);
		}
		ck_assert_int_eq(h.t.terminate_count, 0);
		h_raw_end(&h, &r);
	}
	h_log("control_data_and_padding: NOP-Out/NOP-In with 1..8192 data bytes and an AHS, with and without digests: padding, digests, data and AHS intact");
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { put_data_segmentation,	 get_data_r2ts,
				       initiator_write_pdus,	 data_ack,
				       control_data_and_padding, NULL };

	return h_main("test_wire", 110, "tcp_wire", "wire", 60, tests);
}
