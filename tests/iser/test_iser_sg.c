/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Scatter-gather buffers over iSER in the soft-RoCE guest (suite 'rdma').
 *
 * Target: Put_Data (RDMA Write) and Get_Data (RDMA Read, immediate data
 * and unsolicited Data-Out copied from Sends) on a buffer whose segments
 * lie in the disk with gaps between them, so no two are adjacent and each
 * is a region of its own: odd segment sizes and ranges starting and ending
 * inside segments, more segments than a work request's SGE limit (the
 * range is split into several WRs of one chain), and many tiny segments.
 * After each WRITE the whole disk is compared with the image it must have
 * (the pattern scattered into the segments, the gaps and the bytes outside
 * the range untouched); each READ must bring the pattern back.
 *
 * Initiator: one STag per direction names one registered region, so a
 * command whose range spans segments that are not adjacent in memory
 * moves through the connection's staging area (IDM_ISER_STAGING_MB, 4 by
 * default): WRITE data gathered from the segments, READ data scattered
 * into them, every byte counted in payload_copy_bytes; checked for odd
 * segment sizes with gaps, 2 B to 1 MiB+, 1024 segments, with and
 * without immediate and unsolicited data: the whole initiator memory
 * compared with the image it must have, the copy counters exactly the
 * staged bytes, idm_task_data_received() the bytes read. A range inside
 * one segment, adjacent segments (one region) and a plain buffer copy
 * nothing. A command whose ranges exceed the area is refused with
 * -ENOBUFS; two that do not fit in it together both complete, the second
 * waiting for the first's units.
 */
#include <check.h>
#include "check_suite.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "iser_pair.h"
#include "rdma_env.h"

#define CAP (1024u * 1024u)
#define SENT 0xa5 /* disk bytes no I/O may touch */
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *ip;

/* A view of the disk made of n segments of lens[i] bytes in order, each
 * followed by a gap of 1..7 bytes. Returns its length. */
static size_t disk_view(struct pair *p, const uint32_t *lens, int n,
			struct iovec *iov, idm_buf **out)
{
	uint8_t *disk = p->disk + P_GUARD;
	size_t pos = 0, total = 0;
	int r;

	for (int i = 0; i < n; i++) {
		iov[i].iov_base = disk + pos;
		iov[i].iov_len = lens[i];
		pos += lens[i] + 1 + (size_t)(i % 7);
		total += lens[i];
	}
	ck_assert_msg(pos <= p->cap, "segments beyond the disk");
	r = idm_buf_create_iov(p->ctx, iov, n, out);
	ck_assert_msg(r == 0, "idm_buf_create_iov: %s", idm_strerror(r));
	return total;
}

/* The disk as a WRITE of src (len bytes at view offset off) must leave
 * it: SENT everywhere but those bytes, scattered into the segments.
 * Returns the segments the range crosses. */
static int disk_image(uint8_t *img, const uint8_t *disk, size_t cap,
		       const struct iovec *iov, int n, size_t off,
		       const uint8_t *src, uint32_t len)
{
	size_t pos = 0, end = off + len;
	int pieces = 0;

	memset(img, SENT, cap);
	for (int i = 0; i < n && pos < end; i++) {
		size_t lo = off > pos ? off - pos : 0;
		size_t hi = end - pos < iov[i].iov_len ? end - pos : iov[i].iov_len;
		uint8_t *seg = (uint8_t *)iov[i].iov_base;

		if (lo < hi) {
			memcpy(img + (seg - disk) + lo, src + (pos + lo - off),
			       hi - lo);
			pieces++;
		}
		pos += iov[i].iov_len;
	}
	return pieces;
}

static uint64_t rdma_writes(struct pair *p)
{
	struct idm_conn_stats st = {.size = sizeof(st)};

	ck_assert_int_eq(idm_conn_get_stats(p->tc, &st), 0);
	return st.rdma_writes;
}

static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i = 0;

	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* WRITE len bytes into the view at off, check the disk image, READ them
 * back and compare. */
