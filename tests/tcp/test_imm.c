/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Immediate and unsolicited data at the TCP target, sent by a raw
 * initiator with the PDUs cut at odd places (a piece of 1, 2, 47... bytes
 * read by libidm before the next is sent), digests off and on:
 *  - the SCSI Command's control_notify comes before its immediate data is
 *    read, and a Get_Data from it gets the immediate data and the
 *    unsolicited Data-Out in its buffer, also when that buffer is made
 *    of scattered segments (readv over them, digest across them), with
 *    no payload copied but the few bytes read along with a header;
 *  - idm_pdu_data() on the command in that callback, before or after its
 *    Get_Data, is NULL, 0 and returns at once: the callback never waits
 *    for data the peer has not sent (the raw peer runs on the test's own
 *    thread, so a callback that waited would never see it);
 *  - a Get_Data asked for after the callback, once the whole command is
 *    in, still gets the immediate data (from the staging copy, every
 *    byte counted as copied);
 *  - a Get_Data that does not cover the immediate data (a split range)
 *    gets it through the staging copy;
 *  - a wrong data digest on immediate data fails the connection, with
 *    no completion of the Get_Data.
 */
#include "raw_peer.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ITT 0x3000
#define PING_ITT 0x3100
#define N(a) (sizeof(a) / sizeof((a)[0]))

enum mode {
	GET_ONLY,    /* Get_Data only: the data goes straight to its buffer */
	PEEK_BEFORE, /* idm_pdu_data() before the Get_Data */
	PEEK_AFTER,  /* idm_pdu_data() after the Get_Data */
	SPLIT,       /* a first Get_Data shorter than the immediate data */
	LATER,       /* Get_Data after the callback, the data all in */
};

struct imm_case {
	uint32_t len, fbl, mrdsl;
	bool ir2t;
};

/* the target's disk as scattered segments (harness_sg.c): PDUs and
 * segment boundaries fall anywhere */
static const uint32_t odd_segs[] = { 1, 511, 4097, 8193 };

/* What the hooks saw. */
static struct {
	uint32_t imm;
	bool data_seen_empty; /* the Get_Data buffer had no data at notify */
	int peeks;
	bool peek_ok;
	double peek_ms; /* longest idm_pdu_data() call */
} seen;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The data is not in yet (the raw peer sends it after this callback
 * returns): idm_pdu_data() must say so at once, not wait for it. */
static bool check_peek(struct h *h)
{
	size_t n = 12345, n2 = 12345;
	double t0 = now_ms(), dt;
	const uint8_t *d = idm_pdu_data(h->cmd_pdu, &n);
	const uint8_t *again = idm_pdu_data(h->cmd_pdu, &n2);

	dt = now_ms() - t0;
	if (dt > seen.peek_ms)
		seen.peek_ms = dt;
	seen.peeks++;
	seen.peek_ok = !d && n == 0 && !again && n2 == 0;
	return false;
}

/* The disk as the provider left it, into the view the checks read. */
static void disk_view(struct h *h)
{
	if (h_sg_segments(h))
		h_sg_sync(h, 0, false);
}

static bool hook_before(struct h *h, idm_task *task, const uint8_t *bhs)
{
	(void)task;
	(void)bhs;
	return check_peek(h);
}

static bool hook_after(struct h *h, idm_task *task, const uint8_t *bhs)
{
	(void)task;
	(void)bhs;
	/* Get_Data asked for it, yet nothing was read: notify came first */
	disk_view(h);
	seen.data_seen_empty = h_raw_disk_untouched(h, 0, seen.imm);
	return false;
}

static bool hook_after_peek(struct h *h, idm_task *task, const uint8_t *bhs)
{
	(void)task;
	(void)bhs;
	return check_peek(h);
}

/* Raw initiator: the command with its immediate data, then unsolicited
 * Data-Out up to unsol, F on the last, written in odd pieces from the
 * test's thread (libidm progresses between them). 0 or what
 * h_raw_send_pdu said. */
