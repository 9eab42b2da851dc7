/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of the iSER provider's verbs-free logic (runs on any host):
 * the 28-byte iSER header (RFC 7145 9.2, Annex A12 Table 4), Hello and
 * HelloReply (9.3, 9.4), the CM private data word (A12 Tables 2, 3 and the
 * Send-with-Invalidate truth table) and the key policy (section 6, 8.1).
 */
#include <check.h>
#include "check_suite.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iser_keys.h"
#include "iser_rx_check.h"
#include "iser_wire.h"

START_TEST(hdr_layout)
{
	struct iser_hdr h = {
		.opcode = ISER_OP_CTRL, .wsv = true, .rsv = true,
		.write_stag = 0x11223344, .write_va = 0x0102030405060708ull,
		.read_stag = 0xaabbccdd, .read_va = 0x1112131415161718ull,
	};
	static const uint8_t want[ISER_HDR_LEN] = {
		0x1c, 0, 0, 0, 0x11, 0x22, 0x33, 0x44,
		1, 2, 3, 4, 5, 6, 7, 8,
		0xaa, 0xbb, 0xcc, 0xdd,
		0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
	};
	uint8_t b[ISER_HDR_LEN];

	iser_hdr_encode(b, &h);
	ck_assert_mem_eq(b, want, sizeof(want));
}
END_TEST

START_TEST(hdr_invalid_halves_are_zero)
{
	struct iser_hdr h = {.opcode = ISER_OP_CTRL, .rsv = true,
			     .write_stag = 5, .write_va = 7, .read_stag = 9,
			     .read_va = 0x100};
	uint8_t b[ISER_HDR_LEN], z[8] = {0};

	iser_hdr_encode(b, &h);
	ck_assert_uint_eq(b[0], 0x14);
	ck_assert_mem_eq(b + 4, z, 4);  /* Write STag MUST be 0 when WSV=0 */
	ck_assert_mem_eq(b + 8, z, 8);
	h.rsv = false;
	h.wsv = true;
	iser_hdr_encode(b, &h);
	ck_assert_uint_eq(b[0], 0x18);
	ck_assert_mem_eq(b + 16, z, 4);
	ck_assert_mem_eq(b + 20, z, 8);
	h.wsv = false;
	iser_hdr_encode(b, &h);
	ck_assert_uint_eq(b[0], 0x10);
}
END_TEST

START_TEST(hdr_decode_roundtrip_and_ignores)
{
	uint8_t msg[ISER_HDR_LEN + 48];
	struct iser_hdr h = {.opcode = ISER_OP_CTRL, .wsv = true,
			     .write_stag = 0xdeadbeef, .write_va = 1ull << 40};
	struct iser_hdr d;

	memset(msg, 0, sizeof(msg));
	iser_hdr_encode(msg, &h);
	/* garbage in reserved bits and in the invalid Read half: ignored */
	msg[0] |= 0x03;
	msg[1] = 0xff;
	memset(msg + 16, 0xee, 12);
	ck_assert_int_eq(iser_hdr_decode(msg, sizeof(msg), &d), 0);
	ck_assert(d.wsv && !d.rsv);
	ck_assert_uint_eq(d.write_stag, 0xdeadbeef);
	ck_assert_uint_eq(d.write_va, 1ull << 40);
	ck_assert_uint_eq(d.read_stag, 0);
	ck_assert_uint_eq(d.read_va, 0);
}
END_TEST

START_TEST(hdr_decode_rejects)
{
	uint8_t msg[ISER_HDR_LEN + 48] = {0};
	struct iser_hdr d;

	msg[0] = 0x10;
	/* shorter than header + BHS */
	ck_assert_int_eq(iser_hdr_decode(msg, ISER_HDR_LEN + 47, &d), -EPROTO);
	ck_assert_int_eq(iser_hdr_decode(msg, 3, &d), -EPROTO);
	ck_assert_int_eq(iser_hdr_decode(msg, 0, &d), -EPROTO);
	/* unassigned opcodes */
	for (int op = 0; op < 16; op++) {
		msg[0] = (uint8_t)(op << 4);
		int r = iser_hdr_decode(msg, sizeof(msg), &d);

		if (op == 1)
			ck_assert_int_eq(r, 0);
		else
			ck_assert_int_eq(r, -EPROTO); /* Hello: wrong length */
	}
	/* Hello is exactly 28 bytes */
	msg[0] = 0x20;
	ck_assert_int_eq(iser_hdr_decode(msg, ISER_HDR_LEN, &d), 0);
	ck_assert_uint_eq(d.opcode, ISER_OP_HELLO);
}
END_TEST

