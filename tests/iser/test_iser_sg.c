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
 * command whose range spans segments that are not adjacent in memory is
 * refused with -EOPNOTSUPP and nothing goes out; a range inside one
 * segment of such a buffer, and adjacent segments (one region), work.
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
		p_keys_default(&k);
		if (keys) {
			k.immediate_data = true;
			k.initial_r2t = false;
			k.first_burst = 65536;
			k.tgt_rdsl = 8192;
		}
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

START_TEST(initiator_one_stag_per_direction)
{
	uint8_t *mem;
	struct iovec gap[2], adj[3];
	idm_buf *gapped, *adjacent;
	struct p_keys k;
	struct pair p;

	p_keys_default(&k);
	ck_assert_msg(p_init(&p, ip, CAP) == 0, "init: %s", p.err);
	ck_assert_msg(p_login(&p, &k, 10000) == 0, "login: %s", p.err);
	mem = p.mem + P_GUARD;
	/* two segments with a byte between them: two regions */
	gap[0] = (struct iovec){mem, 5000};
	gap[1] = (struct iovec){mem + 5001, 70000};
	ck_assert_int_eq(idm_buf_create_iov(p.ctx, gap, 2, &gapped), 0);
	ck_assert_int_eq(send_cmd(&p, gapped, 0, true, 75000), -EOPNOTSUPP);
	ck_assert_int_eq(send_cmd(&p, gapped, 4999, false, 2), -EOPNOTSUPP);
	/* a range inside one segment has one STag */
	p.i_buf = gapped;
	p.i_buf_off = 5000;
	ck_assert_msg(p_io(&p, true, 70000, 60000) == 0, "%s", p.err);
	ck_assert(memcmp(p.disk + P_GUARD, mem + 5001, 70000) == 0);
	ck_assert_msg(p_io(&p, false, 4096, 60000) == 0, "%s", p.err);
	/* adjacent segments are one region: any range works */
	adj[0] = (struct iovec){mem, 1};
	adj[1] = (struct iovec){mem + 1, 4095};
	adj[2] = (struct iovec){mem + 4096, CAP - 4096};
	ck_assert_int_eq(idm_buf_create_iov(p.ctx, adj, 3, &adjacent), 0);
	p.i_buf = adjacent;
	p.i_buf_off = 0;
	ck_assert_msg(p_write_read_verify(&p, 300001, 3) == 0, "%s", p.err);
	p.i_buf = NULL;
	ck_assert_msg(p_write_read_verify(&p, 8193, 4) == 0, "%s", p.err);
	ck_assert_int_eq(p.i_terminated + p.t_terminated, 0);
	p_close_conns(&p);
	idm_buf_destroy(gapped);
	idm_buf_destroy(adjacent);
	p_fini(&p);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { target_odd_segments,
				       target_more_segments_than_sges,
				       target_many_small_segments,
				       initiator_one_stag_per_direction, NULL };

	ip = rdma_test_ip();
	return test_suite_run_case("iser_sg", "sg", 300, tests);
}
