/* SPDX-License-Identifier: BSD-2-Clause */
/* LUNs of every kind: their specs, identifiers and life, and the calls
 * the SCSI layer makes through a kind's ops table (lun.h). */
#include "lun.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lun_rbd_settings g_lun_rbd;

#define WHY(...) snprintf(why, whylen, __VA_ARGS__)

/* The backend `body` names: ram:SIZE or file:PATH */
static int open_backend(struct lun *l, const char *body, const char *spec, bool *forced_ro,
			char *why, size_t whylen)
{
	const char *colon;

	if (strncmp(body, "ram:", 4) == 0)
		return lun_local_open_ram(l, body + 4, spec, why, whylen);
	if (strncmp(body, "file:", 5) == 0) {
		if (!body[5]) {
			WHY("'%s': file: needs a path", spec);
			return -EINVAL;
		}
		return lun_local_open_file(l, body + 5, forced_ro, why, whylen);
	}
	if (strncmp(body, "rbd:", 4) == 0)
		return lun_rbd_open(l, body + 4, spec, why, whylen);
	colon = strchr(body, ':');
	WHY("unknown LUN type '%.*s' in '%s': use ram:SIZE, file:PATH or rbd:POOL/IMAGE, "
	    "with ,ro for a write-protected LUN",
	    colon ? (int)(colon - body) : (int)strlen(body), body, spec);
	return -EINVAL;
}

/* Stable per-LUN identifiers derived from the id and the spec: the unit
 * serial number and an NAA 3 designator (locally assigned, 8 bytes,
 * SPC-4 7.8.6.6.2) */
static void make_identifiers(struct lun *l)
{
	uint32_t h = 2166136261u;
	int id = l->id;

	for (const char *p = l->spec; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	snprintf(l->serial, sizeof(l->serial), "IDM%04x%08x", (unsigned)id & 0xffff, h);
	l->naa[0] = 0x3d;
	l->naa[1] = 0x1d;
	l->naa[2] = (uint8_t)(id >> 8);
	l->naa[3] = (uint8_t)id;
	l->naa[4] = (uint8_t)(h >> 24);
	l->naa[5] = (uint8_t)(h >> 16);
	l->naa[6] = (uint8_t)(h >> 8);
	l->naa[7] = (uint8_t)(h ^ (uint32_t)id);
}

static void lun_free(struct lun *l)
{
	if (l->ops)
		l->ops->close(l);
	free(l);
}

int lun_open_ex(const char *spec, int id, uint32_t bs, struct lun **out,
		bool *forced_ro, char *why, size_t whylen)
{
	struct lun *l = calloc(1, sizeof(*l));
	char body[256];
	size_t n = strlen(spec);
	int r;

	*forced_ro = false;
	if (!l) {
		WHY("out of memory");
		return -ENOMEM;
	}
	l->id = id;
	l->bs = bs;
	l->fd = -1;
	l->wce = true;
	if (n >= sizeof(body)) {
		WHY("LUN spec longer than %zu bytes", sizeof(body) - 1);
		lun_free(l);
		return -ENAMETOOLONG;
	}
	/* ",ro" at the end: serve the LUN write protected */
	snprintf(body, sizeof(body), "%s", spec);
	if (n > 3 && !strcmp(body + n - 3, ",ro")) {
		body[n - 3] = '\0';
		l->ro = true;
	}
	snprintf(l->spec, sizeof(l->spec), "%s", body);
	r = open_backend(l, body, spec, forced_ro, why, whylen);
	if (r < 0) {
		lun_free(l);
		return r;
	}
	__atomic_store_n(&l->nblocks, l->size / bs, __ATOMIC_RELEASE);
	make_identifiers(l);
	*out = l;
	return 0;
}

int lun_open(const char *spec, int id, uint32_t bs, struct lun **out)
{
	char why[256];
	bool forced_ro;

	return lun_open_ex(spec, id, bs, out, &forced_ro, why, sizeof(why));
}

int lun_attach_ctx(struct lun *l, idm_ctx *ctx)
{
	if (!l->ram)
		return 0;
	return idm_buf_create(ctx, l->mem, l->size, &l->ib);
}

void lun_close(struct lun *l)
{
	if (!l)
		return;
	if (l->ib)
		idm_buf_destroy(l->ib);
	lun_free(l);
}

void lun_submit(struct lun *l, struct lun_io *io)
{
	io->lun = l;
	__atomic_fetch_add(&l->inflight, 1, __ATOMIC_RELAXED);
	l->ops->submit(l, io);
}

void lun_io_complete(struct lun_io *io)
{
	struct lun *l = io->lun; /* io may be gone once done() returns */

	io->done(io);
	__atomic_fetch_sub(&l->inflight, 1, __ATOMIC_RELEASE);
}

void lun_resized(struct lun *l, uint64_t size)
{
	if (!size || size % l->bs || size / l->bs == lun_nblocks(l))
		return;
	__atomic_store_n(&l->nblocks, size / l->bs, __ATOMIC_RELEASE);
	__atomic_fetch_add(&l->cap_gen, 1, __ATOMIC_ACQ_REL);
}

bool lun_busy(const struct lun *l)
{
	return __atomic_load_n(&l->inflight, __ATOMIC_ACQUIRE) != 0;
}

int lun_read(struct lun *l, void *dst, uint64_t off, size_t len)
{
	return l->ops->read(l, dst, off, len);
}

int lun_write(struct lun *l, const void *src, uint64_t off, size_t len)
{
	return l->ops->write(l, src, off, len);
}

#ifndef IDM_TARGET_RBD
/* Built without librbd */
int lun_rbd_open(struct lun *l, const char *name, const char *spec,
		 char *why, size_t whylen)
{
	(void)l;
	(void)name;
	WHY("'%s': this idm-target was built without librbd (Debian: librbd-dev, "
	    "then build again)", spec);
	return -ENOTSUP;
}
#endif

