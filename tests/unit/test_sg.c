/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Scatter-gather buffers: idm_buf_create_iov() argument checks,
 * idm_buf_segments(), idm_prov_buf_iov() walking ranges across segment
 * boundaries, the address a transfer record gets, and the refusal
 * (-EOPNOTSUPP) of a buffer of several segments by a provider without
 * IDM_CAP_SCATTER_GATHER.
 */
#include "unit.h"
#include "core.h"

#include <string.h>
#include <sys/uio.h>

START_TEST(create_iov_args)
{
	static uint8_t a[100], b[200], c[1];
	struct iovec v[3] = { { a, sizeof(a) }, { b, sizeof(b) }, { c, sizeof(c) } };
	struct iovec bad[2];
	static struct iovec many[IDM_BUF_IOV_MAX + 1];
	const struct iovec *seg;
	idm_ctx *ctx = unit_ctx();
	idm_buf *buf = (idm_buf *)a;

	ck_assert_int_eq(idm_buf_create_iov(ctx, v, 3, &buf), 0);
	ck_assert_uint_eq(idm_buf_len(buf), 301);
	ck_assert_ptr_null(idm_buf_addr(buf)); /* no single address */
	ck_assert_int_eq(idm_buf_segments(buf, &seg), 3);
	ck_assert_ptr_ne(seg, v); /* copied */
	ck_assert_mem_eq(seg, v, sizeof(v));
	memset(v, 0, sizeof(v)); /* the caller's array may go away */
	ck_assert_ptr_eq(seg[1].iov_base, b);
	ck_assert_int_eq(idm_buf_segments(buf, NULL), 3);
	idm_buf_destroy(buf);

	/* one segment: exactly an idm_buf_create() buffer */
	v[0] = (struct iovec){ a, sizeof(a) };
	ck_assert_int_eq(idm_buf_create_iov(ctx, v, 1, &buf), 0);
	ck_assert_ptr_eq(idm_buf_addr(buf), a);
	ck_assert_int_eq(idm_buf_segments(buf, &seg), 1);
	ck_assert_ptr_eq(seg[0].iov_base, a);
	ck_assert_uint_eq(seg[0].iov_len, sizeof(a));
	idm_buf_destroy(buf);
	ck_assert_int_eq(idm_buf_create(ctx, a, 10, &buf), 0);
	ck_assert_int_eq(idm_buf_segments(buf, &seg), 1);
	ck_assert_ptr_eq(seg[0].iov_base, a);
	idm_buf_destroy(buf);

	buf = (idm_buf *)a;
	ck_assert_int_eq(idm_buf_create_iov(NULL, v, 1, &buf), -EINVAL);
	ck_assert_ptr_null(buf);
	ck_assert_int_eq(idm_buf_create_iov(ctx, NULL, 1, &buf), -EINVAL);
	ck_assert_int_eq(idm_buf_create_iov(ctx, v, 0, &buf), -EINVAL);
	ck_assert_int_eq(idm_buf_create_iov(ctx, v, -1, &buf), -EINVAL);
	ck_assert_int_eq(idm_buf_create_iov(ctx, v, 1, NULL), -EINVAL);
	/* zero-length and NULL segments are refused, not skipped */
	bad[0] = (struct iovec){ a, 10 };
	bad[1] = (struct iovec){ b, 0 };
	ck_assert_int_eq(idm_buf_create_iov(ctx, bad, 2, &buf), -EINVAL);
	bad[1] = (struct iovec){ NULL, 10 };
	ck_assert_int_eq(idm_buf_create_iov(ctx, bad, 2, &buf), -EINVAL);
	/* a segment that wraps, a total that overflows */
	bad[1] = (struct iovec){ (void *)(UINTPTR_MAX - 10), 100 };
	ck_assert_int_eq(idm_buf_create_iov(ctx, bad, 2, &buf), -EINVAL);
	bad[0] = (struct iovec){ (void *)4096, SIZE_MAX / 2 };
	bad[1] = (struct iovec){ (void *)4096, SIZE_MAX / 2 };
	ck_assert_int_eq(idm_buf_create_iov(ctx, bad, 2, &buf), -EINVAL);
	/* the segment bound */
	for (size_t i = 0; i < IDM_BUF_IOV_MAX + 1; i++)
		many[i] = (struct iovec){ b, 1 };
	ck_assert_int_eq(idm_buf_create_iov(ctx, many, IDM_BUF_IOV_MAX + 1, &buf),
			 -EINVAL);
	ck_assert_int_eq(idm_buf_create_iov(ctx, many, IDM_BUF_IOV_MAX, &buf), 0);
	ck_assert_uint_eq(idm_buf_len(buf), IDM_BUF_IOV_MAX);
	idm_buf_destroy(buf);

	ck_assert_int_eq(idm_buf_segments(NULL, &seg), -EINVAL);
	ck_assert_ptr_null(seg);
	idm_ctx_destroy(ctx);
}
END_TEST