static int send_write(struct h *h, struct h_raw *r, const uint8_t *src, uint32_t len,
		      uint32_t imm, uint32_t unsol, uint32_t mrdsl, unsigned cmd_flags)
{
	uint8_t bhs[48];
	uint32_t off = imm, sn = 0;
	int rc;

	r->cut = true;
	h_build_scsi_cmd(bhs, true, ITT, r->cmdsn++, r->statsn + 1, len, 0,
			 unsol == imm);
	rc = h_raw_send_pdu(h, r, bhs, NULL, 0, src, imm, cmd_flags);
	while (!rc && off < unsol) {
		uint32_t n = unsol - off < mrdsl ? unsol - off : mrdsl;

		h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, ITT,
			       IDM_ISCSI_RESERVED_TAG, sn++, off,
			       off + n == unsol);
		rc = h_raw_send_pdu(h, r, bhs, NULL, 0, src + off, n, 0);
		off += n;
	}
	r->cut = false;
	return rc;
}

/* A NOP-Out ping after the write and its answer: the target has read
 * every byte of the write by then. */
static void ping(struct h *h, struct h_raw *r)
{
	uint8_t bhs[48] = { 0 };
	uint32_t dlen;
	int rc;

	bhs[0] = IDM_ISCSI_OP_NOP_OUT | IDM_ISCSI_OP_IMMEDIATE;
	bhs[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, PING_ITT);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_TTT, IDM_ISCSI_RESERVED_TAG);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, r->cmdsn);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, r->statsn + 1);
	ck_assert_int_eq(h_raw_send_pdu(h, r, bhs, NULL, 0, NULL, 0, 0), 0);
	rc = h_raw_recv_pdu(h, r, bhs, NULL, 0, &dlen, 5000);
	ck_assert_msg(rc == 0 && idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_NOP_IN &&
			      idm_iscsi_bhs_itt(bhs) == PING_ITT,
		      "no NOP-In for the ping: %d, opcode 0x%02x", rc,
		      idm_iscsi_bhs_opcode(bhs));
}