static void sg_round(struct pair *p, idm_buf *view, const struct iovec *iov,
		     int n, size_t off, uint32_t len, uint32_t seed)
{
	uint8_t *disk = p->disk + P_GUARD, *ini = p->mem + P_GUARD;
	uint8_t *pat = malloc(len), *img = malloc(p->cap);
	uint64_t writes;
	int pieces;
	size_t i;

	ck_assert(pat && img);
	p_pattern(pat, len, seed);
	memcpy(ini, pat, len);
	memset(disk, SENT, p->cap);
	pieces = disk_image(img, disk, p->cap, iov, n, off, pat, len);
	p->t_buf = view;
	p->t_buf_off = off;
	ck_assert_msg(p_io(p, true, len, 60000) == 0, "WRITE %u at %zu: %s",
		      len, off, p->err);
	i = first_diff(disk, img, p->cap);
	ck_assert_msg(i == p->cap,
		      "WRITE %u at %zu over %d segments: disk byte %zu is %#x, not %#x",
		      len, off, n, i, i < p->cap ? disk[i] : 0,
		      i < p->cap ? img[i] : 0);
	memset(ini, 0, len);
	writes = rdma_writes(p);
	ck_assert_msg(p_io(p, false, len, 60000) == 0, "READ %u at %zu: %s",
		      len, off, p->err);
	/* one SGE per segment, at most 16 per RDMA Write: a range over
	 * more segments went out as several Writes */
	ck_assert_msg(rdma_writes(p) - writes >= (uint64_t)(pieces + 15) / 16,
		      "READ over %d segments: %llu RDMA Writes", pieces,
		      (unsigned long long)(rdma_writes(p) - writes));
	ck_assert_msg(memcmp(ini, pat, len) == 0,
		      "READ %u at %zu over %d segments: data differs", len, off, n);
	ck_assert_msg(p_check_guards(p) == 0, "%s", p->err);
	p->t_buf = NULL;
	free(pat);
	free(img);
}

/* The keys of a pass: the defaults, or (keys) immediate data, no
 * InitialR2T, a 64 KiB first burst and 8 KiB target segments, so that
 * data also goes out in Sends */
static void sg_keys(struct p_keys *k, int keys)
{
	p_keys_default(k);
	if (keys) {
		k->immediate_data = true;
		k->initial_r2t = false;
		k->first_burst = 65536;
		k->tgt_rdsl = 8192;
	}
}

/* Every case of the target on both key sets: data by RDMA only, and
 * immediate data plus unsolicited Data-Out in several Sends (copied into
 * the segments by the provider). */
static void target_cases(const uint32_t *lens, int n,
			 const size_t *offs, const uint32_t *cut, size_t ncase)
{
	struct iovec *iov = calloc((size_t)n, sizeof(*iov));
	struct p_keys k;
	struct pair p;
	idm_buf *view;
	size_t total;

	ck_assert(iov);
	for (int keys = 0; keys < 2; keys++) {
		sg_keys(&k, keys);
		ck_assert_msg(p_init(&p, ip, CAP) == 0, "init: %s", p.err);
		ck_assert_msg(p_login(&p, &k, 10000) == 0, "login: %s", p.err);
		total = disk_view(&p, lens, n, iov, &view);
		for (size_t c = 0; c < ncase; c++)
			sg_round(&p, view, iov, n, offs[c],
				 (uint32_t)(total - offs[c] - cut[c]),
				 (uint32_t)(c + 11 * keys));
		ck_assert_int_eq(p.i_terminated + p.t_terminated, 0);
		ck_assert_int_eq(p.cb_after_end, 0);
		p_close_conns(&p);
		idm_buf_destroy(view);
		p_fini(&p);
	}
	free(iov);
}

/* Odd sizes; ranges that start and end inside segments. */
START_TEST(target_odd_segments)
{
	static const uint32_t lens[] = {1, 3, 511, 4097, 65537, 8191, 2,
					100003, 7, 12289};
	static const size_t offs[] = {0, 1, 600, 4612};
	static const uint32_t cut[] = {0, 1, 100000, 5};

	target_cases(lens, (int)N(lens), offs, cut, N(offs));
}
END_TEST

/* More segments than one work request takes (rxe: 32 SGEs; the provider
 * uses at most 16): several Writes / Reads for one range. */