/* Segments of sizes 1, 2, 3, ... n scattered in reverse order through
 * one array: byte i of the concatenation is at map[i]. */
#define WALK_SEGS 40
static uint8_t walk_mem[WALK_SEGS * (WALK_SEGS + 1) / 2 + WALK_SEGS * 8];

static idm_buf *walk_buf(idm_ctx *ctx, uint8_t **map, size_t *total)
{
	struct iovec v[WALK_SEGS];
	size_t pos = sizeof(walk_mem), at = 0;
	idm_buf *buf;

	for (int i = 0; i < WALK_SEGS; i++) {
		size_t l = (size_t)i + 1;

		pos -= l + 8; /* 8-byte gaps */
		v[i] = (struct iovec){ walk_mem + pos, l };
		for (size_t k = 0; k < l; k++)
			map[at++] = walk_mem + pos + k;
	}
	*total = at;
	ck_assert_int_eq(idm_buf_create_iov(ctx, v, WALK_SEGS, &buf), 0);
	return buf;
}

START_TEST(buf_iov_walk)
{
	static uint8_t *map[WALK_SEGS * (WALK_SEGS + 1) / 2];
	struct iovec out[64];
	idm_ctx *ctx = unit_ctx();
	size_t total, covered;
	idm_buf *buf = walk_buf(ctx, map, &total);

	ck_assert_uint_eq(idm_buf_len(buf), total);
	/* every range [off, off+len) for every max: the pieces, in order and
	 * resumed from off + covered, are exactly the bytes of the range */
	for (size_t off = 0; off < total; off += 7) {
		for (size_t len = 0; off + len <= total; len += 13) {
			for (int max = 1; max <= 5; max += 2) {
				size_t at = off, left = len;
				int calls = 0;

				while (left) {
					int n = idm_prov_buf_iov(buf, at, left, out, max,
								 &covered);

					ck_assert_int_ge(n, 1);
					ck_assert_int_le(n, max);
					ck_assert_uint_le(covered, left);
					for (int i = 0; i < n; i++) {
						ck_assert_uint_ge(out[i].iov_len, 1);
						for (size_t k = 0; k < out[i].iov_len; k++)
							if ((uint8_t *)out[i].iov_base + k != map[at + k])
								ck_abort_msg("[%zu, +%zu) max %d: byte %zu misplaced",
									     off, len, max, at + k);
						at += out[i].iov_len;
						covered -= out[i].iov_len;
					}
					ck_assert_uint_eq(covered, 0);
					left = off + len - at;
					ck_assert_int_lt(++calls, 1000);
				}
			}
		}
	}
	/* a range inside one segment is one iovec */
	ck_assert_int_eq(idm_prov_buf_iov(buf, 1, 2, out, 64, &covered), 1);
	ck_assert_ptr_eq(out[0].iov_base, map[1]);
	ck_assert_uint_eq(covered, 2);
	/* the whole buffer in one call */
	ck_assert_int_eq(idm_prov_buf_iov(buf, 0, total, out, 64, &covered), WALK_SEGS);
	ck_assert_uint_eq(covered, total);
	/* length 0, bounds, arguments */
	ck_assert_int_eq(idm_prov_buf_iov(buf, total, 0, NULL, 0, &covered), 0);
	ck_assert_uint_eq(covered, 0);
	ck_assert_int_eq(idm_prov_buf_iov(buf, total, 1, out, 1, &covered), -EINVAL);
	ck_assert_int_eq(idm_prov_buf_iov(buf, 0, total + 1, out, 1, NULL), -EINVAL);
	ck_assert_int_eq(idm_prov_buf_iov(buf, SIZE_MAX, 2, out, 1, NULL), -EINVAL);
	ck_assert_int_eq(idm_prov_buf_iov(buf, 0, 1, out, 0, NULL), -EINVAL);
	ck_assert_int_eq(idm_prov_buf_iov(buf, 0, 1, NULL, 1, NULL), -EINVAL);
	ck_assert_int_eq(idm_prov_buf_iov(NULL, 0, 1, out, 1, NULL), -EINVAL);
	idm_buf_destroy(buf);

	/* one segment: one iovec at the address */
	ck_assert_int_eq(idm_buf_create(ctx, walk_mem, 100, &buf), 0);
	ck_assert_int_eq(idm_prov_buf_iov(buf, 10, 50, out, 1, &covered), 1);
	ck_assert_ptr_eq(out[0].iov_base, walk_mem + 10);
	ck_assert_uint_eq(out[0].iov_len, 50);
	ck_assert_uint_eq(covered, 50);
	idm_buf_destroy(buf);
	idm_ctx_destroy(ctx);
}
END_TEST