static void run_case(const struct imm_case *c, bool dig, enum mode mode, bool sg)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48], *src;
	uint32_t imm, unsol, dlen, npdu;
	struct idm_conn_stats st = { .size = sizeof(st) };
	int rc;

	h_params_default(&p);
	p.immediate_data = true;
	p.initial_r2t = c->ir2t;
	p.first_burst = c->fbl;
	p.max_burst = c->fbl;
	p.tgt_mrdsl = c->mrdsl;
	p.header_digest = dig;
	p.data_digest = dig;
	imm = c->len < c->fbl ? c->len : c->fbl;
	imm = imm < c->mrdsl ? imm : c->mrdsl;
	unsol = c->ir2t ? imm : (c->len < c->fbl ? c->len : c->fbl);
	ck_assert_msg(unsol == c->len, "a case is all unsolicited");
	npdu = 1 + (unsol - imm + c->mrdsl - 1) / c->mrdsl;
	h_raw_evil_initiator(&h, &r, &p, c->len);
	h_disk_slot_clear(&h, 0);
	if (sg) {
		ck_assert_msg(h_sg_enable(&h, odd_segs, N(odd_segs)) == 0,
			      "h_sg_enable: %s", h.err);
		h_sg_sync(&h, 0, true);
	}
	src = malloc(c->len);
	ck_assert_ptr_nonnull(src);
	h_pattern(src, c->len, 31);
	memset(&seen, 0, sizeof(seen));
	seen.imm = imm;
	h.cmd_hook = mode == PEEK_BEFORE || mode == LATER ? hook_before : NULL;
	h.after_get_hook = mode == PEEK_AFTER ? hook_after_peek
			   : mode == GET_ONLY ? hook_after : NULL;
	h.split_get = mode == SPLIT;
	h.get_later = mode == LATER;
	ck_assert_int_eq(send_write(&h, &r, src, c->len, imm, unsol, c->mrdsl, 0), 0);
	if (mode == LATER) {
		/* every byte is in and no Get_Data asked for any: staged */
		ping(&h, &r);
		ck_assert_ptr_nonnull(h.later);
		disk_view(&h);
		ck_assert_msg(h_raw_disk_untouched(&h, 0, c->len),
			      "data placed with no Get_Data");
		ck_assert_int_eq(h_tgt_get_later(&h), 0);
	}
	rc = h_raw_recv_pdu(&h, &r, bhs, NULL, 0, &dlen, 5000);
	ck_assert_msg(rc == 0, "no SCSI Response: %d", rc);
	ck_assert_msg(idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_SCSI_RSP && bhs[3] == 0,
		      "opcode 0x%02x status %u", idm_iscsi_bhs_opcode(bhs), bhs[3]);
	disk_view(&h);
	ck_assert_msg(!memcmp(h_disk_slot(&h, 0), src, c->len),
		      "len %u imm %u digests %d mode %d sg %d: the written data differs",
		      c->len, imm, dig, (int)mode, sg);
	ck_assert_msg(h_check_guards(&h) == 0, "%s", h.err);
	ck_assert_int_eq(h.t.terminate_count, 0);
	ck_assert_int_eq(h.t.unexpected, 0);
	ck_assert_int_eq(idm_conn_get_stats(h.t.conn, &st), 0);
	/* copies of payload (idm_prov_stats_copy): with a Get_Data from the
	 * notify only the few bytes that came in one read with a header
	 * (out of the 4 KiB rx stage); without one, all of it (stage) */
	if (mode == LATER)
		ck_assert_uint_ge(st.payload_copy_bytes, c->len);
	else if (mode != SPLIT)
		ck_assert_msg(st.payload_copy_bytes < 4096ull * npdu,
			      "%llu payload bytes copied for %u in %u PDUs",
			      (unsigned long long)st.payload_copy_bytes, c->len, npdu);
	if (mode == GET_ONLY)
		ck_assert_msg(seen.data_seen_empty,
			      "the immediate data was read before the notify");
	if (mode == PEEK_BEFORE || mode == PEEK_AFTER || mode == LATER)
		ck_assert_msg(seen.peeks == 1 && seen.peek_ok && seen.peek_ms < 500,
			      "idm_pdu_data() in the notify: %d calls, %s, %.1f ms",
			      seen.peeks, seen.peek_ok ? "NULL, 0" : "data shown",
			      seen.peek_ms);
	h.cmd_hook = NULL;
	h.after_get_hook = NULL;
	free(src);
	h_raw_end(&h, &r);
}

static const struct imm_case cases[] = {
	/* len     fbl     mrdsl  ir2t */
	{ 3001, 65536, 16384, true },	  /* immediate only, padded */
	{ 50001, 65536, 16384, false },	  /* + unsolicited Data-Out */
	{ 200003, 262144, 262144, true }, /* one big immediate segment */
	{ 1, 4096, 4096, true },
};

START_TEST(imm_into_get_data)
{
	for (size_t i = 0; i < N(cases); i++)
		for (int dig = 0; dig < 2; dig++)
			for (int sg = 0; sg < 2; sg++)
				run_case(&cases[i], dig, GET_ONLY, sg);
	h_log("imm_into_get_data: %zu cases x digests off/on x plain/segmented buffer, "
	      "PDUs cut at odd places", N(cases));
}
END_TEST

START_TEST(imm_pdu_data_is_empty)
{
	for (size_t i = 0; i < N(cases); i++)
		for (int dig = 0; dig < 2; dig++) {
			run_case(&cases[i], dig, PEEK_BEFORE, false);
			run_case(&cases[i], dig, PEEK_AFTER, false);
		}
	h_log("imm_pdu_data_is_empty: idm_pdu_data() before and after Get_Data is "
	      "NULL, 0 at once");
}
END_TEST