START_TEST(target_more_segments_than_sges)
{
	uint32_t lens[100];
	static const size_t offs[] = {0, 333};
	static const uint32_t cut[] = {0, 777};

	for (int i = 0; i < (int)N(lens); i++)
		lens[i] = 1000 + (uint32_t)(i * 37 % 500);
	target_cases(lens, (int)N(lens), offs, cut, N(offs));
}
END_TEST

/* Many tiny segments: a region (an MR) each, 16 SGEs per WR. */
START_TEST(target_many_small_segments)
{
	uint32_t lens[IDM_BUF_IOV_MAX];
	static const size_t offs[] = {0, 5};
	static const uint32_t cut[] = {0, 3};

	for (int i = 0; i < (int)N(lens); i++)
		lens[i] = 1 + (uint32_t)(i % 13);
	target_cases(lens, (int)N(lens), offs, cut, N(offs));
}
END_TEST

/* A SCSI Command with its data in t's buffer; the provider's answer. */
static int send_cmd(struct pair *p, idm_buf *buf, size_t off, bool write,
		    uint32_t len)
{
	uint8_t bhs[48] = {0};
	idm_task *t;
	int r;

	r = idm_task_create(p->ic, ++p->itt, &t);
	ck_assert_int_eq(r, 0);
	r = idm_task_set_data(t, write ? NULL : buf, off, write ? 0 : len,
			      write ? buf : NULL, off, write ? len : 0);
	ck_assert_msg(r == 0, "idm_task_set_data: %s", idm_strerror(r));
	bhs[0] = IDM_ISCSI_OP_SCSI_CMD;
	bhs[1] = IDM_ISCSI_FLAG_FINAL | IDM_ISCSI_ATTR_SIMPLE |
		 (write ? IDM_ISCSI_CMD_WRITE : IDM_ISCSI_CMD_READ);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, p->itt);
	idm_iscsi_put32(bhs + IDM_ISCSI_CMD_EDTL, len);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, p->cmdsn);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, p->statsn);
	bhs[IDM_ISCSI_CMD_CDB] = write ? P_CDB_WRITE : P_CDB_READ;
	r = idm_send_control(p->ic, bhs, NULL, 0, NULL, 0, t, 0);
	/* refused: nothing went out, the CmdSN is not used */
	idm_deallocate_task_resources(t);
	return r;
}

/* The initiator's payload copies so far: bytes, and how many in *n. */
static uint64_t ini_copied(struct pair *p, uint64_t *n)
{
	struct idm_conn_stats st = {.size = sizeof(st)};

	ck_assert_int_eq(idm_conn_get_stats(p->ic, &st), 0);
	if (n)
		*n = st.payload_copies;
	return st.payload_copy_bytes;
}

/* A view of the initiator's memory from byte at: n segments of lens[i]
 * bytes in order, each followed by a gap of 1..7 bytes when gaps, else
 * adjacent. Returns its length. */
static size_t mem_view(struct pair *p, size_t at, const uint32_t *lens, int n,
		       bool gaps, struct iovec *iov, idm_buf **out)
{
	uint8_t *mem = p->mem + P_GUARD;
	size_t pos = at, total = 0;
	int r;

	for (int i = 0; i < n; i++) {
		iov[i].iov_base = mem + pos;
		iov[i].iov_len = lens[i];
		pos += lens[i] + (gaps ? 1 + (size_t)(i % 7) : 0);
		total += lens[i];
	}
	ck_assert_msg(pos <= p->cap, "segments beyond the initiator's memory");
	r = idm_buf_create_iov(p->ctx, iov, n, out);
	ck_assert_msg(r == 0, "idm_buf_create_iov: %s", idm_strerror(r));
	return total;
}

/* WRITE len bytes from the view at off (gathered through staging when
 * the range crosses segments), then READ them back into it: the disk
 * holds exactly the pattern, the initiator memory is SENT but for the
 * range's bytes in their segments, and the copy counters grew by the
 * staged bytes (0 for a range in one segment). */