START_TEST(hello_codec)
{
	struct iser_hello h = {.opcode = ISER_OP_HELLO, .max_ver = 10,
			       .min_ver = 10, .ird_ord = 0x1234};
	struct iser_hello d;
	uint8_t b[ISER_HDR_LEN];

	iser_hello_encode(b, &h);
	ck_assert_uint_eq(b[0], 0x20);
	ck_assert_uint_eq(b[1], 0xaa);
	ck_assert_uint_eq(b[2], 0x12);
	ck_assert_uint_eq(b[3], 0x34);
	ck_assert_int_eq(iser_hello_decode(b, sizeof(b), &d), 0);
	ck_assert_uint_eq(d.ird_ord, 0x1234);
	ck_assert(!d.reject);
	h.opcode = ISER_OP_HELLO_REPLY;
	h.reject = true;
	iser_hello_encode(b, &h);
	ck_assert_uint_eq(b[0], 0x31);
	ck_assert_int_eq(iser_hello_decode(b, sizeof(b), &d), 0);
	ck_assert(d.reject);
	ck_assert_int_eq(iser_hello_decode(b, sizeof(b) + 1, &d), -EPROTO);
	b[0] = 0x10;
	ck_assert_int_eq(iser_hello_decode(b, sizeof(b), &d), -EPROTO);
}
END_TEST

START_TEST(cm_private_data)
{
	uint8_t pd[56] = {0}, w[4];
	struct iser_cm_nego n;

	iser_cm_word_encode(w, ISER_CM_ZBVA_NOT_SUP | ISER_CM_SEND_INV_NOT_SUP | 0x3f);
	ck_assert_uint_eq(w[0], 0xc0); /* reserved bits sent as 0 */
	ck_assert_uint_eq(w[1] | w[2] | w[3], 0);
	/* zero-padded REQ (rxe pads to 56): only the word is read */
	pd[0] = 0x80;
	pd[1] = 0xff;
	pd[40] = 0xff;
	ck_assert_uint_eq(iser_cm_word_flags(pd, sizeof(pd)), 0x80);
	ck_assert_uint_eq(iser_cm_word_flags(pd, 3), 0);
	ck_assert_uint_eq(iser_cm_word_flags(NULL, 0), 0);

	/* A12.5 truth table */
	ck_assert_uint_eq(iser_cm_rep_flags(0x80, true), 0x80);
	ck_assert_uint_eq(iser_cm_rep_flags(0x80, false), 0xc0);
	ck_assert_uint_eq(iser_cm_rep_flags(0xc0, true), 0xc0);
	iser_cm_negotiate(0x80, 0x80, &n);
	ck_assert(n.send_inv);
	iser_cm_negotiate(0xc0, 0xc0, &n);
	ck_assert(!n.send_inv);
	iser_cm_negotiate(0x80, 0xc0, &n);
	ck_assert(!n.send_inv);
	/* tgt sends no REP private data (reads as 0): SendInv allowed */
	iser_cm_negotiate(0x80, 0, &n);
	ck_assert(n.send_inv);
}
END_TEST

START_TEST(keys_force_and_check)
{
	struct idm_conn_params p;
	char err[128];

	idm_prov_params_default(&p);
	p.header_digest = p.data_digest = true;
	ck_assert(iser_keys_force(&p));
	ck_assert(!p.header_digest && !p.data_digest);
	ck_assert(!iser_keys_force(&p));
	ck_assert_int_eq(iser_keys_check(&p, err, sizeof(err)), 0);
	p.max_outstanding_unexpected_pdus = 1;
	ck_assert_int_eq(iser_keys_check(&p, err, sizeof(err)), -EINVAL);
	ck_assert(strstr(err, "MaxOutstandingUnexpectedPDUs"));
}
END_TEST

