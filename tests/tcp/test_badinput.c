/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Bad input from the wire (issue 2 item 6), against the libidm target
 * (test_badinput_ini.c does the initiator): a raw-socket initiator logs in
 * properly, then sends what a broken or hostile peer would. Each case
 * asserts one clean outcome: either exactly one
 * connection_terminate_notify with a non-empty idm_conn_error() and the
 * socket closed (framing errors), or - where RFC 7143 lets the receiver
 * discard the PDU - a connection that still works, or - for a well-framed
 * PDU that matches nothing (doc/api.md 7.1) - the PDU handed to the
 * caller with no task, a Reject from it echoing the BHS, and a connection
 * that still works. Guard bytes around every buffer catch
 * writes outside the caller's ranges; ASan catches the rest.
 */
#include "raw_peer.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define ITT 0x1234

static bool t_terminated(struct h *h)
{
	return h->t.terminate_count > 0;
}

/* After the raw peer closed: the target's terminate notify, waited for
 * (30 s is a hang guard), before the fixed window that checks it came
 * only once. */
static void wait_t_terminated(struct h *h)
{
	(void)h_progress_until(h, t_terminated, 30000);
}

static void params_write(struct h_params *p)
{
	/* everything by R2T, one burst of 8 KiB at a time */
	h_params_default(p);
	p->immediate_data = false;
	p->initial_r2t = true;
	p->first_burst = 8192;
	p->max_burst = 8192;
	p->tgt_mrdsl = 8192;
	p->ini_mrdsl = 8192;
	p->max_r2t = 1;
}

/* A WRITE of len (ITT) to an untouched disk slot 0; bhs gets its R2T. */
static void write_to_r2t(struct h *h, struct h_raw *r, uint32_t len,
			 uint8_t bhs[48])
{
	h_disk_slot_clear(h, 0);
	h_raw_send_cmd(h, r, true, ITT, len);
	h_raw_recv_op(h, r, IDM_ISCSI_OP_R2T, bhs);
}

/* ---- against the libidm target --------------------------------------- */

/* Well-framed PDUs the target does not accept reach the caller, which
 * Rejects them (doc/api.md 7.1, RFC 7143 11.17); the connection goes on. */
static void rejected_opcode(uint8_t op, const char *data, bool digests,
			    uint8_t reason, const char *what)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48] = { 0 };
	size_t dlen = data ? strlen(data) : 0;

	h_params_default(&p);
	p.header_digest = p.data_digest = digests;
	h_raw_evil_initiator(&h, &r, &p, 8192);
	bhs[0] = op;
	bhs[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_bhs_set_data_len(bhs, (uint32_t)dlen);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, 0x42);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, dlen, 0), 0);
	h_raw_expect_reject(&h, &r, bhs, reason, what);
	h_raw_end(&h, &r);
}

START_TEST(unknown_opcode)
{
	rejected_opcode(0x1e, NULL, false, IDM_ISCSI_REJECT_CMD_NOT_SUPPORTED,
			"unknown opcode 0x1e");
}
END_TEST

START_TEST(unknown_opcode_data_digests)
{
	/* its data segment (padded, with a data digest) is consumed too */
	rejected_opcode(0x0b, "seventeen bytes..", true,
			IDM_ISCSI_REJECT_CMD_NOT_SUPPORTED,
			"unassigned opcode 0x0b with 17 data bytes and digests");
}
END_TEST

START_TEST(target_opcode_from_initiator)
{
	rejected_opcode(IDM_ISCSI_OP_SCSI_RSP, NULL, false,
			IDM_ISCSI_REJECT_PROTOCOL_ERROR,
			"SCSI Response (a target opcode) from the initiator");
}
END_TEST

START_TEST(datain_from_initiator)
{
	/* a datamover opcode of the other role: not placed, handed up */
	rejected_opcode(IDM_ISCSI_OP_DATA_IN, "data", false,
			IDM_ISCSI_REJECT_PROTOCOL_ERROR,
			"Data-In (a target opcode) from the initiator");
}
END_TEST

