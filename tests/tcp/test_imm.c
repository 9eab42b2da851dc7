/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Immediate and unsolicited data at the TCP target, sent by a raw
 * initiator with the PDUs cut at odd places (a piece of 1, 2, 47... bytes
 * read by libidm before the next is sent), digests off and on:
 *  - the SCSI Command's control_notify comes before its immediate data is
 *    read, and a Get_Data from it gets the immediate data and the
 *    unsolicited Data-Out in its buffer;
 *  - a caller that reads the immediate data with idm_pdu_data() in that
 *    callback, before or after its Get_Data, still sees it all;
 *  - a Get_Data that does not cover the immediate data (a split range)
 *    gets it through the staging copy;
 *  - a wrong data digest on immediate data fails the connection, with
 *    no completion of the Get_Data.
 */
#include "raw_peer.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ITT 0x3000
#define N(a) (sizeof(a) / sizeof((a)[0]))

enum peek {
	PEEK_NONE,   /* Get_Data only: the data goes straight to its buffer */
	PEEK_BEFORE, /* idm_pdu_data() before the Get_Data */
	PEEK_AFTER,  /* idm_pdu_data() after the Get_Data */
	SPLIT,       /* a first Get_Data shorter than the immediate data */
};

struct imm_case {
	uint32_t len, fbl, mrdsl;
	bool ir2t;
};

/* What the hooks saw. */
static struct {
	const uint8_t *src;
	uint32_t imm;
	bool data_seen_empty; /* the Get_Data buffer had no data at notify */
	int peeks;
	bool peek_ok;
} seen;

static bool check_peek(struct h *h)
{
	size_t n = 0;
	const uint8_t *d = idm_pdu_data(h->cmd_pdu, &n);
	const uint8_t *again;
	size_t n2 = 0;

	seen.peeks++;
	again = idm_pdu_data(h->cmd_pdu, &n2); /* a second call: the same */
	seen.peek_ok = d && n == seen.imm && !memcmp(d, seen.src, n) &&
		       again == d && n2 == n;
	return false;
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
 * Data-Out up to unsol, F on the last. 0 or what h_raw_send_pdu said. */
struct writer {
	struct h *h;
	struct h_raw *r;
	const uint8_t *src;
	uint32_t len, imm, unsol, mrdsl;
	unsigned cmd_flags;
	int rc;
	pthread_t th;
};

static void *send_write(void *arg)
{
	struct writer *w = arg;
	struct h_raw *r = w->r;
	uint8_t bhs[48];
	uint32_t off = w->imm, sn = 0;

	h_build_scsi_cmd(bhs, true, ITT, r->cmdsn++, r->statsn + 1, w->len, 0,
			 w->unsol == w->imm);
	w->rc = h_raw_send_pdu(w->h, r, bhs, NULL, 0, w->src, w->imm,
			       w->cmd_flags);
	while (!w->rc && off < w->unsol) {
		uint32_t n = w->unsol - off < w->mrdsl ? w->unsol - off : w->mrdsl;

		h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, ITT,
			       IDM_ISCSI_RESERVED_TAG, sn++, off,
			       off + n == w->unsol);
		w->rc = h_raw_send_pdu(w->h, r, bhs, NULL, 0, w->src + off, n, 0);
		off += n;
	}
	return NULL;
}

/* A callback reading the data with idm_pdu_data() waits for it right
 * there, so the peer must write from a thread of its own then. */
static void write_start(struct writer *w)
{
	w->r->cut = true;
	if (w->r->own_thread)
		ck_assert_int_eq(pthread_create(&w->th, NULL, send_write, w), 0);
	else
		send_write(w);
}

static int write_end(struct writer *w)
{
	if (w->r->own_thread)
		pthread_join(w->th, NULL);
	w->r->own_thread = false;
	return w->rc;
}