START_TEST(sizes)
{
	struct idm_conn_params p;
	struct iser_sizes s;

	iser_sizes_login(&s);
	ck_assert_uint_ge(s.rx_msg, 28 + 48 + 8192);
	ck_assert_uint_le(s.rx_msg * s.rx_depth, 64 * 1024); /* small (11) */

	idm_prov_params_default(&p);
	p.target_recv_dsl = 262144;
	p.initiator_recv_dsl = 512;
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 0, 0);
	ck_assert_uint_ge(s.rx_msg, 28 + 48 + 256 + 262144);
	ck_assert_uint_ge(s.tx_msg, 28 + 48 + 8192); /* never below login */
	iser_sizes_ffp(&s, &p, IDM_ROLE_INITIATOR, 0, 0);
	/* pooled send buffers stop at 8 KiB of data whatever the peer
	 * declared; larger control PDUs get a one-off buffer */
	ck_assert_uint_ge(s.tx_msg, 28 + 48 + 256 + 8192);
	ck_assert_uint_lt(s.tx_msg, 28 + 48 + 1024 + 8192 + 64);
	ck_assert_uint_lt(s.rx_msg, 28 + 48 + 1024 + 8192 + 64);
	/* unlimited AHS is capped, declared credits raise the depth */
	p.max_ahs_length = 0;
	p.max_outstanding_unexpected_pdus = 200;
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 0, 0);
	ck_assert_uint_ge(s.rx_depth, 216);
	ck_assert_uint_ge(s.rx_msg, 28 + 48 + ISER_AHS_CAP + 262144);
	/* InitialR2T=No, no window given: receives for 8 commands'
	 * unsolicited data, counted in TargetRecvDataSegmentLength units
	 * (the command with 8 KiB immediate data + 7 Data-Out) */
	idm_prov_params_default(&p);
	p.initial_r2t = false;
	p.first_burst_length = 65536;
	p.target_recv_dsl = 8192;
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 0, 0);
	ck_assert_uint_eq(s.rx_depth, (1 + 7) * 8 + 16);
	/* tiny segments: capped by the memory bound */
	p.target_recv_dsl = 512;
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 0, 128);
	ck_assert_uint_eq(s.rx_depth, ISER_RX_BYTES / s.rx_msg);
	ck_assert_uint_le((uint64_t)s.rx_depth * s.rx_msg, ISER_RX_BYTES);
	iser_sizes_ffp(&s, &p, IDM_ROLE_INITIATOR, 0, 0);
	ck_assert_uint_eq(s.rx_depth, 64);
}
END_TEST

/* Receive provisioning from the keys and the caller's command window
 * (idm_conn_set_cmd_window), within the per-connection bound. */