START_TEST(ahs_too_long)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48] = { 0 };
	uint8_t ahs[1020];

	h_params_default(&p);
	h_raw_evil_initiator(&h, &r, &p, 8192);
	/* TotalAHSLength 255 words whose first AHS claims 65535 bytes */
	memset(ahs, 0xee, sizeof(ahs));
	idm_iscsi_put16(ahs, 0xffff);
	ahs[2] = 0x01; /* extended CDB */
	h_build_nop_out(bhs, IDM_ISCSI_RESERVED_TAG, 0);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, ahs, sizeof(ahs), NULL, 0, 0), 0);
	h_raw_target_outcome(&h, &r, true, "TotalAHSLength 255 with a 65535-byte AHS");
	h_raw_end(&h, &r);
}
END_TEST

START_TEST(dsl_over_mrdsl)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48] = { 0 };
	static uint8_t data[8192 + 512];

	h_params_default(&p);
	p.tgt_mrdsl = 8192;
	h_raw_evil_initiator(&h, &r, &p, 8192);
	h_build_nop_out(bhs, 0x99, 0);
	/* ignore a send error: the target may close before taking it all */
	(void)h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, sizeof(data), 0);
	h_raw_target_outcome(&h, &r, false,
			  "NOP-Out DataSegmentLength 8704 > MaxRecvDataSegmentLength 8192");
	h_raw_end(&h, &r);
}
END_TEST

START_TEST(dsl_huge_header_only)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48] = { 0 };

	h_params_default(&p);
	h_raw_evil_initiator(&h, &r, &p, 8192);
	h_build_nop_out(bhs, 0x99, 0);
	idm_iscsi_bhs_set_data_len(bhs, 0xffffff);
	/* the header alone must be enough to fail: no waiting for 16 MiB */
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, NULL, 0,
					H_RAW_KEEP_LENGTHS), 0);
	h_raw_target_outcome(&h, &r, false, "DataSegmentLength 0xffffff, header only");
	h_raw_end(&h, &r);
}
END_TEST

START_TEST(header_digest_mismatch)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48] = { 0 };

	int controls;

	h_params_default(&p);
	p.header_digest = true;
	h_raw_evil_initiator(&h, &r, &p, 8192);
	controls = h.t.control_count;
	h_build_nop_out(bhs, 0x98, 0);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, NULL, 0, H_RAW_BAD_HD), 0);
	/* RFC 7143 7.8: discard the PDU or close the connection */
	h_raw_target_outcome(&h, &r, true, "header digest mismatch");
	/* dropped: only the ping may have reached the caller */
	ck_assert_msg(h.t.terminate_count || h.t.control_count == controls + 1,
		      "a PDU with a bad header digest reached the caller");
	h_raw_end(&h, &r);
}
END_TEST

START_TEST(data_digest_mismatch)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48] = { 0 };
	static const char ping[] = "ping data with a bad digest";
	int controls;

	h_params_default(&p);
	p.header_digest = true;
	p.data_digest = true;
	h_raw_evil_initiator(&h, &r, &p, 8192);
	controls = h.t.control_count;
	h_build_nop_out(bhs, 0x97, 0);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, ping, sizeof(ping),
					H_RAW_BAD_DD), 0);
	/* RFC 7143 7.8: Reject and discard, or close at ERL 0 */
	h_raw_target_outcome(&h, &r, true, "data digest mismatch (NOP-Out)");
	ck_assert_msg(h.t.terminate_count || h.t.control_count == controls + 1,
		      "the PDU with the bad data digest reached the caller");
	h_raw_end(&h, &r);
}
END_TEST

START_TEST(dataout_digest_mismatch)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	static uint8_t data[4096];

	params_write(&p);
	p.data_digest = true;
	h_raw_evil_initiator(&h, &r, &p, 8192);
	write_to_r2t(&h, &r, 8192, bhs);
	memset(data, 0x11, sizeof(data));
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, ITT, idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT),
		    0, 0, false);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, sizeof(data),
					H_RAW_BAD_DD), 0);
	h_raw_target_outcome(&h, &r, true, "Data-Out with a bad data digest");
	ck_assert_msg(h.t.completion_count == h.t.completion_errors,
		      "Get_Data completed successfully with corrupt data");
	h_raw_end(&h, &r);
}
END_TEST

/* The rest of the WRITE of write_to_r2t(): the right Data-Out, then the
 * SCSI Response - the Reject before it cost the task nothing. */
