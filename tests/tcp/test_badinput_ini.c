/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Bad input from the wire (issue 2 item 6), against the libidm initiator:
 * a raw-socket target answers its login properly, then sends Data-In,
 * R2Ts and other PDUs a broken or hostile target would. Each case asserts
 * one clean outcome: exactly one connection_terminate_notify with a
 * non-empty idm_conn_error() and the socket closed, or - where RFC 7143
 * lets the receiver discard the PDU - a connection that still works. Guard
 * bytes around the read buffer catch writes outside it; the raw target
 * checks no byte outside the write buffer is ever sent.
 */
#include "raw_peer.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- against the libidm initiator ------------------------------------ */

/* Start a READ of len in initiator slot 0 and return its ITT as the raw
 * target saw it. */
static uint32_t start_read(struct h *h, struct h_raw *r, uint32_t len)
{
	uint8_t bhs[48];

	h_slot_prepare(h, 0, false, len);
	ck_assert_int_eq(h_slot_start(h, 0, 0), 0);
	h_raw_recv_op(h, r, IDM_ISCSI_OP_SCSI_CMD, bhs);
	ck_assert_uint_eq(idm_iscsi_get32(bhs + IDM_ISCSI_CMD_EDTL), len);
	return idm_iscsi_bhs_itt(bhs);
}

START_TEST(datain_unknown_itt)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	static uint8_t data[512];
	uint32_t itt;

	h_params_default(&p);
	h_raw_evil_target(&h, &r, &p, 8192);
	itt = start_read(&h, &r, 8192);
	memset(data, 0x55, sizeof(data));
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_IN, itt ^ 0x10000, IDM_ISCSI_RESERVED_TAG, 0,
		    0, false);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, sizeof(data), 0), 0);
	h_raw_initiator_outcome(&h, &r, true, "Data-In for an unknown ITT");
	ck_assert_msg(h.i.terminate_count || h_raw_ibuf_untouched(&h, 0, 8192),
		      "Data-In for another ITT landed in the read buffer");
	h_raw_end(&h, &r);
}
END_TEST

static void datain_outside(uint32_t off, uint32_t len, const char *what)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	static uint8_t data[8192];
	uint32_t itt;

	h_params_default(&p);
	h_raw_evil_target(&h, &r, &p, 8192);
	itt = start_read(&h, &r, 4096);
	memset(data, 0x66, sizeof(data));
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_IN, itt, IDM_ISCSI_RESERVED_TAG, 0, off, true);
	(void)h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, len, 0);
	h_raw_initiator_outcome(&h, &r, true, what);
	/* the read buffer is [0, 4096); its slot is 8192 with guards after */
	ck_assert_msg(h_raw_ibuf_untouched(&h, 4096, 4096),
		      "%s: bytes past the read buffer were written", what);
	ck_assert_int_eq(h_check_guards(&h), 0);
	h_raw_end(&h, &r);
}

START_TEST(datain_outside_buffer)
{
	datain_outside(4096 - 256, 512, "Data-In [3840, +512) past a 4096-byte read");
}
END_TEST

START_TEST(datain_offset_wraps)
{
	datain_outside(0xffffff00u, 512, "Data-In offset 0xffffff00 (+512 wraps)");
}
END_TEST

START_TEST(datain_over_mrdsl)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	static uint8_t data[8192];
	uint32_t itt;

	h_params_default(&p);
	p.ini_mrdsl = 4096;
	h_raw_evil_target(&h, &r, &p, 8192);
	itt = start_read(&h, &r, 8192);
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_IN, itt, IDM_ISCSI_RESERVED_TAG, 0, 0, true);
	(void)h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, sizeof(data), 0);
	h_raw_initiator_outcome(&h, &r, false,
			     "Data-In of 8192 bytes > initiator MaxRecvDataSegmentLength 4096");
	h_raw_end(&h, &r);
}
END_TEST

START_TEST(target_unknown_opcode)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48] = { 0 };

	h_params_default(&p);
	h_raw_evil_target(&h, &r, &p, 8192);
	bhs[0] = 0x3a; /* no such target opcode */
	bhs[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, IDM_ISCSI_RESERVED_TAG);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, NULL, 0, 0), 0);
	/* well framed in full feature phase: handed to the caller, which
	 * decides (doc/api.md 7.1); the connection goes on */
	ck_assert_int_eq(h_raw_initiator_outcome(&h, &r, true,
						 "unknown target opcode 0x3a"),
			 H_RAW_DROPPED);
	ck_assert_msg(h.i.unexpected == 1 && strstr(h.i.why, "opcode 0x3a"),
		      "opcode 0x3a did not reach control_notify (%d: %s)",
		      h.i.unexpected, h.i.why);
	h.i.unexpected = 0; /* expected here */
	h_raw_end(&h, &r);
}
END_TEST