START_TEST(rx_provisioning)
{
	struct idm_conn_params p;
	struct iser_sizes s;

	/* Linux's ib_iser against idm-target: InitialR2T=No ImmediateData=Yes
	 * FirstBurstLength=256 KiB TargetRecvDataSegmentLength=8 KiB: each
	 * command brings 32 Sends (8 KiB immediate + 31 Data-Out) */
	idm_prov_params_default(&p);
	p.initial_r2t = false;
	p.immediate_data = true;
	p.first_burst_length = 262144;
	p.target_recv_dsl = 8192;
	ck_assert_uint_eq(iser_rx_per_cmd(&p, IDM_ROLE_TARGET), 32);
	ck_assert_uint_eq(iser_rx_per_cmd(&p, IDM_ROLE_INITIATOR), 1);
	/* 11 such writes (the old 280 buffers gave RNR NAKs) */
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 0, 11);
	ck_assert_uint_eq(s.rx_depth, 11 * 32 + ISER_RX_SPARE);
	ck_assert_uint_eq(s.rx_msg, 8576); /* 28 + 48 + 256 AHS + 8192 */
	/* idm-target's window of 128: 4112 wanted, the 32 MiB bound
	 * gives 3912 (122 full first bursts in flight) */
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 0, 128);
	ck_assert_uint_eq(s.rx_depth, ISER_RX_BYTES / 8576);
	ck_assert_uint_eq(s.rx_depth, 3912);
	ck_assert_uint_le((uint64_t)s.rx_depth * s.rx_msg, ISER_RX_BYTES);
	/* FirstBurstLength 64 KiB: the whole window fits */
	p.first_burst_length = 65536;
	ck_assert_uint_eq(iser_rx_per_cmd(&p, IDM_ROLE_TARGET), 8);
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 0, 128);
	ck_assert_uint_eq(s.rx_depth, 128 * 8 + ISER_RX_SPARE);
	/* ImmediateData=No: the first burst all in Data-Out */
	p.immediate_data = false;
	ck_assert_uint_eq(iser_rx_per_cmd(&p, IDM_ROLE_TARGET), 9);
	/* a first burst that is not a multiple of the segment */
	p.first_burst_length = 10000;
	ck_assert_uint_eq(iser_rx_per_cmd(&p, IDM_ROLE_TARGET), 3);
	p.immediate_data = true;
	ck_assert_uint_eq(iser_rx_per_cmd(&p, IDM_ROLE_TARGET), 2);
	/* first burst within the immediate data: the command alone */
	p.first_burst_length = 4096;
	ck_assert_uint_eq(iser_rx_per_cmd(&p, IDM_ROLE_TARGET), 1);
	/* InitialR2T=Yes: one Send per command, whatever the burst */
	p.first_burst_length = 262144;
	p.initial_r2t = true;
	ck_assert_uint_eq(iser_rx_per_cmd(&p, IDM_ROLE_TARGET), 1);
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 0, 128);
	ck_assert_uint_eq(s.rx_depth, 128 + ISER_RX_SPARE);
	/* a small window never goes below the configured minimum */
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 0, 4);
	ck_assert_uint_eq(s.rx_depth, 64);
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 100, 4);
	ck_assert_uint_eq(s.rx_depth, 100);
	/* an initiator: one response per outstanding command */
	iser_sizes_ffp(&s, &p, IDM_ROLE_INITIATOR, 0, 256);
	ck_assert_uint_eq(s.rx_depth, 256 + ISER_RX_SPARE);
	/* big segments: the byte bound, but never below the minimum */
	p.initial_r2t = false;
	p.target_recv_dsl = 262144;
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 0, 128);
	ck_assert_uint_eq(s.rx_depth, 127); /* 32 MiB / 257 KiB < 2 x 128 + 16 */
	ck_assert_uint_le((uint64_t)s.rx_depth * s.rx_msg, ISER_RX_BYTES);
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 200, 128);
	ck_assert_uint_eq(s.rx_depth, 200); /* the minimum wins */
	/* a huge window or first burst cannot overflow: count cap */
	p.target_recv_dsl = 512;
	p.first_burst_length = 16777215;
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 0, 0xffffffffu);
	ck_assert_uint_le(s.rx_depth, ISER_RX_CAP);
	ck_assert_uint_le((uint64_t)s.rx_depth * s.rx_msg, ISER_RX_BYTES);
}
END_TEST

/* The shared receive queue: buffers for the segment Linux's iSER
 * initiator negotiates, its size the sum of what the connections would
 * post, within a byte and count cap, and room added at low water for
 * bursts. */
START_TEST(srq_sizing)
{
	struct idm_conn_params p;
	struct iser_sizes s;
	uint32_t msg = iser_srq_msg_size(), cap, t;

	/* the keys of Linux's ib_iser against idm-target: fits, with the
	 * largest AHS too */
	idm_prov_params_default(&p);
	p.initial_r2t = false;
	p.immediate_data = true;
	p.first_burst_length = 262144;
	p.target_recv_dsl = IDM_SHARED_RECV_DSL;
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 0, 128);
	ck_assert(iser_srq_fits(s.rx_msg));
	ck_assert_uint_eq(msg % 64, 0);
	p.max_ahs_length = 0;
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 0, 128);
	ck_assert(iser_srq_fits(s.rx_msg));
	/* a larger declared segment does not */
	p.target_recv_dsl = IDM_SHARED_RECV_DSL + 512;
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 0, 128);
	ck_assert(!iser_srq_fits(s.rx_msg));
	/* the cap: the count cap, above what one such connection had on
	 * a ring of its own (3912), within the byte cap */
	p.target_recv_dsl = IDM_SHARED_RECV_DSL;
	p.max_ahs_length = 256;
	iser_sizes_ffp(&s, &p, IDM_ROLE_TARGET, 0, 128);
	cap = iser_srq_cap(msg, 0);
	ck_assert_uint_eq(cap, ISER_RX_CAP);
	ck_assert_uint_ge(cap, s.rx_depth); /* one session keeps its depth */
	ck_assert_uint_le((uint64_t)cap * msg, ISER_SRQ_BYTES);
	ck_assert_uint_eq(iser_srq_cap(262144 + 1024, 0), ISER_SRQ_BYTES / (262144 + 1024));
	/* the device's limit and the count cap (the receive CQ's room) */
	ck_assert_uint_eq(iser_srq_cap(msg, 100), 100);
	ck_assert_uint_eq(iser_srq_cap(64, 0), ISER_RX_CAP);
	ck_assert_uint_eq(iser_srq_cap(1u << 30, 0), 1);
	/* grows to the sum of the wants (one login: at least a step) */
	ck_assert_uint_eq(iser_srq_target(4, 0, 0, cap), ISER_SRQ_STEP);
	ck_assert_uint_eq(iser_srq_target(127 + 4, 16, 16, cap), 131);
	/* 64 sessions want 64 x 3912: the cap */
	ck_assert_uint_eq(iser_srq_target(64ull * 3912, 131, 131, cap), cap);
	/* enough posted: no growth; low water: a quarter more, capped */
	ck_assert_uint_eq(iser_srq_target(100, 160, 100, cap), 160);
	ck_assert_uint_eq(iser_srq_target(100, 160, 19, cap), 200);
	ck_assert_uint_eq(iser_srq_target(30, 40, 15, cap), 56);
	t = iser_srq_target(100, cap - 1, 0, cap);
	ck_assert_uint_eq(t, cap);
	/* never shrinks while connections are attached */
	ck_assert_uint_eq(iser_srq_target(0, 200, 200, cap), 200);
	ck_assert_uint_eq(iser_srq_target(0, 200, 200, 100), 200);
}
END_TEST