static void finish_write(struct h *h, struct h_raw *r, uint32_t ttt)
{
	uint8_t bhs[48];
	static uint8_t data[8192];

	memset(data, 0x33, sizeof(data));
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, ITT, ttt, 0, 0, true);
	ck_assert_int_eq(h_raw_send_pdu(h, r, bhs, NULL, 0, data, sizeof(data), 0), 0);
	h_raw_recv_op(h, r, IDM_ISCSI_OP_SCSI_RSP, bhs);
	ck_assert_msg(bhs[2] == 0 && bhs[3] == 0,
		      "WRITE after the Reject: response 0x%02x status 0x%02x",
		      bhs[2], bhs[3]);
	ck_assert(!h_raw_disk_untouched(h, 0, 8192));
}

static void dataout_unknown_ttt_case(bool digests)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	uint32_t ttt;
	static uint8_t data[4096];

	params_write(&p);
	p.header_digest = p.data_digest = digests;
	h_raw_evil_initiator(&h, &r, &p, 8192);
	write_to_r2t(&h, &r, 8192, bhs);
	ttt = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT);
	memset(data, 0x22, sizeof(data));
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, ITT, ttt ^ 0x5a5a0000u, 0, 0, false);
	idm_iscsi_bhs_set_data_len(bhs, sizeof(data));
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, sizeof(data), 0), 0);
	h_raw_expect_reject(&h, &r, bhs, IDM_ISCSI_REJECT_INVALID_PDU_FIELD,
			    "Data-Out for an unknown TTT");
	ck_assert_msg(h_raw_disk_untouched(&h, 0, 8192),
		      "Data-Out with a wrong TTT was placed");
	finish_write(&h, &r, ttt);
	h_raw_end(&h, &r);
}

START_TEST(dataout_unknown_ttt)
{
	dataout_unknown_ttt_case(false);
}
END_TEST

START_TEST(dataout_unknown_ttt_digests)
{
	dataout_unknown_ttt_case(true);
}
END_TEST

START_TEST(dataout_unknown_itt)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	uint32_t ttt;
	static uint8_t data[512];

	params_write(&p);
	h_raw_evil_initiator(&h, &r, &p, 8192);
	write_to_r2t(&h, &r, 8192, bhs);
	ttt = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT);
	/* right TTT, wrong ITT */
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, ITT + 1, ttt, 0, 0, false);
	idm_iscsi_bhs_set_data_len(bhs, sizeof(data));
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, sizeof(data), 0), 0);
	h_raw_expect_reject(&h, &r, bhs, IDM_ISCSI_REJECT_INVALID_PDU_FIELD,
			    "Data-Out with the R2T's TTT but another ITT");
	ck_assert(h_raw_disk_untouched(&h, 0, 8192));
	finish_write(&h, &r, ttt);
	h_raw_end(&h, &r);
}
END_TEST

START_TEST(dataout_unsolicited_unknown_itt)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	static uint8_t data[512];

	params_write(&p);
	p.initial_r2t = false;
	h_raw_evil_initiator(&h, &r, &p, 8192);
	h_disk_slot_clear(&h, 0);
	/* unsolicited Data-Out for an ITT no command ever used */
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, 0xabcdef, IDM_ISCSI_RESERVED_TAG, 0, 0,
		    true);
	idm_iscsi_bhs_set_data_len(bhs, sizeof(data));
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, sizeof(data), 0), 0);
	h_raw_expect_reject(&h, &r, bhs, IDM_ISCSI_REJECT_INVALID_PDU_FIELD,
			    "unsolicited Data-Out for an unknown ITT");
	ck_assert(h_raw_disk_untouched(&h, 0, 8192));
	h_raw_end(&h, &r);
}
END_TEST

/* Data-Out whose [offset, offset+len) leaves the R2T: `off` and `len`
 * against an R2T for [0, 4096) of an 8192-byte write. */