static void ini_round(struct pair *p, idm_buf *view, const struct iovec *iov,
		      int n, bool gaps, size_t off, uint32_t len, uint32_t seed)
{
	uint8_t *disk = p->disk + P_GUARD, *mem = p->mem + P_GUARD;
	uint8_t *pat = malloc(len), *img = malloc(p->cap);
	uint64_t bytes, copies, c2;
	uint32_t staged;
	int pieces;
	size_t i;

	ck_assert(pat && img);
	p_pattern(pat, len, seed);
	/* the image the READ must leave; WRITE's source is the same */
	pieces = disk_image(img, mem, p->cap, iov, n, off, pat, len);
	staged = gaps && pieces > 1 ? len : 0;
	memcpy(mem, img, p->cap);
	memset(disk, 0, p->cap);
	p->i_buf = view;
	p->i_buf_off = off;
	bytes = ini_copied(p, &copies);
	ck_assert_msg(p_io(p, true, len, 60000) == 0, "WRITE %u at %zu: %s",
		      len, off, p->err);
	ck_assert_msg(ini_copied(p, &c2) - bytes == staged && c2 - copies == !!staged,
		      "WRITE %u at %zu over %d segments: %llu bytes in %llu copies",
		      len, off, pieces, (unsigned long long)(ini_copied(p, NULL) - bytes),
		      (unsigned long long)(c2 - copies));
	i = first_diff(disk, pat, len);
	ck_assert_msg(i == len, "WRITE %u at %zu over %d segments: disk byte %zu "
		      "is %#x, not %#x", len, off, pieces, i, i < len ? disk[i] : 0,
		      i < len ? pat[i] : 0);
	ck_assert_msg(len == p->cap || disk[len] == 0, "WRITE %u: past its end", len);
	memset(mem, SENT, p->cap);
	disk_image(img, mem, p->cap, iov, n, off, pat, len);
	bytes = ini_copied(p, &copies);
	ck_assert_msg(p_io(p, false, len, 60000) == 0, "READ %u at %zu: %s",
		      len, off, p->err);
	ck_assert_msg(ini_copied(p, &c2) - bytes == staged && c2 - copies == !!staged,
		      "READ %u at %zu over %d segments: %llu bytes in %llu copies",
		      len, off, pieces, (unsigned long long)(ini_copied(p, NULL) - bytes),
		      (unsigned long long)(c2 - copies));
	ck_assert_msg(p->i_received == len, "READ %u: %u bytes received",
		      len, p->i_received);
	i = first_diff(mem, img, p->cap);
	ck_assert_msg(i == p->cap, "READ %u at %zu over %d segments: initiator "
		      "byte %zu is %#x, not %#x", len, off, pieces, i,
		      i < p->cap ? mem[i] : 0, i < p->cap ? img[i] : 0);
	ck_assert_msg(p_check_guards(p) == 0, "%s", p->err);
	p->i_buf = NULL;
	free(pat);
	free(img);
}

struct ini_case {
	const uint32_t *lens;
	int n;
	size_t off;     /* range: from off to the view's end less cut */
	uint32_t cut;
};

#define INI_CAP (2u * 1024u * 1024u)

/* Scattered layouts both ways, on both key sets: data by RDMA only
 * (through staging), and immediate data plus unsolicited Data-Out taken
 * from the staging units by the Sends. */
START_TEST(initiator_scattered)
{
	static const uint32_t odd[] = {1, 3, 511, 4097, 65537, 8191, 2,
				       100003, 7, 12289};
	static const uint32_t two[] = {1, 1};
	static const uint32_t big[] = {1, 700000, 3, 400001};
	static uint32_t many[IDM_BUF_IOV_MAX];
	const struct ini_case cases[] = {
		{odd, (int)N(odd), 0, 0},       /* every segment */
		{odd, (int)N(odd), 1, 1},       /* starts and ends inside */
		{odd, (int)N(odd), 600, 100000},
		{odd, (int)N(odd), 4612, 5},
		{odd, (int)N(odd), 5000, 125641}, /* inside one: no copy */
		{two, 2, 0, 0},                 /* 2 B over two segments */
		{two, 2, 1, 0},                 /* 1 B: no copy */
		{many, IDM_BUF_IOV_MAX, 0, 0},
		{many, IDM_BUF_IOV_MAX, 5, 3},
		{big, (int)N(big), 0, 0},       /* 1 MiB+ */
	};
	struct iovec *iov = calloc(IDM_BUF_IOV_MAX, sizeof(*iov));
	struct p_keys k;
	struct pair p;

	ck_assert(iov);
	for (int i = 0; i < IDM_BUF_IOV_MAX; i++)
		many[i] = 1 + (uint32_t)(i % 13);
	for (int keys = 0; keys < 2; keys++) {
		sg_keys(&k, keys);
		ck_assert_msg(p_init(&p, ip, INI_CAP) == 0, "init: %s", p.err);
		ck_assert_msg(p_login(&p, &k, 10000) == 0, "login: %s", p.err);
		for (size_t c = 0; c < N(cases); c++) {
			idm_buf *view;
			size_t total = mem_view(&p, 0, cases[c].lens, cases[c].n,
						true, iov, &view);

			ini_round(&p, view, iov, cases[c].n, true, cases[c].off,
				  (uint32_t)(total - cases[c].off - cases[c].cut),
				  (uint32_t)(c + 17 * keys));
			idm_buf_destroy(view);
		}
		ck_assert_int_eq(p.i_terminated + p.t_terminated, 0);
		ck_assert_int_eq(p.cb_after_end, 0);
		p_close_conns(&p);
		p_fini(&p);
	}
	free(iov);
}
END_TEST