START_TEST(unsolicited)
{
	/* the initiator's plan (iser_initiator.c), from the shared layer */
	struct idm_conn_params p;
	struct idm_prov_unsol_plan pl;

	idm_prov_params_default(&p); /* ImmediateData=Yes InitialR2T=Yes FBL 64K */
	idm_prov_unsol_plan(&p, 8192, 1000000, 1000000, &pl);
	ck_assert_uint_eq(pl.imm, 8192);
	ck_assert_uint_eq(pl.unsol_end, 8192);
	idm_prov_unsol_plan(&p, 8192, 100, 100, &pl);
	ck_assert_uint_eq(pl.imm, 100);
	ck_assert_uint_eq(pl.unsol_end, 100);
	p.initial_r2t = false;
	idm_prov_unsol_plan(&p, 8192, 1000000, 1000000, &pl);
	ck_assert_uint_eq(pl.imm, 8192);
	ck_assert_uint_eq(pl.unsol_end, 65536);
	p.immediate_data = false;
	idm_prov_unsol_plan(&p, 8192, 30000, 30000, &pl);
	ck_assert_uint_eq(pl.imm, 0);
	ck_assert_uint_eq(pl.unsol_end, 30000);
	p.initial_r2t = true;
	idm_prov_unsol_plan(&p, 8192, 30000, 30000, &pl);
	ck_assert_uint_eq(pl.imm + pl.unsol_end, 0);
}
END_TEST

/* A control-type Send of one PDU: iSER header, BHS, data. */
static uint32_t mk_send(uint8_t *msg, uint8_t op, uint32_t dlen, uint32_t extra)
{
	memset(msg, 0, ISER_HDR_LEN + 48 + dlen + extra);
	msg[0] = ISER_OP_CTRL;
	msg[ISER_HDR_LEN] = op;
	msg[ISER_HDR_LEN + 1] = 0x80;
	msg[ISER_HDR_LEN + 5] = (uint8_t)(dlen >> 16);
	msg[ISER_HDR_LEN + 6] = (uint8_t)(dlen >> 8);
	msg[ISER_HDR_LEN + 7] = (uint8_t)dlen;
	return ISER_HDR_LEN + 48 + dlen + extra;
}