/* idm_prov_buf_copy_in/out move the bytes of a range into and out of the
 * segments, byte i to map[i]; idm_prov_xfer_copy_in does the same for a
 * record's range by command offset. */
START_TEST(buf_copy)
{
	static uint8_t *map[WALK_SEGS * (WALK_SEGS + 1) / 2];
	uint8_t src[sizeof(map) / sizeof(map[0])], back[sizeof(src)];
	idm_ctx *ctx = unit_ctx();
	size_t total;
	idm_buf *buf = walk_buf(ctx, map, &total);

	for (size_t i = 0; i < total; i++)
		src[i] = (uint8_t)(i * 7 + 1);
	for (size_t off = 0; off < total; off += 11) {
		for (size_t len = 0; off + len <= total; len += 17) {
			memset(walk_mem, 0, sizeof(walk_mem));
			memset(back, 0, sizeof(back));
			idm_prov_buf_copy_in(buf, off, src + off, len);
			for (size_t i = 0; i < total; i++)
				ck_assert_uint_eq(*map[i], i >= off && i < off + len ? src[i] : 0);
			idm_prov_buf_copy_out(back + off, buf, off, len);
			ck_assert_mem_eq(back + off, src + off, len);
		}
	}
	/* a record spanning segments (addr NULL) and one inside a segment */
	memset(walk_mem, 0, sizeof(walk_mem));
	struct idm_prov_xfer x = { .offset = 1000, .length = (uint32_t)total - 5,
				   .buf = buf, .buf_off = 5 };
	idm_prov_xfer_copy_in(&x, 1010, src, 30);
	for (size_t i = 0; i < 30; i++)
		ck_assert_uint_eq(*map[15 + i], src[i]);
	x = (struct idm_prov_xfer){ .offset = 0, .length = 4, .buf = buf,
				    .buf_off = 0, .addr = walk_mem };
	idm_prov_xfer_copy_in(&x, 1, src, 3);
	ck_assert_mem_eq(walk_mem + 1, src, 3);
	idm_buf_destroy(buf);
	idm_ctx_destroy(ctx);
}
END_TEST

/* The fake provider lacks IDM_CAP_SCATTER_GATHER: a buffer of several
 * segments is refused whatever the range (it would read idm_buf_addr(),
 * NULL); a buffer of one segment made by idm_buf_create_iov() works. */