/* Adjacent segments are one region and a plain buffer is one: any range
 * goes by one STag, zero copy, as before staging existed. */
START_TEST(initiator_contiguous_no_copy)
{
	static const uint32_t adj[] = {1, 4095, 300000, 65536};
	struct iovec iov[N(adj)];
	idm_buf *adjacent;
	struct p_keys k;
	struct pair p;

	p_keys_default(&k);
	ck_assert_msg(p_init(&p, ip, CAP) == 0, "init: %s", p.err);
	ck_assert_msg(p_login(&p, &k, 10000) == 0, "login: %s", p.err);
	mem_view(&p, 0, adj, (int)N(adj), false, iov, &adjacent);
	ini_round(&p, adjacent, iov, (int)N(adj), false, 0, 300001, 3);
	ini_round(&p, adjacent, iov, (int)N(adj), false, 3, 369629, 4);
	p.i_buf = NULL;
	ck_assert_msg(p_write_read_verify(&p, 8193, 5) == 0, "%s", p.err);
	ck_assert_uint_eq(ini_copied(&p, NULL), 0);
	ck_assert_int_eq(p.i_terminated + p.t_terminated, 0);
	p_close_conns(&p);
	idm_buf_destroy(adjacent);
	p_fini(&p);
}
END_TEST

struct waiter {
	bool done;
	uint8_t status;
	uint32_t received;
};

static void other_rsp(struct pair *p, idm_task *t, const uint8_t *bhs)
{
	struct waiter *w = p->user;

	w->status = bhs[3];
	w->received = idm_task_data_received(t);
	w->done = true;
	idm_deallocate_task_resources(t);
}

static bool both_done(struct pair *p)
{
	return p->done && ((struct waiter *)p->user)->done;
}

#define MIB (1024u * 1024u)
#define STAGE (4u * MIB) /* IDM_ISER_STAGING_MB's default */

/* The staging area's bound: a command whose scattered range exceeds it
 * is refused with -ENOBUFS (nothing goes out); one of exactly its size
 * works; two that do not fit together both complete, the second waiting
 * in the send backlog for the first's units. */