START_TEST(rx_check)
{
	uint8_t msg[256];
	struct iser_rx rx;
	char why[160];
	uint32_t len;

	/* a NOP-Out with 8 bytes of data, to the target in full feature phase */
	len = mk_send(msg, 0x00 | 0x40 /* I */, 8, 0);
	ck_assert_int_eq(iser_rx_check(msg, len, sizeof(msg), IDM_ROLE_TARGET, false,
				       &rx, why, sizeof(why)), 0);
	ck_assert(!rx.is_hello);
	ck_assert(rx.pdu.bhs == msg + ISER_HDR_LEN);
	ck_assert(rx.pdu.data == msg + ISER_HDR_LEN + 48);
	ck_assert_uint_eq(rx.pdu.data_len, 8);
	ck_assert(rx.pdu.ahs == NULL);
	/* the Send is shorter than the PDU claims */
	ck_assert_int_eq(iser_rx_check(msg, len - 1, sizeof(msg), IDM_ROLE_TARGET, false,
				       &rx, why, sizeof(why)), -EPROTO);
	ck_assert_str_eq(why, "PDU (opcode 0, AHS 0, data 8) longer than its 83-byte Send");
	ck_assert(rx.pdu.bhs == NULL);
	/* a Send longer than the buffer it landed in */
	ck_assert_int_eq(iser_rx_check(msg, len, len - 1, IDM_ROLE_TARGET, false,
				       &rx, why, sizeof(why)), -EPROTO);
	ck_assert_str_eq(why, "malformed iSER message (byte 0 0x10, 84 bytes)");
	/* a Send of 0 bytes, which nobody posts but soft-RoCE delivers
	 * after lost ACKs (doc/iser.md): refused, nothing read from it */
	ck_assert_int_eq(iser_rx_check(msg, 0, sizeof(msg), IDM_ROLE_TARGET, false,
				       &rx, why, sizeof(why)), -EPROTO);
	ck_assert_str_eq(why, "malformed iSER message (byte 0 0, 0 bytes)");
	/* Data-In and R2T never travel in Sends */
	len = mk_send(msg, 0x25, 0, 0);
	ck_assert_int_eq(iser_rx_check(msg, len, sizeof(msg), IDM_ROLE_INITIATOR, false,
				       &rx, why, sizeof(why)), -EPROTO);
	ck_assert_str_eq(why, "Data-In PDU on an iSER connection");
	ck_assert(rx.pdu.bhs == msg + ISER_HDR_LEN); /* lengths fit: counted */
	/* a target opcode from the initiator, a command during login */
	len = mk_send(msg, 0x23, 0, 0);
	ck_assert_int_eq(iser_rx_check(msg, len, sizeof(msg), IDM_ROLE_TARGET, true,
				       &rx, why, sizeof(why)), -EPROTO);
	ck_assert_str_eq(why, "opcode 0x23 not valid from the initiator");
	len = mk_send(msg, 0x01, 0, 0);
	ck_assert_int_eq(iser_rx_check(msg, len, sizeof(msg), IDM_ROLE_TARGET, true,
				       &rx, why, sizeof(why)), -EPROTO);
	ck_assert_str_eq(why, "opcode 0x1 not allowed in the login phase");
	/* a Hello */
	memset(msg, 0, ISER_HDR_LEN);
	msg[0] = ISER_OP_HELLO;
	msg[1] = 0xaa;
	msg[3] = 16;
	ck_assert_int_eq(iser_rx_check(msg, ISER_HDR_LEN, sizeof(msg), IDM_ROLE_TARGET,
				       true, &rx, why, sizeof(why)), 0);
	ck_assert(rx.is_hello);
	ck_assert_uint_eq(rx.hello.ird_ord, 16);
}
END_TEST

START_TEST(hello_answer)
{
	struct iser_hello h = {.opcode = ISER_OP_HELLO, .max_ver = 10,
			       .min_ver = 10, .ird_ord = 16};
	struct iser_hello rep;

	iser_hello_answer(&h, 4, &rep);
	ck_assert(rep.opcode == ISER_OP_HELLO_REPLY && !rep.reject);
	ck_assert_uint_eq(rep.ird_ord, 4);
	ck_assert_uint_eq(rep.max_ver, ISER_VERSION);
	iser_hello_answer(&h, 0, &rep); /* RDMA Reads asked of a target without */
	ck_assert(rep.reject);
	h.min_ver = 11;
	iser_hello_answer(&h, 4, &rep);
	ck_assert(rep.reject);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { hdr_layout,
				       hdr_invalid_halves_are_zero,
				       hdr_decode_roundtrip_and_ignores,
				       hdr_decode_rejects,
				       hello_codec,
				       rx_check,
				       hello_answer,
				       cm_private_data,
				       keys_force_and_check,
				       sizes,
				       rx_provisioning,
				       srq_sizing,
				       unsolicited,
				       NULL };

	return test_suite_run_case("iser_wire", "pure", 0, tests);
}
