/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Late answers for tasks the caller released (issue 35 item 2), against
 * the libidm initiator: a raw-socket target receives commands whose tasks
 * the caller then deallocates (as an initiator does on a timeout, an
 * abort or a LUN reset, many at once), and answers them afterwards with
 * Data-In and R2T. Each is dropped and counted (late_pdus_dropped), no
 * byte reaches the released buffer, a status still reaches
 * control_notify without a task, and the connection stays healthy: a
 * following read completes with its data. Tasks that completed normally
 * take no room in what the initiator remembers; the bound itself and the
 * malformed side (a bad length or data digest on a late Data-In) still
 * fail the connection, as an ITT that never was a command does
 * (test_badinput_ini).
 */
#include "raw_peer.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* The most released ITTs remembered with no command window set:
 * TCP_LATE_MIN (4 per command of a default window of 32, at least 128). */
#define LATE_BOUND 128

/* Start a command of len in slot s, wait until the raw target has it and
 * return its ITT. */
static uint32_t start_cmd(struct h *h, struct h_raw *r, size_t s, bool write,
			  uint32_t len)
{
	uint8_t bhs[48];

	h_slot_prepare(h, s, write, len);
	ck_assert_msg(h_slot_start(h, s, h_disk_slot_off(h, s) - H_GUARD) == 0,
		      "%s", h->err);
	h_raw_recv_op(h, r, IDM_ISCSI_OP_SCSI_CMD, bhs);
	r->cmdsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_CMDSN);
	ck_assert_uint_eq(idm_iscsi_bhs_itt(bhs), h->slots[s].itt);
	return idm_iscsi_bhs_itt(bhs);
}

/* The caller gives up on slot s's command (its timeout, an abort). */
static void release(struct h *h, size_t s)
{
	struct h_slot *sl = &h->slots[s];

	ck_assert_ptr_nonnull(sl->task);
	idm_deallocate_task_resources(sl->task);
	sl->task = NULL;
	sl->busy = false;
}

static void target_fields(uint8_t bhs[48], struct h_raw *r, bool status)
{
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, status ? r->statsn++ : 0);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, r->cmdsn + 1);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_MAX_CMDSN, r->cmdsn + 64);
}

/* A Data-In of len bytes at offset 0 for itt; with status: final, S
 * bit, GOOD. */
static int send_datain(struct h *h, struct h_raw *r, uint32_t itt,
		       const uint8_t *data, uint32_t len, bool status,
		       unsigned flags)
{
	uint8_t bhs[48];

	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_IN, itt, IDM_ISCSI_RESERVED_TAG, 0,
		       0, status);
	if (status)
		bhs[1] |= IDM_ISCSI_DATAIN_STATUS;
	target_fields(bhs, r, status);
	return h_raw_send_pdu(h, r, bhs, NULL, 0, data, len, flags);
}

static void send_r2t(struct h *h, struct h_raw *r, uint32_t itt, uint32_t len)
{
	uint8_t bhs[48] = { 0 };

	bhs[0] = IDM_ISCSI_OP_R2T;
	bhs[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, itt);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_TTT, 0x100 + itt);
	target_fields(bhs, r, false);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_DESIRED_LEN, len);
	ck_assert_int_eq(h_raw_send_pdu(h, r, bhs, NULL, 0, NULL, 0, 0), 0);
}

static void send_scsi_rsp(struct h *h, struct h_raw *r, uint32_t itt)
{
	uint8_t bhs[48] = { 0 };

	bhs[0] = IDM_ISCSI_OP_SCSI_RSP;
	bhs[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, itt);
	target_fields(bhs, r, true);
	ck_assert_int_eq(h_raw_send_pdu(h, r, bhs, NULL, 0, NULL, 0, 0), 0);
}

static uint64_t late_dropped(struct h *h)
{
	struct idm_conn_stats st = { .size = sizeof(st) };

	ck_assert_int_eq(idm_conn_get_stats(h->i.conn, &st), 0);
	return st.late_pdus_dropped;
}

/* The raw target serves a read of len in slot s completely (its data
 * from the disk slot, status in the last Data-In); the initiator must
 * complete it with the right bytes. */