START_TEST(refused_without_cap)
{
	static uint8_t a[4096], b[4096];
	struct iovec v[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	uint8_t r2t[IDM_ISCSI_BHS_LEN], din[IDM_ISCSI_BHS_LEN];
	idm_ctx *ctx;
	idm_portal *portal;
	idm_conn *conn, *ini;
	idm_task *t, *it;
	idm_buf *sg, *one;
	uint8_t rsp[IDM_ISCSI_BHS_LEN];

	unit_use_providers("good", "fake");
	ctx = unit_ctx();
	conn = unit_target(ctx, &portal, false);
	unit_bhs(rsp, IDM_ISCSI_OP_LOGIN_RSP, 0);
	ck_assert_int_eq(idm_enable_datamover(conn, rsp, NULL, 0), 0);
	ck_assert_int_eq(idm_prov_task_new(conn, 0x42, &t), 0);
	ck_assert_int_eq(idm_buf_create_iov(ctx, v, 2, &sg), 0);
	ck_assert_int_eq(idm_buf_create_iov(ctx, v, 1, &one), 0);
	unit_bhs(r2t, IDM_ISCSI_OP_R2T, 0x42);
	unit_bhs(din, IDM_ISCSI_OP_DATA_IN, 0x42);

	ck_assert(!(conn->ops->caps & IDM_CAP_SCATTER_GATHER));
	/* spanning the boundary, and inside one segment */
	ck_assert_int_eq(idm_get_data(t, r2t, sg, 4000, 0, 200, 0), -EOPNOTSUPP);
	ck_assert_int_eq(idm_get_data(t, r2t, sg, 0, 0, 100, 0), -EOPNOTSUPP);
	ck_assert_int_eq(idm_put_data(t, din, sg, 4000, 0, 200, 0), -EOPNOTSUPP);
	ck_assert_int_eq(idm_put_data(t, din, sg, 5000, 0, 100, 0), -EOPNOTSUPP);
	ck_assert_ptr_null(idm_prov_task_xfer_newest(t)); /* nothing recorded */
	/* the range checks come first */
	ck_assert_int_eq(idm_put_data(t, din, sg, 8000, 0, 200, 0), -ERANGE);
	ck_assert_int_eq(idm_put_data(t, din, one, 0, 0, 100, 0), 0);

	/* initiator: idm_task_set_data() */
	ini = unit_initiator(ctx, true);
	ck_assert_int_eq(idm_task_create(ini, 7, &it), 0);
	ck_assert_int_eq(idm_task_set_data(it, sg, 0, 100, NULL, 0, 0), -EOPNOTSUPP);
	ck_assert_int_eq(idm_task_set_data(it, NULL, 0, 0, sg, 0, 8192), -EOPNOTSUPP);
	ck_assert_int_eq(idm_task_set_data(it, one, 0, 100, NULL, 0, 0), 0);
	idm_deallocate_task_resources(it);
	idm_conn_destroy(ini);

	idm_deallocate_task_resources(t);
	idm_conn_destroy(conn);
	idm_portal_destroy(portal);
	idm_buf_destroy(sg);
	idm_buf_destroy(one);
	idm_ctx_destroy(ctx);
}
END_TEST

/* With the cap, the core records a spanning range with addr NULL, one in
 * a segment with its address; idm_prov_task_data() the same. (The unit
 * test turns the cap on in the core's copy of the fake's ops.) */
START_TEST(record_addr_with_cap)
{
	static uint8_t a[4096], b[4096];
	struct iovec v[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	uint8_t r2t[IDM_ISCSI_BHS_LEN];
	struct idm_prov_range rg;
	const struct idm_prov_xfer *x;
	idm_ctx *ctx;
	idm_portal *portal;
	idm_conn *conn, *ini;
	idm_task *t, *it;
	idm_buf *sg;
	uint8_t rsp[IDM_ISCSI_BHS_LEN];

	unit_use_providers("good", "fake");
	ctx = unit_ctx();
	conn = unit_target(ctx, &portal, false);
	unit_bhs(rsp, IDM_ISCSI_OP_LOGIN_RSP, 0);
	ck_assert_int_eq(idm_enable_datamover(conn, rsp, NULL, 0), 0);
	((struct idm_prov_ops *)conn->ops)->caps |= IDM_CAP_SCATTER_GATHER;
	ck_assert_int_eq(idm_prov_task_new(conn, 0x42, &t), 0);
	ck_assert_int_eq(idm_buf_create_iov(ctx, v, 2, &sg), 0);
	unit_bhs(r2t, IDM_ISCSI_OP_R2T, 0x42);

	ck_assert_int_eq(idm_get_data(t, r2t, sg, 4000, 0, 200, 0), 0);
	x = idm_prov_task_xfer_newest(t);
	ck_assert_ptr_nonnull(x);
	ck_assert_ptr_null(x->addr);
	ck_assert_ptr_eq(x->buf, sg);
	ck_assert_uint_eq(x->buf_off, 4000);
	ck_assert(unit_progress_until(ctx, &unit_ev.completions));
	ck_assert_int_eq(idm_get_data(t, r2t, sg, 4100, 0, 100, 0), 0);
	x = idm_prov_task_xfer_newest(t);
	ck_assert_ptr_eq(x->addr, b + 4);

	ini = unit_initiator(ctx, true);
	ck_assert_int_eq(idm_task_create(ini, 7, &it), 0);
	ck_assert_int_eq(idm_task_set_data(it, sg, 4000, 200, sg, 10, 20), 0);
	ck_assert_int_eq(idm_prov_task_data(it, IDM_DATA_IN, &rg), 0);
	ck_assert_ptr_null(rg.addr);
	ck_assert_uint_eq(rg.buf_off, 4000);
	ck_assert_uint_eq(rg.length, 200);
	ck_assert_int_eq(idm_prov_task_data(it, IDM_DATA_OUT, &rg), 0);
	ck_assert_ptr_eq(rg.addr, a + 10);
	idm_deallocate_task_resources(it);
	idm_conn_destroy(ini);

	idm_deallocate_task_resources(t);
	idm_conn_destroy(conn);
	idm_portal_destroy(portal);
	idm_buf_destroy(sg);
	idm_ctx_destroy(ctx);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = {
		create_iov_args,     buf_iov_walk,	   buf_copy,
		refused_without_cap, record_addr_with_cap, NULL
	};

	return test_suite_run_case("sg", "sg", 0, tests);
}
