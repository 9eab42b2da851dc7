/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Scatter-gather buffers for the harness (h_sg_enable): the disk and every
 * initiator buffer become idm_buf_create_iov() buffers whose segments lie
 * in a separate backing area, in reverse order and with guard-filled gaps
 * between them, so a provider that treated the segments as one block, or
 * missed a segment boundary, writes a gap or the wrong place. The
 * harness keeps checking its contiguous "view" (h->disk, slot mem): the
 * bytes are copied view -> segments before a command and back after it,
 * and the gaps are checked with the guards.
 */
#include "harness.h"
#include "harness_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define SG_GAP 64 /* guard bytes between two segments in the backing area */

struct h_sgmap {
	uint8_t *back;
	size_t back_len;
	struct iovec *iov;
	int n;
};

static void map_free(struct h_sgmap *m)
{
	if (!m)
		return;
	free(m->back);
	free(m->iov);
	free(m);
}

/* Segments of sizes[0], sizes[1], ... (cycling, the last one cut to fit)
 * covering len bytes; NULL without memory or beyond IDM_BUF_IOV_MAX. */
static struct h_sgmap *map_new(size_t len, const uint32_t *sizes, size_t nsizes)
{
	struct h_sgmap *m = calloc(1, sizeof(*m));
	size_t n = 0, at = 0, pos;

	if (!m)
		return NULL;
	while (at < len) {
		at += sizes[n % nsizes];
		n++;
	}
	if (n > IDM_BUF_IOV_MAX)
		goto fail;
	m->n = (int)n;
	m->back_len = len + (n + 1) * SG_GAP;
	m->back = malloc(m->back_len);
	m->iov = calloc(n, sizeof(*m->iov));
	if (!m->back || !m->iov)
		goto fail;
	memset(m->back, H_GUARD_BYTE, m->back_len);
	/* segment 0 at the end of the area, the last one at its start */
	pos = SG_GAP;
	at = 0;
	for (size_t i = 0; i < n; i++) {
		size_t l = sizes[i % nsizes];

		if (l > len - at)
			l = len - at;
		at += l;
		m->iov[n - 1 - i].iov_len = l;
	}
	for (size_t i = n; i-- > 0;) {
		m->iov[i].iov_base = m->back + pos;
		pos += m->iov[i].iov_len + SG_GAP;
	}
	return m;
fail:
	map_free(m);
	return NULL;
}

/* Copy [off, off+len) between the view and the segments. */
static void map_sync(const struct h_sgmap *m, uint8_t *view, size_t off, size_t len,
		     bool to_segments)
{
	size_t seg_start = 0;

	for (int i = 0; i < m->n && len; i++) {
		size_t l = m->iov[i].iov_len, a, b;

		if (off < seg_start + l && off + len > seg_start) {
			a = off > seg_start ? off - seg_start : 0;
			b = off + len < seg_start + l ? off + len - seg_start : l;
			if (to_segments)
				memcpy((uint8_t *)m->iov[i].iov_base + a,
				       view + seg_start + a, b - a);
			else
				memcpy(view + seg_start + a,
				       (uint8_t *)m->iov[i].iov_base + a, b - a);
		}
		seg_start += l;
	}
}

/* The gaps still hold the guard byte? */
static bool map_gaps_ok(const struct h_sgmap *m)
{
	const uint8_t *p = m->back, *end = m->back + m->back_len;

	/* walk the area in address order: segments from the last to 0 */
	for (int i = m->n; i-- > 0;) {
		const uint8_t *seg = m->iov[i].iov_base;

		for (; p < seg; p++)
			if (*p != H_GUARD_BYTE)
				return false;
		p = seg + m->iov[i].iov_len;
	}
	for (; p < end; p++)
		if (*p != H_GUARD_BYTE)
			return false;
	return true;
}

static int rebuild(struct h *h, struct h_sgmap **mp, idm_buf **bp, uint8_t *view,
		   size_t len, const uint32_t *sizes, size_t nsizes)
{
	struct h_sgmap *m = map_new(len, sizes, nsizes);
	idm_buf *b;
	int rc;

	if (!m) {
		h_set_err(h, "no memory (or more than IDM_BUF_IOV_MAX segments)");
		return -ENOMEM;
	}
	map_sync(m, view, 0, len, true);
	rc = idm_buf_create_iov(h->ctx, m->iov, m->n, &b);
	if (rc < 0) {
		h_set_err(h, "idm_buf_create_iov(%d segments): %s", m->n, idm_strerror(rc));
		map_free(m);
		return rc;
	}
	idm_buf_destroy(*bp);
	*bp = b;
	*mp = m;
	return 0;
}

int h_sg_enable(struct h *h, const uint32_t *sizes, size_t nsizes)
{
	int rc = rebuild(h, &h->disk_sg, &h->disk_buf, h->disk, h->disk_len, sizes,
			 nsizes);

	for (size_t s = 0; rc == 0 && s < h->n_slots; s++) {
		struct h_slot *sl = &h->slots[s];

		rc = rebuild(h, &sl->sg, &sl->buf, sl->mem, (size_t)sl->cap + 2 * H_GUARD,
			     sizes, nsizes);
	}
	return rc;
}

int h_sg_segments(const struct h *h)
{
	return h->disk_sg ? h->disk_sg->n : 0;
}

void h_sg_free(struct h *h)
{
	map_free(h->disk_sg);
	h->disk_sg = NULL;
	for (size_t s = 0; s < h->n_slots; s++) {
		map_free(h->slots[s].sg);
		h->slots[s].sg = NULL;
	}
}

void h_sg_sync(struct h *h, size_t s, bool to_segments)
{
	struct h_slot *sl = &h->slots[s];

	if (h->disk_sg)
		map_sync(h->disk_sg, h->disk, h_disk_slot_off(h, s), h->slot_cap,
			 to_segments);
	if (sl->sg)
		map_sync(sl->sg, sl->mem, 0, (size_t)sl->cap + 2 * H_GUARD, to_segments);
}

int h_sg_check_guards(struct h *h)
{
	/* the guards as the provider left them, into the view the checks
	 * read: before each disk slot and after the last */
	for (size_t s = 0; h->disk_sg && s < h->n_disk_slots + 1; s++)
		map_sync(h->disk_sg, h->disk, s * ((size_t)h->slot_cap + H_GUARD), H_GUARD,
			 false);
	if (h->disk_sg && !map_gaps_ok(h->disk_sg)) {
		h_set_err(h, "disk: a gap between two segments was written");
		return -1;
	}
	for (size_t s = 0; s < h->n_slots; s++) {
		struct h_slot *sl = &h->slots[s];

		if (!sl->sg)
			continue;
		map_sync(sl->sg, sl->mem, 0, H_GUARD, false);
		map_sync(sl->sg, sl->mem, H_GUARD + (size_t)sl->cap, H_GUARD, false);
		if (!map_gaps_ok(sl->sg)) {
			h_set_err(h, "initiator buffer %zu: a gap between two segments "
				  "was written", s);
			return -1;
		}
	}
	return 0;
}