static void run_case(const struct imm_case *c, bool dig, enum peek peek)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48], *src;
	uint32_t imm, unsol, dlen;
	struct writer w;
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
	h_raw_evil_initiator(&h, &r, &p, c->len);
	h_disk_slot_clear(&h, 0);
	src = malloc(c->len);
	ck_assert_ptr_nonnull(src);
	h_pattern(src, c->len, 31);
	memset(&seen, 0, sizeof(seen));
	seen.src = src;
	seen.imm = imm;
	h.cmd_hook = peek == PEEK_BEFORE ? hook_before : NULL;
	h.after_get_hook = peek == PEEK_AFTER ? hook_after_peek
			   : peek == PEEK_NONE ? hook_after : NULL;
	h.split_get = peek == SPLIT;
	w = (struct writer){ &h, &r, src, c->len, imm, unsol, c->mrdsl, 0, 0, 0 };
	r.own_thread = peek == PEEK_BEFORE || peek == PEEK_AFTER;
	write_start(&w);
	rc = h_raw_recv_pdu(&h, &r, bhs, NULL, 0, &dlen, 5000);
	ck_assert_int_eq(write_end(&w), 0);
	ck_assert_msg(rc == 0, "no SCSI Response: %d", rc);
	ck_assert_msg(idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_SCSI_RSP && bhs[3] == 0,
		      "opcode 0x%02x status %u", idm_iscsi_bhs_opcode(bhs), bhs[3]);
	ck_assert_msg(!memcmp(h_disk_slot(&h, 0), src, c->len),
		      "len %u imm %u digests %d peek %d: the written data differs",
		      c->len, imm, dig, (int)peek);
	ck_assert_int_eq(h_check_guards(&h), 0);
	ck_assert_int_eq(h.t.terminate_count, 0);
	ck_assert_int_eq(h.t.unexpected, 0);
	if (peek == PEEK_NONE)
		ck_assert_msg(seen.data_seen_empty,
			      "the immediate data was read before the notify");
	if (peek == PEEK_BEFORE || peek == PEEK_AFTER)
		ck_assert_msg(seen.peeks == 1 && seen.peek_ok,
			      "idm_pdu_data() in the notify: %d calls, %s",
			      seen.peeks, seen.peek_ok ? "ok" : "wrong data");
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
			run_case(&cases[i], dig, PEEK_NONE);
	h_log("imm_into_get_data: %zu cases x digests off/on, PDUs cut at odd places",
	      N(cases));
}
END_TEST

START_TEST(imm_pdu_data_still_works)
{
	for (size_t i = 0; i < N(cases); i++)
		for (int dig = 0; dig < 2; dig++) {
			run_case(&cases[i], dig, PEEK_BEFORE);
			run_case(&cases[i], dig, PEEK_AFTER);
		}
	h_log("imm_pdu_data_still_works: idm_pdu_data() before and after Get_Data");
}
END_TEST

START_TEST(imm_staged_for_split_get)
{
	for (size_t i = 0; i < N(cases); i++)
		for (int dig = 0; dig < 2; dig++)
			if (cases[i].len > 1)
				run_case(&cases[i], dig, SPLIT);
	h_log("imm_staged_for_split_get: a range short of the immediate data");
}
END_TEST

static void bad_digest(enum peek peek)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	struct idm_conn_stats st = { .size = sizeof(st) };
	static uint8_t src[20000];
	struct writer w;

	h_params_default(&p);
	p.immediate_data = true;
	p.initial_r2t = true;
	p.first_burst = 65536;
	p.tgt_mrdsl = 65536;
	p.header_digest = true;
	p.data_digest = true;
	h_raw_evil_initiator(&h, &r, &p, sizeof(src));
	h_pattern(src, sizeof(src), 5);
	memset(&seen, 0, sizeof(seen));
	seen.src = src;
	seen.imm = sizeof(src);
	h.cmd_hook = peek == PEEK_BEFORE ? hook_before : NULL;
	w = (struct writer){ &h, &r, src, sizeof(src), sizeof(src), sizeof(src),
			     65536, H_RAW_BAD_DD, 0, 0 };
	r.own_thread = peek == PEEK_BEFORE;
	write_start(&w);
	ck_assert_int_eq(h_raw_target_outcome(&h, &r, false,
					      "bad data digest on immediate data"),
			 H_RAW_FAILED);
	(void)write_end(&w); /* may have seen the connection go */
	ck_assert_int_eq(h.t.completion_count, 0);
	if (peek == PEEK_BEFORE)
		ck_assert_msg(seen.peeks == 1 && !seen.peek_ok,
			      "idm_pdu_data() gave data with a bad digest");
	if (h.t.conn && idm_conn_get_stats(h.t.conn, &st) == 0)
		ck_assert_uint_eq(st.data_digest_errors, 1);
	h.cmd_hook = NULL;
	h_raw_end(&h, &r);
}

START_TEST(imm_bad_data_digest)
{
	bad_digest(PEEK_NONE);
	bad_digest(PEEK_BEFORE);
	h_log("imm_bad_data_digest: connection failed, no completion");
}
END_TEST

int main(void)
{
	Suite *s;
	TCase *tc;

	if (!h_main_prologue("test_imm", 110))
		return 77;
	s = suite_create("tcp_imm");
	tc = tcase_create("imm");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, imm_into_get_data);
	tcase_add_test(tc, imm_pdu_data_still_works);
	tcase_add_test(tc, imm_staged_for_split_get);
	tcase_add_test(tc, imm_bad_data_digest);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