START_TEST(imm_get_data_later)
{
	for (size_t i = 0; i < N(cases); i++)
		for (int dig = 0; dig < 2; dig++)
			for (int sg = 0; sg < 2; sg++)
				run_case(&cases[i], dig, LATER, sg);
	h_log("imm_get_data_later: Get_Data after the callback takes the staged data");
}
END_TEST

START_TEST(imm_staged_for_split_get)
{
	for (size_t i = 0; i < N(cases); i++)
		for (int dig = 0; dig < 2; dig++)
			if (cases[i].len > 1)
				run_case(&cases[i], dig, SPLIT, dig);
	h_log("imm_staged_for_split_get: a range short of the immediate data");
}
END_TEST

/* Immediate data only (InitialR2T=Yes), up to 64 KiB, digests or not. */
static void imm_only_params(struct h_params *p, bool dig)
{
	h_params_default(p);
	p->immediate_data = true;
	p->initial_r2t = true;
	p->first_burst = 65536;
	p->tgt_mrdsl = 65536;
	p->header_digest = dig;
	p->data_digest = dig;
}

/* pdus_tx of the connection as each command of a stream came in */
static uint64_t stream_tx[H_MAX_SLOTS];

static bool hook_count_tx(struct h *h, idm_task *task, const uint8_t *bhs)
{
	struct idm_conn_stats st = { .size = sizeof(st) };
	uint32_t i = idm_iscsi_bhs_itt(bhs) - ITT;

	(void)task;
	if (i < H_MAX_SLOTS && idm_conn_get_stats(h->t.conn, &st) == 0)
		stream_tx[i] = st.pdus_tx;
	return false;
}

/* A stream of small writes sent at once, as a host at queue depth 16
 * sends them (one to each disk slot): the target's first recv() fills its 4 KiB stage, which
 * then doubles with each full read, so that one recv() brings several
 * commands whole and their 4 KiB of immediate data is copied out of it
 * (payload of up to a quarter of the stage: providers/tcp/README.md),
 * not read in place by a readv() apiece. The data lands where each
 * command said (its digest checked over the placed bytes when on). */
static void small_write_stream(bool dig, bool count_tx)
{
	enum { NCMD = H_MAX_SLOTS, LEN = 4096 };
	struct h h;
	struct h_raw r;
	struct h_params p;
	struct idm_conn_stats st = { .size = sizeof(st) };
	uint8_t bhs[48], *src;
	uint32_t dlen;

	imm_only_params(&p, dig);
	h_raw_evil_initiator_slots(&h, &r, &p, LEN, H_MAX_SLOTS);
	src = malloc(NCMD * LEN);
	ck_assert_ptr_nonnull(src);
	h_pattern(src, NCMD * LEN, 77);
	memset(stream_tx, 0, sizeof(stream_tx));
	h.cmd_hook = count_tx ? hook_count_tx : NULL;
	/* all of them queued in the socket before the target reads one */
	for (uint32_t i = 0; i < NCMD; i++) {
		h_build_scsi_cmd(bhs, true, ITT + i, r.cmdsn++, r.statsn + 1, LEN,
				 (uint64_t)i * (LEN + H_GUARD), true);
		ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0,
						src + (size_t)i * LEN, LEN, 0),
				 0);
	}
	for (uint32_t i = 0; i < NCMD; i++) {
		int rc = h_raw_recv_pdu(&h, &r, bhs, NULL, 0, &dlen, 5000);

		ck_assert_msg(rc == 0, "no SCSI Response %u: %d", i, rc);
		ck_assert_msg(idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_SCSI_RSP &&
				      bhs[3] == 0,
			      "opcode 0x%02x status %u", idm_iscsi_bhs_opcode(bhs),
			      bhs[3]);
	}
	for (uint32_t i = 0; i < NCMD; i++)
		ck_assert_msg(!memcmp(h_disk_slot(&h, i), src + (size_t)i * LEN,
				      LEN),
			      "digests %d: command %u's data differs", dig, i);
	ck_assert_msg(h_check_guards(&h) == 0, "%s", h.err);
	ck_assert_int_eq(h.t.terminate_count, 0);
	ck_assert_int_eq(h.t.unexpected, 0);
	ck_assert_int_eq(idm_conn_get_stats(h.t.conn, &st), 0);
	/* the stage reaches 16 KiB after two full reads (a quarter of it:
	 * 4 KiB), so all but the first few payloads come out of it (the
	 * first's is copied too: it came in the first read, with its
	 * header) */
	ck_assert_msg(st.payload_copy_bytes >= (NCMD - 4) * LEN,
		      "digests %d: %llu of %u payload bytes copied from the stage",
		      dig, (unsigned long long)st.payload_copy_bytes, NCMD * LEN);
	/* the answers to the first commands went out while the rest were
	 * still to be read (providers/tcp/tcp_rx.c, "Answers before the
	 * next read"), not after the whole stream */
	if (count_tx)
		ck_assert_msg(stream_tx[NCMD - 1] > stream_tx[0],
			      "digests %d: no answer sent before the last command "
			      "was read (%llu PDUs sent at the first, %llu at the "
			      "last)",
			      dig, (unsigned long long)stream_tx[0],
			      (unsigned long long)stream_tx[NCMD - 1]);
	h.cmd_hook = NULL;
	free(src);
	h_raw_end(&h, &r);
}