static void read_completes(struct h *h, struct h_raw *r, size_t s,
			   uint32_t len)
{
	uint32_t itt = start_cmd(h, r, s, false, len);
	struct h_slot *sl = &h->slots[s];

	ck_assert_int_eq(send_datain(h, r, itt, h_disk_slot(h, s), len, true, 0),
			 0);
	for (int i = 0; i < 150 && !sl->done && !h->i.terminate_count; i++)
		(void)idm_ctx_progress(h->ctx, 20);
	ck_assert_msg(sl->done && !h->i.terminate_count,
		      "read of %u after late answers not completed (%s)", len,
		      h->i.error);
	ck_assert_uint_eq(sl->received, len);
	ck_assert_msg(h_pattern_check(sl->mem + H_GUARD, len, sl->seed) < 0,
		      "read after late answers: wrong data");
}

/* Wait until the initiator took in everything sent so far: a NOP-In
 * behind it reaches control_notify. */
static void drain(struct h *h, struct h_raw *r)
{
	uint8_t bhs[48] = { 0 };
	int before = h->i.control_count;

	bhs[0] = IDM_ISCSI_OP_NOP_IN;
	bhs[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, IDM_ISCSI_RESERVED_TAG);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_TTT, IDM_ISCSI_RESERVED_TAG);
	target_fields(bhs, r, false);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, r->statsn);
	ck_assert_int_eq(h_raw_send_pdu(h, r, bhs, NULL, 0, NULL, 0, 0), 0);
	for (int i = 0; i < 250 && !h->i.terminate_count &&
			!(h->i.control_count > before &&
			  h->i.last_opcode == IDM_ISCSI_OP_NOP_IN);
	     i++)
		(void)idm_ctx_progress(h->ctx, 20);
	ck_assert_msg(!h->i.terminate_count,
		      "connection failed on late answers: %s", h->i.error);
	ck_assert_msg(h->i.last_opcode == IDM_ISCSI_OP_NOP_IN,
		      "the NOP-In behind the late answers never came through");
}

#define NREL 100 /* released tasks: > 32 (the old memory), > the window */

static void many_released(bool digests)
{
	static uint8_t junk[8192];
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint32_t itt[NREL];
	uint64_t want = 0;
	int unexpected;

	h_params_default(&p);
	p.header_digest = p.data_digest = digests;
	h_raw_evil_target(&h, &r, &p, 8192);
	memset(junk, 0x77, sizeof(junk));

	/* reads and writes alike; all released before any answer */
	for (int i = 0; i < NREL; i++) {
		itt[i] = start_cmd(&h, &r, 0, i % 2, 4096);
		release(&h, 0);
	}
	/* the writes' data in slot 0 goes: any byte there is a late one */
	memset(h.slots[0].mem + H_GUARD, H_GUARD_BYTE, h.slots[0].cap);
	/* normal traffic after them: its completed tasks must not push the
	 * released ITTs out of what the initiator remembers */
	for (int i = 0; i < 2 * LATE_BOUND; i++)
		read_completes(&h, &r, 1, 512);
	ck_assert_uint_eq(late_dropped(&h), 0);

	/* every released task answered late with a Data-In and an R2T */
	for (int i = 0; i < NREL; i++) {
		ck_assert_int_eq(send_datain(&h, &r, itt[i], junk, 4096, false, 0), 0);
		send_r2t(&h, &r, itt[i], 4096);
		want += 2;
	}
	drain(&h, &r);
	ck_assert_uint_eq(late_dropped(&h), want);

	/* their statuses: a Data-In with status (its data dropped and
	 * counted) or a SCSI Response, for the first 20; both reach
	 * control_notify without a task (the caller decides): the harness
	 * calls each an unexpected response */
	unexpected = h.i.unexpected;
	for (int i = 0; i < 20; i++) {
		if (i % 2) {
			send_scsi_rsp(&h, &r, itt[i]);
		} else {
			ck_assert_int_eq(send_datain(&h, &r, itt[i], junk, 1024,
						     true, 0), 0);
			want++;
		}
	}
	drain(&h, &r);
	ck_assert_int_eq(h.i.unexpected - unexpected, 20);
	ck_assert_msg(strstr(h.i.why, "response for unknown ITT"), "%s", h.i.why);
	h.i.unexpected = unexpected; /* expected here */
	ck_assert_uint_eq(late_dropped(&h), want);

	/* nothing reached the released buffer; the connection serves */
	ck_assert_msg(h_raw_ibuf_untouched(&h, 0, 8192),
		      "late Data-In landed in a released task's buffer");
	ck_assert_int_eq(h_check_guards(&h), 0);
	read_completes(&h, &r, 1, 8192);
	h_raw_initiator_outcome(&h, &r, true, "late answers for released tasks");
	ck_assert_int_eq(h.i.terminate_count, 0);
	h_log("%d released tasks (%s): %llu late PDUs dropped, the connection "
	      "still serves reads", NREL, digests ? "digests" : "no digests",
	      (unsigned long long)late_dropped(&h));
	h_raw_end(&h, &r);
}