START_TEST(initiator_staging_bound)
{
	const uint32_t huge[] = {STAGE - 10, MIB};
	const uint32_t a_lens[] = {3 * MIB / 2, 3 * MIB / 2};
	const uint32_t b_lens[] = {MIB, MIB};
	struct iovec iov[2], ia[2], ib[2];
	idm_buf *view, *va, *vb;
	uint8_t *disk, *mem, *img;
	struct waiter w = {0};
	struct idm_conn_stats st = {.size = sizeof(st)};
	uint64_t bytes, copies, c2;
	uint8_t bhs[48] = {0};
	struct p_keys k;
	struct pair p;
	idm_task *t;
	size_t at;
	int r;

	p_keys_default(&k);
	ck_assert_msg(p_init(&p, ip, STAGE + 2 * MIB) == 0, "init: %s", p.err);
	ck_assert_msg(p_login(&p, &k, 10000) == 0, "login: %s", p.err);
	disk = p.disk + P_GUARD;
	mem = p.mem + P_GUARD;
	mem_view(&p, 0, huge, 2, true, iov, &view);
	bytes = ini_copied(&p, &copies);
	ck_assert_int_eq(send_cmd(&p, view, 0, false, STAGE + 1), -ENOBUFS);
	ck_assert_int_eq(send_cmd(&p, view, 0, true, STAGE + 1), -ENOBUFS);
	ck_assert_uint_eq(ini_copied(&p, NULL), bytes);
	/* exactly the area: 4 MiB staged each way */
	ini_round(&p, view, iov, 2, true, 0, STAGE, 7);
	idm_buf_destroy(view);

	/* A: 3 MiB (48 of 64 units) in flight; B: 2 MiB (32) must wait */
	img = malloc(p.cap);
	ck_assert(img);
	p_pattern(disk, 3 * MIB, 9);
	memset(mem, SENT, p.cap);
	at = mem_view(&p, 0, a_lens, 2, true, ia, &va) + 16;
	mem_view(&p, at + 64, b_lens, 2, true, ib, &vb);
	p.user = &w;
	p.i_other_rsp = other_rsp;
	p.i_buf = va;
	p.i_buf_off = 0;
	bytes = ini_copied(&p, &copies);
	ck_assert_msg(p_io_start(&p, false, 3 * MIB) == 0, "%s", p.err);
	ck_assert_int_eq(idm_task_create(p.ic, ++p.itt, &t), 0);
	ck_assert_int_eq(idm_task_set_data(t, vb, 0, 2 * MIB, NULL, 0, 0), 0);
	bhs[0] = IDM_ISCSI_OP_SCSI_CMD;
	bhs[1] = IDM_ISCSI_FLAG_FINAL | IDM_ISCSI_ATTR_SIMPLE | IDM_ISCSI_CMD_READ;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, p.itt);
	idm_iscsi_put32(bhs + IDM_ISCSI_CMD_EDTL, 2 * MIB);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, p.cmdsn++);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, p.statsn);
	bhs[IDM_ISCSI_CMD_CDB] = P_CDB_READ;
	r = idm_send_control(p.ic, bhs, NULL, 0, NULL, 0, t, 0);
	ck_assert_msg(r == 0, "second scattered READ: %s", idm_strerror(r));
	/* B is in the backlog (no progress ran since) */
	ck_assert_int_eq(idm_conn_get_stats(p.ic, &st), 0);
	ck_assert_uint_ge(st.sendq_entries, 1);
	ck_assert_msg(p_progress_until(&p, both_done, 120000) == 0,
		      "A and B: %s [ini: %s]", p.err, idm_conn_error(p.ic));
	ck_assert_int_eq(p.status, 0);
	ck_assert_int_eq(w.status, 0);
	ck_assert_uint_eq(p.i_received, 3 * MIB);
	ck_assert_uint_eq(w.received, 2 * MIB);
	ck_assert_uint_eq(ini_copied(&p, &c2) - bytes, 5 * MIB);
	ck_assert_uint_eq(c2 - copies, 2);
	disk_image(img, mem, p.cap, ia, 2, 0, disk, 3 * MIB);
	ck_assert(first_diff(mem, img, at) == at);
	ck_assert(memcmp(ib[0].iov_base, disk, MIB) == 0);
	ck_assert(memcmp(ib[1].iov_base, disk + MIB, MIB) == 0);
	ck_assert(((uint8_t *)ib[0].iov_base)[MIB] == SENT);
	ck_assert_msg(p_check_guards(&p) == 0, "%s", p.err);
	p.i_buf = NULL;
	p.i_other_rsp = NULL;
	ck_assert_int_eq(p.i_terminated + p.t_terminated, 0);
	p_close_conns(&p);
	idm_buf_destroy(va);
	idm_buf_destroy(vb);
	free(img);
	p_fini(&p);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { target_odd_segments,
				       target_more_segments_than_sges,
				       target_many_small_segments,
				       initiator_scattered,
				       initiator_contiguous_no_copy,
				       initiator_staging_bound, NULL };

	ip = rdma_test_ip();
	return test_suite_run_case("iser_sg", "sg", 300, tests);
}
