/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Data buffers. A buffer is created once and reused for many I/Os so that a
 * provider which must register memory (iSER) does it once per buffer, not
 * per I/O; the registration hangs off buf->reg[] until the buffer dies.
 * A buffer belongs to its context's domain (lib/domain.c), not to the
 * context: any context of the domain may use it, and it may outlive the
 * one it was made through.
 *
 * A buffer is a list of segments (idm_buf_create_iov); its bytes are their
 * concatenation. The one-segment buffer keeps its address in buf->addr so
 * the common case never walks segments; for several, buf->seg_end holds
 * the prefix sums that idm_prov_buf_iov() searches.
 */
#include "core.h"
#include "buf.h"
#include "domain.h"

#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Above this, map whole pages: keeps big buffers page aligned and lets
 * the kernel back them lazily. */
#define MMAP_THRESHOLD (1u << 20)

static int buf_new(idm_ctx *ctx, void *addr, size_t len, bool owned,
		   idm_buf **out)
{
	struct idm_buf *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->dom = ctx->dom;
	idmp_domain_ref(b->dom);
	b->addr = addr;
	b->len = len;
	b->owned = owned;
	b->nseg = 1;
	b->one.iov_base = addr;
	b->one.iov_len = len;
	b->seg = &b->one;
	*out = b;
	return 0;
}

/* Segment array and prefix sums live in the same allocation as the
 * struct: one malloc, one free. */
static int buf_new_iov(idm_ctx *ctx, const struct iovec *iov, int n, size_t total,
		       idm_buf **out)
{
	size_t seg_at = (sizeof(struct idm_buf) + alignof(struct iovec) - 1) &
			~(alignof(struct iovec) - 1);
	size_t end_at = seg_at + (size_t)n * sizeof(struct iovec);
	struct idm_buf *b;
	size_t sum = 0;

	end_at = (end_at + alignof(size_t) - 1) & ~(alignof(size_t) - 1);
	b = calloc(1, end_at + (size_t)n * sizeof(size_t));
	if (!b)
		return -ENOMEM;
	b->dom = ctx->dom;
	idmp_domain_ref(b->dom);
	b->len = total;
	b->nseg = n;
	b->seg = (struct iovec *)((unsigned char *)b + seg_at);
	b->seg_end = (size_t *)((unsigned char *)b + end_at);
	memcpy(b->seg, iov, (size_t)n * sizeof(*iov));
	for (int i = 0; i < n; i++) {
		sum += iov[i].iov_len;
		b->seg_end[i] = sum;
	}
	*out = b;
	return 0;
}

IDM_API int idm_buf_create(idm_ctx *ctx, void *addr, size_t len, idm_buf **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!ctx || !addr || !len || (uintptr_t)addr + len < (uintptr_t)addr)
		return -EINVAL;
	return buf_new(ctx, addr, len, false, out);
}

IDM_API int idm_buf_create_iov(idm_ctx *ctx, const struct iovec *iov, int iovcnt,
			       idm_buf **out)
{
	size_t total = 0;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!ctx || !iov || iovcnt < 1 || iovcnt > IDM_BUF_IOV_MAX)
		return -EINVAL;
	/* Zero-length segments are refused rather than skipped: the array
	 * idm_buf_segments() returns is the caller's, and an RDMA provider
	 * could not register an empty one. Offsets are size_t, so the total
	 * may not wrap either. */
	for (int i = 0; i < iovcnt; i++) {
		uintptr_t a = (uintptr_t)iov[i].iov_base;
		size_t l = iov[i].iov_len;

		if (!a || !l || a + l < a || total + l < total)
			return -EINVAL;
		total += l;
	}
	if (total > (SIZE_MAX >> 1))
		return -EINVAL;
	if (iovcnt == 1)
		return buf_new(ctx, iov[0].iov_base, iov[0].iov_len, false, out);
	return buf_new_iov(ctx, iov, iovcnt, total, out);
}

IDM_API int idm_buf_alloc(idm_ctx *ctx, size_t len, idm_buf **out)
{
	void *mem;
	int r;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!ctx || !len || len > (SIZE_MAX >> 1))
		return -EINVAL;
	if (len >= MMAP_THRESHOLD) {
		mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			return -ENOMEM;
	} else {
		long pg = sysconf(_SC_PAGESIZE);
		if (posix_memalign(&mem, pg > 0 ? (size_t)pg : 4096, len))
			return -ENOMEM;
	}
	r = buf_new(ctx, mem, len, true, out);
	if (r < 0) {
		if (len >= MMAP_THRESHOLD)
			munmap(mem, len);
		else
			free(mem);
	}
	return r;
}