static void dataout_outside(uint32_t off, uint32_t len, const char *what)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	static uint8_t data[8192];
	uint32_t r2t_len;

	params_write(&p);
	p.max_burst = 4096;
	p.first_burst = 4096;
	h_raw_evil_initiator(&h, &r, &p, 8192);
	write_to_r2t(&h, &r, 8192, bhs);
	r2t_len = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_DESIRED_LEN);
	ck_assert_msg(idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET) == 0 && r2t_len == 4096,
		      "R2T for [%u, +%u), expected [0, +4096)",
		      idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET), r2t_len);
	memset(data, 0x33, sizeof(data));
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, ITT, idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT),
		    0, off, true);
	(void)h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, len, 0);
	h_raw_target_outcome(&h, &r, true, what);
	/* nothing outside the R2T may have been written */
	ck_assert_msg(h_raw_disk_untouched(&h, 4096, 4096),
		      "%s: bytes outside the R2T were written", what);
	ck_assert_msg(h.t.completion_count == h.t.completion_errors,
		      "%s: Get_Data reported success", what);
	h_raw_end(&h, &r);
}

START_TEST(dataout_outside_r2t)
{
	dataout_outside(2048, 4096, "Data-Out [2048, +4096) crossing the R2T end");
}
END_TEST

START_TEST(dataout_outside_buffer)
{
	dataout_outside(8192 - 256, 512, "Data-Out [7936, +512) past the task buffer");
}
END_TEST

START_TEST(dataout_offset_wraps)
{
	/* offset + length wraps around 2^32 to a small number */
	dataout_outside(0xffffff00u, 512, "Data-Out offset 0xffffff00 (+512 wraps)");
}
END_TEST

START_TEST(truncated_bhs_then_close)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48] = { 0 };

	h_params_default(&p);
	h_raw_evil_initiator(&h, &r, &p, 8192);
	bhs[0] = IDM_ISCSI_OP_NOP_OUT | IDM_ISCSI_OP_IMMEDIATE;
	ck_assert_int_eq(h_raw_write(&h, &r, bhs, 20), 0);
	h_progress_for(&h, 50);
	h_raw_close(&r);
	wait_t_terminated(&h);
	h_progress_for(&h, 500);
	h_raw_assert_failed_once(&h.t, __func__);
	ck_assert_int_eq(h_check_guards(&h), 0);
	h_log("20 bytes of a BHS then close: one terminate notify, reason: %s",
	      h.t.error);
	h_fini(&h);
}
END_TEST

START_TEST(truncated_data_then_close)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t pkt[48 + 100] = { 0 };

	h_params_default(&p);
	h_raw_evil_initiator(&h, &r, &p, 8192);
	pkt[0] = IDM_ISCSI_OP_NOP_OUT | IDM_ISCSI_OP_IMMEDIATE;
	pkt[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(pkt + IDM_ISCSI_BHS_ITT, 0x96);
	idm_iscsi_put32(pkt + IDM_ISCSI_BHS_TTT, IDM_ISCSI_RESERVED_TAG);
	idm_iscsi_bhs_set_data_len(pkt, 1000);
	ck_assert_int_eq(h_raw_write(&h, &r, pkt, sizeof(pkt)), 0);
	h_progress_for(&h, 50);
	h_raw_close(&r);
	wait_t_terminated(&h);
	h_progress_for(&h, 500);
	h_raw_assert_failed_once(&h.t, __func__);
	h_log("NOP-Out with 100 of 1000 data bytes then close: one notify, reason: %s",
	      h.t.error);
	h_fini(&h);
}
END_TEST

START_TEST(vanish_mid_dataout)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	static uint8_t pkt[48 + 2048];

	params_write(&p);
	h_raw_evil_initiator(&h, &r, &p, 8192);
	write_to_r2t(&h, &r, 8192, bhs);
	h_raw_data_bhs(pkt, IDM_ISCSI_OP_DATA_OUT, ITT, idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT),
		    0, 0, true);
	idm_iscsi_bhs_set_data_len(pkt, 8192);
	memset(pkt + 48, 0x44, 2048);
	ck_assert_int_eq(h_raw_write(&h, &r, pkt, sizeof(pkt)), 0);
	h_progress_for(&h, 50);
	h_raw_close(&r);
	wait_t_terminated(&h);
	h_progress_for(&h, 500);
	h_raw_assert_failed_once(&h.t, __func__);
	ck_assert_msg(h.t.completion_count == h.t.completion_errors,
		      "Get_Data reported success for half the data");
	ck_assert_int_eq(h_check_guards(&h), 0);
	ck_assert(h_raw_disk_untouched(&h, 2048, 8192 - 2048));
	h_log("peer gone after 2048 of 8192 Data-Out bytes: one notify (%d failed completions first), reason: %s",
	      h.t.completion_errors, h.t.error);
	h_fini(&h);
}
END_TEST

