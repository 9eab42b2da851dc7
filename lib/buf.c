/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Data buffers. A buffer is created once and reused for many I/Os so that a
 * provider which must register memory (iSER) does it once per buffer, not
 * per I/O; the registration hangs off buf->reg[] until the buffer dies.
 */
#include "core.h"

#include <errno.h>
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
	b->ctx = ctx;
	b->addr = addr;
	b->len = len;
	b->owned = owned;
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
	struct idm_ctx *ctx;

	if (!b)
		return;
	ctx = b->ctx;
	idmp_ctx_lock(ctx);
	for (size_t i = 0; i < ctx->n_providers; i++) {
		struct idm_prov *prov = &ctx->providers[i];
		if (b->reg[i] && prov->ops->buf_release)
			prov->ops->buf_release(prov, b);
		b->reg[i] = NULL;
	}
	idmp_ctx_unlock(ctx);
	if (b->owned) {
		if (b->len >= MMAP_THRESHOLD)
			munmap(b->addr, b->len);
		else
			free(b->addr);
	}
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