START_TEST(datain_header_digest)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	static uint8_t data[4096];
	uint32_t itt;

	h_params_default(&p);
	p.header_digest = true;
	p.data_digest = true;
	h_raw_evil_target(&h, &r, &p, 8192);
	itt = start_read(&h, &r, 4096);
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_IN, itt, IDM_ISCSI_RESERVED_TAG, 0, 0, true);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, sizeof(data),
					H_RAW_BAD_HD), 0);
	h_raw_initiator_outcome(&h, &r, true, "Data-In with a bad header digest");
	ck_assert_msg(h.i.terminate_count || !h.slots[0].done,
		      "a Data-In with a bad header digest completed the read");
	h_raw_end(&h, &r);
}
END_TEST

START_TEST(vanish_mid_datain_pdu)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	static uint8_t pkt[48 + 1000];
	uint32_t itt;

	h_params_default(&p);
	h_raw_evil_target(&h, &r, &p, 8192);
	itt = start_read(&h, &r, 4096);
	h_raw_data_bhs(pkt, IDM_ISCSI_OP_DATA_IN, itt, IDM_ISCSI_RESERVED_TAG, 0, 0, true);
	idm_iscsi_bhs_set_data_len(pkt, 4096);
	ck_assert_int_eq(h_raw_write(&h, &r, pkt, sizeof(pkt)), 0);
	h_progress_for(&h, 50);
	h_raw_close(&r);
	h_progress_for(&h, 500);
	h_raw_assert_failed_once(&h.i, __func__);
	ck_assert_int_eq(h_check_guards(&h), 0);
	ck_assert(h_raw_ibuf_untouched(&h, 1000, 4096 - 1000));
	h_log("target gone after 1000 of 4096 Data-In bytes: one notify, reason: %s",
	      h.i.error);
	h_fini(&h);
}
END_TEST

/* Start a WRITE of len (InitialR2T=Yes, no immediate data) in slot 0;
 * returns its ITT as the raw target saw it. */
static uint32_t start_write(struct h *h, struct h_raw *r, uint32_t len)
{
	uint8_t bhs[48];

	h_slot_prepare(h, 0, true, len);
	ck_assert_int_eq(h_slot_start(h, 0, 0), 0);
	h_raw_recv_op(h, r, IDM_ISCSI_OP_SCSI_CMD, bhs);
	ck_assert_uint_eq(idm_iscsi_get32(bhs + IDM_ISCSI_CMD_EDTL), len);
	return idm_iscsi_bhs_itt(bhs);
}

static void params_r2t(struct h_params *p)
{
	h_params_default(p);
	p->immediate_data = false;
	p->initial_r2t = true;
	p->first_burst = 4096;
	p->max_burst = 4096;
	p->tgt_mrdsl = 8192;
}

static void send_r2t(struct h *h, struct h_raw *r, uint32_t itt, uint32_t ttt,
		     uint32_t off, uint32_t len)
{
	uint8_t bhs[48] = { 0 };

	bhs[0] = IDM_ISCSI_OP_R2T;
	bhs[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, itt);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_TTT, ttt);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, r->statsn);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, r->cmdsn + 1);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_MAX_CMDSN, r->cmdsn + 64);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_BUF_OFFSET, off);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_DESIRED_LEN, len);
	ck_assert_int_eq(h_raw_send_pdu(h, r, bhs, NULL, 0, NULL, 0, 0), 0);
}

/* Read what the initiator sends for 300 ms: every Data-Out must stay in
 * [0, len) of the write buffer and carry its bytes. Returns the number of
 * Data-Out bytes seen. */
static uint32_t drain_dataout(struct h *h, struct h_raw *r, uint32_t len,
			      const char *what)
{
	static uint8_t buf[65536];
	uint8_t bhs[48];
	uint32_t dlen, seen = 0;

	while (h_raw_recv_pdu(h, r, bhs, buf, sizeof(buf), &dlen, 300) == 0) {
		uint32_t off = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET);

		if (idm_iscsi_bhs_opcode(bhs) != IDM_ISCSI_OP_DATA_OUT)
			continue;
		ck_assert_msg((uint64_t)off + dlen <= len,
			      "%s: Data-Out [%u, +%u) outside the %u-byte write buffer",
			      what, off, dlen, len);
		ck_assert_msg(h->slots[0].mem &&
				      !memcmp(buf, h->slots[0].mem + H_GUARD + off, dlen),
			      "%s: Data-Out bytes differ from the buffer", what);
		seen += dlen;
	}
	return seen;
}