START_TEST(vanish_mid_datain)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];

	h_params_default(&p);
	p.ini_mrdsl = 8192;
	h_raw_evil_initiator(&h, &r, &p, 1 << 20);
	h.free_on_terminate = true;
	h_pattern(h_disk_slot(&h, 0), 1 << 20, 7);
	h_raw_send_cmd(&h, &r, false, ITT, 1 << 20);
	/* take a few Data-In, then vanish while the target is sending */
	for (int i = 0; i < 3; i++)
		h_raw_recv_op(&h, &r, IDM_ISCSI_OP_DATA_IN, bhs);
	h_raw_close(&r);
	wait_t_terminated(&h);
	h_progress_for(&h, 800);
	h_raw_assert_failed_once(&h.t, __func__);
	h_log("initiator gone during a 1 MiB Put_Data: one notify, reason: %s",
	      h.t.error);
	h_fini(&h);
}
END_TEST

/* ---- unsolicited data the negotiation does not allow ---------------- */

/* Send a WRITE of edtl at disk slot 0 with `imm` bytes of immediate data;
 * F set when no unsolicited Data-Out is to follow. */
static void send_write(struct h *h, struct h_raw *r, uint32_t edtl,
		       uint32_t imm, bool final)
{
	static uint8_t data[8192];
	uint8_t bhs[48];

	memset(data, 0x5c, sizeof(data));
	h_build_scsi_cmd(bhs, true, ITT, r->cmdsn++, r->statsn + 1, edtl, 0,
			 final);
	ck_assert_int_eq(h_raw_send_pdu(h, r, bhs, NULL, 0, data, imm, 0), 0);
}

START_TEST(imm_beyond_edtl)
{
	struct h h;
	struct h_raw r;
	struct h_params p;

	h_params_default(&p);
	p.immediate_data = true;
	p.initial_r2t = true;
	h_raw_evil_initiator(&h, &r, &p, 8192);
	h_disk_slot_clear(&h, 0);
	/* 4096 bytes of immediate data for a 1000-byte write */
	send_write(&h, &r, 1000, 4096, true);
	h_raw_target_outcome(&h, &r, true, "immediate data 4096 > EDTL 1000");
	ck_assert_msg(h_raw_disk_untouched(&h, 1000, 8192 - 1000),
		      "immediate data written past the 1000-byte Get_Data range");
	h_raw_end(&h, &r);
}
END_TEST

START_TEST(imm_not_negotiated)
{
	struct h h;
	struct h_raw r;
	struct h_params p;

	params_write(&p); /* ImmediateData=No */
	h_raw_evil_initiator(&h, &r, &p, 8192);
	h_disk_slot_clear(&h, 0);
	send_write(&h, &r, 8192, 512, true);
	h_raw_target_outcome(&h, &r, true, "immediate data with ImmediateData=No");
	ck_assert_msg(h_raw_disk_untouched(&h, 0, 8192),
		      "immediate data placed although ImmediateData=No");
	h_raw_end(&h, &r);
}
END_TEST

START_TEST(unsolicited_with_initial_r2t)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	static uint8_t data[512];

	params_write(&p); /* InitialR2T=Yes */
	h_raw_evil_initiator(&h, &r, &p, 8192);
	h_disk_slot_clear(&h, 0);
	send_write(&h, &r, 8192, 0, true);
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, ITT, IDM_ISCSI_RESERVED_TAG, 0, 0, true);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, sizeof(data), 0), 0);
	h_raw_target_outcome(&h, &r, true, "unsolicited Data-Out with InitialR2T=Yes");
	ck_assert_msg(h_raw_disk_untouched(&h, 0, 8192),
		      "unsolicited Data-Out placed although InitialR2T=Yes");
	h_raw_end(&h, &r);
}
END_TEST