START_TEST(late_answers_released)
{
	many_released(false);
}
END_TEST

START_TEST(late_answers_released_digests)
{
	many_released(true);
}
END_TEST

/* Once the ring is full the oldest released ITT is forgotten: its late
 * Data-In then fails the connection like any unknown ITT; the newest one
 * is still dropped. The bound holds whatever the caller releases. */
START_TEST(late_answers_bound)
{
	static uint8_t junk[512];
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint32_t first = 0, last = 0;

	h_params_default(&p);
	h_raw_evil_target(&h, &r, &p, 8192);
	for (int i = 0; i < LATE_BOUND + 1; i++) {
		last = start_cmd(&h, &r, 0, false, 512);
		if (i == 0)
			first = last;
		release(&h, 0);
	}
	ck_assert_int_eq(send_datain(&h, &r, last, junk, sizeof(junk), false, 0),
			 0);
	drain(&h, &r);
	ck_assert_uint_eq(late_dropped(&h), 1);
	ck_assert_int_eq(send_datain(&h, &r, first, junk, sizeof(junk), false, 0),
			 0);
	h_raw_initiator_outcome(&h, &r, false,
				"Data-In for a released ITT beyond the bound");
	ck_assert_msg(strstr(h.i.error, "unknown ITT"), "%s", h.i.error);
	h_raw_end(&h, &r);
}
END_TEST

/* A late Data-In is still framed and checked like any: a data segment
 * over our MaxRecvDataSegmentLength fails the connection. */
START_TEST(late_datain_over_mrdsl)
{
	static uint8_t junk[8192];
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint32_t itt;

	h_params_default(&p);
	p.ini_mrdsl = 4096;
	h_raw_evil_target(&h, &r, &p, 8192);
	itt = start_cmd(&h, &r, 0, false, 8192);
	release(&h, 0);
	(void)send_datain(&h, &r, itt, junk, sizeof(junk), false, 0);
	h_raw_initiator_outcome(&h, &r, false,
				"late Data-In of 8192 bytes > MaxRecvDataSegmentLength 4096");
	ck_assert_msg(strstr(h.i.error, "DataSegmentLength"), "%s", h.i.error);
	ck_assert_uint_eq(late_dropped(&h), 0);
	h_raw_end(&h, &r);
}
END_TEST

/* ... and its data digest is checked although the data is dropped. */
START_TEST(late_datain_bad_digest)
{
	static uint8_t junk[4096];
	struct idm_conn_stats st = { .size = sizeof(st) };
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint32_t itt;

	h_params_default(&p);
	p.header_digest = p.data_digest = true;
	h_raw_evil_target(&h, &r, &p, 8192);
	itt = start_cmd(&h, &r, 0, false, 4096);
	release(&h, 0);
	ck_assert_int_eq(send_datain(&h, &r, itt, junk, sizeof(junk), false,
				     H_RAW_BAD_DD), 0);
	h_raw_initiator_outcome(&h, &r, false,
				"late Data-In with a bad data digest");
	ck_assert_int_eq(idm_conn_get_stats(h.i.conn, &st), 0);
	ck_assert_uint_eq(st.data_digest_errors, 1);
	h_raw_end(&h, &r);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = {
		late_answers_released, late_answers_released_digests,
		late_answers_bound,    late_datain_over_mrdsl,
		late_datain_bad_digest, NULL
	};

	return h_main("test_late_answers", 110, "tcp_late_answers",
		      "late_answers", 60, tests);
}