static void r2t_case(uint32_t len, bool tag_ok, uint32_t off, uint32_t r2t_len,
		     const char *what)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint32_t itt, seen;

	params_r2t(&p);
	h_raw_evil_target(&h, &r, &p, 8192);
	itt = start_write(&h, &r, len);
	send_r2t(&h, &r, tag_ok ? itt : itt ^ 0x10000, 0x55, off, r2t_len);
	seen = drain_dataout(&h, &r, len, what);
	ck_assert_msg(tag_ok || seen == 0, "%s: Data-Out sent for an unknown ITT",
		      what);
	h_raw_initiator_outcome(&h, &r, true, what);
	h_raw_end(&h, &r);
}

START_TEST(r2t_unknown_itt)
{
	r2t_case(4096, false, 0, 4096, "R2T for an unknown ITT");
}
END_TEST

START_TEST(r2t_beyond_buffer)
{
	r2t_case(4096, true, 4096 - 256, 512, "R2T [3840, +512) past a 4096-byte write");
}
END_TEST

START_TEST(r2t_offset_wraps)
{
	r2t_case(4096, true, 0xffffff00u, 512, "R2T offset 0xffffff00 (+512 wraps)");
}
END_TEST

START_TEST(r2t_zero_length)
{
	/* RFC 7143 11.8.6: Desired Data Transfer Length MUST NOT be 0 */
	r2t_case(4096, true, 0, 0, "R2T with Desired Data Transfer Length 0");
}
END_TEST

START_TEST(r2t_over_max_burst)
{
	/* ... nor exceed MaxBurstLength (4096 here) */
	r2t_case(8192, true, 0, 8192, "R2T of 8192 > MaxBurstLength 4096");
}
END_TEST

START_TEST(r2t_for_read_task)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint32_t itt;

	params_r2t(&p);
	h_raw_evil_target(&h, &r, &p, 8192);
	itt = start_read(&h, &r, 4096);
	send_r2t(&h, &r, itt, 0x56, 0, 4096);
	ck_assert_msg(drain_dataout(&h, &r, 0, "R2T for a read") == 0,
		      "Data-Out sent for a read command");
	h_raw_initiator_outcome(&h, &r, true, "R2T for a read command");
	ck_assert_msg(h_raw_ibuf_untouched(&h, 0, 8192), "read buffer touched");
	h_raw_end(&h, &r);
}
END_TEST

START_TEST(datain_for_write_task)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	static uint8_t data[512];
	uint32_t itt;

	params_r2t(&p);
	h_raw_evil_target(&h, &r, &p, 8192);
	itt = start_write(&h, &r, 4096);
	memset(data, 0x99, sizeof(data));
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_IN, itt, IDM_ISCSI_RESERVED_TAG, 0, 0, false);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, sizeof(data), 0), 0);
	h_raw_initiator_outcome(&h, &r, true, "Data-In for a write command");
	/* the write buffer is the caller's source: it must be intact */
	ck_assert_msg(h_pattern_check(h.slots[0].mem + H_GUARD, 4096,
				      h.slots[0].seed) < 0,
		      "Data-In was written into the write buffer");
	ck_assert_int_eq(h_check_guards(&h), 0);
	h_raw_end(&h, &r);
}
END_TEST

/* ---- connecting ------------------------------------------------------ */

static bool connect_reported(struct h *h)
{
	return h->connected || h->i.terminate_count;
}

START_TEST(connect_refused)
{
	struct h h;
	struct h_params p;
	int port = 0, lfd;

	ck_assert_msg(h_init(&h, 8192, 1) == 0, "h_init: %s", h.err);
	/* a port that was just free: nothing listens there now */
	lfd = h_raw_listen(&port);
	ck_assert_int_ge(lfd, 0);
	close(lfd);
	h_params_default(&p);
	ck_assert_int_eq(h_connect_start(&h, &p, port, 3000), 0);
	ck_assert_int_eq(h_progress_until(&h, connect_reported, 5000), 0);
	h_progress_for(&h, 100);
	ck_assert_msg(h.connected && h.connect_status < 0,
		      "connected(%d) for a refused connection", h.connect_status);
	ck_assert_msg(h.i.terminate_count == 0,
		      "terminate notify for a connection that never came up");
	h_log("connect to a closed port: connected(%s), no terminate notify",
	      idm_strerror(h.connect_status));
	h_fini(&h);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = {
		datain_unknown_itt,    datain_outside_buffer,
		datain_offset_wraps,   datain_over_mrdsl,
		target_unknown_opcode, datain_header_digest,
		vanish_mid_datain_pdu, r2t_unknown_itt,
		r2t_beyond_buffer,     r2t_offset_wraps,
		r2t_zero_length,       r2t_over_max_burst,
		r2t_for_read_task,     datain_for_write_task,
		connect_refused,       NULL
	};

	return h_main("test_badinput_ini", 110, "tcp_badinput_initiator",
		      "evil_target", 30, tests);
}