START_TEST(unsolicited_beyond_first_burst)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	static uint8_t data[4096];

	params_write(&p);
	p.initial_r2t = false;
	p.first_burst = 4096;
	h_raw_evil_initiator(&h, &r, &p, 8192);
	h_disk_slot_clear(&h, 0);
	send_write(&h, &r, 8192, 0, false);
	memset(data, 0x6d, sizeof(data));
	/* the whole first burst, but without F, then 512 more unsolicited */
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, ITT, IDM_ISCSI_RESERVED_TAG, 0, 0, false);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, 4096, 0), 0);
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, ITT, IDM_ISCSI_RESERVED_TAG, 1, 4096, true);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, 512, 0), 0);
	h_raw_target_outcome(&h, &r, true, "unsolicited Data-Out past FirstBurstLength");
	ck_assert_msg(h_raw_disk_untouched(&h, 4096, 4096),
		      "unsolicited data past FirstBurstLength was placed");
	h_raw_end(&h, &r);
}
END_TEST

START_TEST(dataout_for_read_task)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	static uint8_t data[512];
	const uint32_t len = 16u << 20;

	h_params_default(&p);
	p.initial_r2t = false;
	h_raw_evil_initiator(&h, &r, &p, len);
	h_pattern(h_disk_slot(&h, 0), len, 5);
	/* 16 MiB that the raw side does not read keeps the read task busy */
	h_raw_send_cmd(&h, &r, false, ITT, len);
	h_progress_for(&h, 50);
	ck_assert_msg(h.t.completion_count == 0, "the read finished already");
	memset(data, 0x7e, sizeof(data));
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, ITT, IDM_ISCSI_RESERVED_TAG, 0, 0, true);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, sizeof(data), 0), 0);
	h_raw_target_outcome(&h, &r, true, "Data-Out for an active read command");
	/* the Put_Data source must not have been written */
	ck_assert_msg(h_pattern_check(h_disk_slot(&h, 0), len, 5) < 0,
		      "Data-Out written into a Put_Data buffer");
	h_raw_end(&h, &r);
}
END_TEST

/* ---- Data-Out that would complete a Get_Data with holes ------------- */

/* R2T for [0, 8192) answered with `n` Data-Out PDUs {offset, length, F}:
 * the Get_Data must not report success, and bytes past 4096 must not be
 * written since no PDU carried them. */
struct dout {
	uint32_t off, len;
	bool f;
};

static void holes_case(const struct dout *d, size_t n, const char *what)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	static uint8_t data[4096];
	uint32_t ttt;

	params_write(&p); /* one R2T of 8192 */
	h_raw_evil_initiator(&h, &r, &p, 8192);
	write_to_r2t(&h, &r, 8192, bhs);
	ttt = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT);
	ck_assert_uint_eq(idm_iscsi_get32(bhs + IDM_ISCSI_BHS_DESIRED_LEN), 8192);
	memset(data, 0x4a, sizeof(data));
	for (size_t i = 0; i < n; i++) {
		h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, ITT, ttt, (uint32_t)i, d[i].off,
			    d[i].f);
		(void)h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, d[i].len, 0);
	}
	h_raw_target_outcome(&h, &r, true, what);
	ck_assert_msg(h.t.completion_count == h.t.completion_errors,
		      "%s: Get_Data reported success with half the data", what);
	ck_assert_msg(h_raw_disk_untouched(&h, 4096, 4096),
		      "%s: bytes nobody sent were written", what);
	h_raw_end(&h, &r);
}

START_TEST(dataout_duplicate)
{
	static const struct dout d[] = { { 0, 4096, false }, { 0, 4096, true } };

	holes_case(d, 2, "the same Data-Out [0, +4096) twice for an 8192-byte R2T");
}
END_TEST

START_TEST(dataout_early_final)
{
	static const struct dout d[] = { { 0, 4096, true } };

	holes_case(d, 1, "Data-Out [0, +4096) with F=1 for an 8192-byte R2T");
}
END_TEST

/* ---- before and during login ----------------------------------------- */

/* A raw initiator that sends `bhs` (+ dlen bytes of data, or with
 * keep_len only the header as it is) instead of a Login Request. */