START_TEST(imm_small_write_stream)
{
	small_write_stream(false, false);
	small_write_stream(true, false);
	h_log("imm_small_write_stream: 16 x 4 KiB writes sent at once, their "
	      "immediate data copied out of the grown stage, in place");
}
END_TEST

/* The same stream: the SCSI Responses to its first commands are on the
 * wire before its last command is read - a host waits on them to send
 * its next commands, and both sides would otherwise idle in turn. */
START_TEST(imm_answers_before_next_read)
{
	small_write_stream(false, true);
	small_write_stream(true, true);
	h_log("imm_answers_before_next_read: answers to a stream's first "
	      "writes sent before its last was read");
}
END_TEST

static void bad_digest(enum mode mode)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	struct idm_conn_stats st = { .size = sizeof(st) };
	static uint8_t src[20000];
	int rc;

	imm_only_params(&p, true);
	h_raw_evil_initiator(&h, &r, &p, sizeof(src));
	h_pattern(src, sizeof(src), 5);
	memset(&seen, 0, sizeof(seen));
	seen.imm = sizeof(src);
	h.cmd_hook = mode == PEEK_BEFORE ? hook_before : NULL;
	rc = send_write(&h, &r, src, sizeof(src), sizeof(src), sizeof(src), 65536,
			H_RAW_BAD_DD);
	ck_assert_msg(rc == 0 || rc == -EPIPE || rc == -ECONNRESET, "send: %d", rc);
	ck_assert_int_eq(h_raw_target_outcome(&h, &r, false,
					      "bad data digest on immediate data"),
			 H_RAW_FAILED);
	ck_assert_int_eq(h.t.completion_count, 0);
	if (mode == PEEK_BEFORE)
		ck_assert_msg(seen.peeks == 1 && seen.peek_ok,
			      "idm_pdu_data() showed data not read yet");
	if (h.t.conn && idm_conn_get_stats(h.t.conn, &st) == 0)
		ck_assert_uint_eq(st.data_digest_errors, 1);
	h.cmd_hook = NULL;
	h_raw_end(&h, &r);
}

START_TEST(imm_bad_data_digest)
{
	bad_digest(GET_ONLY);
	bad_digest(PEEK_BEFORE);
	h_log("imm_bad_data_digest: connection failed, no completion");
}
END_TEST

int main(void)
{
	const TTest *const tests[] = {
		imm_into_get_data,   imm_pdu_data_is_empty,
		imm_get_data_later,  imm_staged_for_split_get,
		imm_bad_data_digest, imm_small_write_stream,
		imm_answers_before_next_read,
		NULL
	};

	return h_main("test_imm", 110, "tcp_imm", "imm", 60, tests);
}