IDM_API void idm_buf_destroy(idm_buf *b)
{
	if (!b)
		return;
	idmp_domain_buf_release(b);
	if (b->owned) {
		if (b->len >= MMAP_THRESHOLD)
			munmap(b->addr, b->len);
		else
			free(b->addr);
	}
	idmp_domain_unref(b->dom);
	free(b);
}

IDM_API void *idm_buf_addr(const idm_buf *b)
{
	return b ? b->addr : NULL;
}

IDM_API size_t idm_buf_len(const idm_buf *b)
{
	return b ? b->len : 0;
}

IDM_API int idm_buf_segments(const idm_buf *b, const struct iovec **iov)
{
	if (iov)
		*iov = b ? b->seg : NULL;
	return b ? b->nseg : -EINVAL;
}

/* The segment holding byte off (< b->len) of a several-segment buffer:
 * the first whose end lies beyond it. */
static int seg_find(const struct idm_buf *b, size_t off)
{
	int lo = 0, hi = b->nseg - 1;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (b->seg_end[mid] > off)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

uint8_t *idmp_buf_range_addr(const struct idm_buf *b, size_t off, size_t len)
{
	int i;

	if (b->addr)
		return (uint8_t *)b->addr + off;
	if (off >= b->len)
		return NULL;
	i = seg_find(b, off);
	if (len > b->seg_end[i] - off)
		return NULL;
	return (uint8_t *)b->seg[i].iov_base + (off - (b->seg_end[i] - b->seg[i].iov_len));
}

int idmp_buf_usable(const struct idm_buf *b, const struct idm_prov_ops *ops)
{
	/* A provider without the cap computes addresses from
	 * idm_buf_addr(), NULL here: refuse the whole buffer, not only the
	 * ranges that span segments. */
	if (b->nseg > 1 && !(ops->caps & IDM_CAP_SCATTER_GATHER))
		return -EOPNOTSUPP;
	return 0;
}

int idm_prov_buf_iov(const struct idm_buf *b, size_t off, size_t len,
		     struct iovec *iov, int max, size_t *covered)
{
	size_t done = 0;
	int n = 0;

	if (covered)
		*covered = 0;
	if (!b || (len && (!iov || max < 1)) || off > b->len || len > b->len - off)
		return -EINVAL;
	if (len == 0)
		return 0;
	if (b->addr) {
		iov[0].iov_base = (uint8_t *)b->addr + off;
		iov[0].iov_len = len;
		if (covered)
			*covered = len;
		return 1;
	}
	for (int i = seg_find(b, off); done < len && n < max; i++, n++) {
		size_t seg_start = b->seg_end[i] - b->seg[i].iov_len;
		size_t at = off + done - seg_start;
		size_t take = b->seg[i].iov_len - at;

		if (take > len - done)
			take = len - done;
		iov[n].iov_base = (uint8_t *)b->seg[i].iov_base + at;
		iov[n].iov_len = take;
		done += take;
	}
	if (covered)
		*covered = done;
	return n;
}

/* One walk over the segments of [off, off+len) for both copy directions:
 * to_buf copies p into the buffer, else the buffer into p. */
static void buf_copy(const struct idm_buf *b, size_t off, uint8_t *p, size_t len,
		     bool to_buf)
{
	struct iovec v[16];
	size_t covered;
	int n;

	while (len && (n = idm_prov_buf_iov(b, off, len, v, 16, &covered)) > 0) {
		for (int i = 0; i < n; i++) {
			if (to_buf)
				memcpy(v[i].iov_base, p, v[i].iov_len);
			else
				memcpy(p, v[i].iov_base, v[i].iov_len);
			p += v[i].iov_len;
		}
		off += covered;
		len -= covered;
	}
}

void idm_prov_buf_copy_in(struct idm_buf *b, size_t off, const void *src, size_t len)
{
	buf_copy(b, off, (uint8_t *)(uintptr_t)src, len, true);
}

void idm_prov_buf_copy_out(void *dst, const struct idm_buf *b, size_t off, size_t len)
{
	buf_copy(b, off, dst, len, false);
}

bool idmp_buf_fits_conn(const struct idm_buf *b, const struct idm_conn *c)
{
	return b->dom == c->ctx->dom || !c->ops->buf_release;
}