static void before_login(const uint8_t *bhs, size_t dlen, bool keep_len,
			 const char *what)
{
	struct h h;
	struct h_raw r;
	static uint8_t data[4096];

	ck_assert_msg(h_init(&h, 8192, 1) == 0, "h_init: %s", h.err);
	ck_assert_int_eq(h_raw_connect(&h, &r), 0);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, dlen,
					keep_len ? H_RAW_KEEP_LENGTHS : 0), 0);
	h_raw_target_outcome(&h, &r, false, what);
	ck_assert_msg(!h.t.ffp, "%s: full feature phase reached", what);
	h_raw_end(&h, &r);
}

START_TEST(scsi_cmd_before_login)
{
	uint8_t bhs[48];

	h_build_scsi_cmd(bhs, false, ITT, 1, 0, 512, 0, true);
	before_login(bhs, 0, false, "SCSI Command before login");
}
END_TEST

START_TEST(dataout_before_login)
{
	uint8_t bhs[48];

	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, ITT, IDM_ISCSI_RESERVED_TAG, 0, 0, true);
	before_login(bhs, 512, false, "Data-Out before login");
}
END_TEST

START_TEST(login_too_long)
{
	uint8_t bhs[48] = { 0 };

	/* a Login Request announcing 1 MiB of text: far beyond any
	 * login-phase limit; the header alone must fail it */
	bhs[0] = IDM_ISCSI_OP_LOGIN_REQ | IDM_ISCSI_OP_IMMEDIATE;
	bhs[1] = IDM_ISCSI_LOGIN_TRANSIT | (IDM_ISCSI_STAGE_OPERATIONAL << 2) |
		 IDM_ISCSI_STAGE_FULL_FEATURE;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, 1);
	idm_iscsi_bhs_set_data_len(bhs, 1 << 20);
	before_login(bhs, 0, true, "Login Request announcing 1 MiB");
}
END_TEST

START_TEST(close_before_login)
{
	struct h h;
	struct h_raw r;

	ck_assert_msg(h_init(&h, 8192, 1) == 0, "h_init: %s", h.err);
	ck_assert_int_eq(h_raw_connect(&h, &r), 0);
	h_raw_close(&r);
	h_progress_for(&h, 300);
	h_raw_assert_failed_once(&h.t, __func__);
	h_log("connect then close before any PDU: one notify, reason: %s",
	      h.t.error);
	h_fini(&h);
}
END_TEST

START_TEST(itt_reused_while_active)
{
	struct h h;
	struct h_raw r;
	struct h_params p;

	h_params_default(&p);
	p.ini_mrdsl = 65536;
	h_raw_evil_initiator(&h, &r, &p, 16u << 20);
	h.free_on_terminate = true;
	/* 16 MiB unread keeps the first task busy, then the same ITT again */
	h_raw_send_cmd(&h, &r, false, ITT, 16u << 20);
	h_progress_for(&h, 100);
	h_raw_send_cmd(&h, &r, false, ITT, 4096);
	h_raw_target_outcome(&h, &r, true, "SCSI Command reusing an active ITT");
	h_raw_end(&h, &r);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { unknown_opcode,
				       unknown_opcode_data_digests,
				       target_opcode_from_initiator,
				       datain_from_initiator,
				       ahs_too_long,
				       dsl_over_mrdsl,
				       dsl_huge_header_only,
				       header_digest_mismatch,
				       data_digest_mismatch,
				       dataout_digest_mismatch,
				       dataout_unknown_ttt,
				       dataout_unknown_ttt_digests,
				       dataout_unknown_itt,
				       dataout_unsolicited_unknown_itt,
				       dataout_outside_r2t,
				       dataout_outside_buffer,
				       dataout_offset_wraps,
				       truncated_bhs_then_close,
				       truncated_data_then_close,
				       vanish_mid_dataout,
				       vanish_mid_datain,
				       imm_beyond_edtl,
				       imm_not_negotiated,
				       unsolicited_with_initial_r2t,
				       unsolicited_beyond_first_burst,
				       dataout_for_read_task,
				       dataout_duplicate,
				       dataout_early_final,
				       scsi_cmd_before_login,
				       dataout_before_login,
				       login_too_long,
				       close_before_login,
				       itt_reused_while_active,
				       NULL };

	return h_main("test_badinput", 110, "tcp_badinput", "evil_initiator",
		      30, tests);
}
