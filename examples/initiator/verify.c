/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --verify SIZE: write SIZE bytes of a seeded pseudo-random pattern from
 * LBA 0, read them back and compare. The pattern is a pure function of
 * (seed, byte offset), so neither pass needs a copy of SIZE bytes: each
 * command slot has its own region of one registered buffer. With a list
 * of I/O sizes the pass takes them in turn, so one run crosses several
 * burst and segment boundaries.
 */
#include "initiator.h"

#include "ex_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct vpass {
	struct ini_session *s;
	const struct ini_lun_info *li;
	idm_buf *buf;
	uint8_t *base;
	uint32_t io; /* the largest I/O: one slot's region */
	uint32_t ios[INI_VERIFY_IO_MAX];
	int nios, next_io;
	uint64_t size;
	uint64_t next;	    /* next byte offset to submit */
	uint64_t completed; /* bytes completed */
	uint64_t seed;
	bool write;
	int err;
	bool mismatch;
	uint64_t mismatch_off;
};

static inline uint64_t mix64(uint64_t x)
{
	/* splitmix64 finaliser: cheap, and every bit depends on the offset */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* off and len are multiples of 8 (of the block size, in fact). */
static void pattern_fill(uint8_t *p, uint64_t seed, uint64_t off, uint32_t len)
{
	for (uint32_t i = 0; i < len; i += 8) {
		uint64_t v = mix64(seed ^ (off + i));
		memcpy(p + i, &v, 8);
	}
}

/* Offset of the first differing byte, or len if all match. */
static uint32_t pattern_check(const uint8_t *p, uint64_t seed, uint64_t off,
			      uint32_t len)
{
	for (uint32_t i = 0; i < len; i += 8) {
		uint64_t v = mix64(seed ^ (off + i));

		if (memcmp(p + i, &v, 8)) {
			const uint8_t *e = (const uint8_t *)&v;
			uint32_t j = 0;

			while (j < 8 && p[i + j] == e[j])
				j++;
			return i + j;
		}
	}
	return len;
}

static void vpass_done(struct ini_cmd *c)
{
	struct vpass *v = c->arg;
	uint64_t lba = ini_cdb_lba(c);
	char err[128];

	if (c->result < 0) {
		if (!v->err)
			ex_err("verify: %s at LBA %" PRIu64 ": %s",
			       v->write ? "WRITE" : "READ", lba,
			       ini_cmd_strerror(c, err, sizeof(err)));
		v->err = c->result;
	} else if (!v->write) {
		uint64_t boff = lba * v->li->block_size;
		uint32_t bad;

		if (c->data_received != c->len && !v->err) {
			ex_err("verify: READ at LBA %" PRIu64
			       " returned %u of %u bytes",
			       lba, c->data_received, c->len);
			v->err = -EIO;
		}
		bad = pattern_check(v->base + c->buf_off, v->seed, boff,
				    c->len);
		if (bad != c->len && !v->mismatch) {
			v->mismatch = true;
			v->mismatch_off = boff + bad;
		}
	}
	v->completed += c->len;
	ini_cmd_put(c);
}

/* The next I/O of the pass into slot c: its size from the list in turn,
 * cut at the end of the area; the write pass fills in the pattern. */
static uint32_t vpass_prepare(struct vpass *v, struct ini_cmd *c)
{
	uint32_t len = v->ios[v->next_io];
	uint32_t bs = v->li->block_size;

	v->next_io = (v->next_io + 1) % v->nios;
	if (v->size - v->next < len)
		len = (uint32_t)(v->size - v->next);
	c->lun = ini_lun_encode(v->li->lun);
	c->buf = v->buf;
	c->buf_off = (size_t)c->idx * v->io;
	c->len = len;
	c->arg = v;
	c->done_fn = vpass_done;
	ini_cdb_rw(c, v->write, v->next / bs, len / bs, v->s->o->use16);
	if (v->write)
		pattern_fill(v->base + c->buf_off, v->seed, v->next, len);
	return len;
}

/* Keep every slot busy while there is work and window. */
static int vpass_fill(struct vpass *v)
{
	struct ini_session *s = v->s;
	struct ini_cmd *c;

	while (!v->err && v->next < v->size && s->state == INI_S_FFP &&
	       ini_cmd_window_open(s) && (c = ini_cmd_get(s))) {
		uint32_t len = vpass_prepare(v, c);
		int rc = ini_cmd_submit(c);

		if (rc < 0) {
			ini_cmd_put(c);
			if (rc == -EAGAIN)
				return 0;
			ex_err("verify: submit: %s", idm_strerror(rc));
			return rc;
		}
		v->next += len;
	}
	return 0;
}

/* Progress, pings, command timeouts and a lost connection recovered;
 * the pass fails when nothing moved for the command timeout. */
static int vpass_wait(struct vpass *v, uint64_t *last_progress)
{
	struct ini_session *s = v->s;
	uint64_t timeout = (uint64_t)s->o->timeout_s * 1000000000ull;
	int recoveries;
	int rc = idm_ctx_progress(s->ctx, 100);

	if (rc < 0 && rc != -EINTR)
		return rc;
	recoveries = s->recoveries;
	ini_session_poll(s);
	if (s->state == INI_S_FAILED)
		return s->fail;
	if (recoveries != s->recoveries ||
	    s->ping_itt != IDM_ISCSI_RESERVED_TAG || rc > 0) {
		*last_progress = ini_now_ns();
	} else if (ini_now_ns() - *last_progress > timeout) {
		ini_session_set_failed(s, -ETIMEDOUT,
				       "verify: no progress for %d s",
				       s->o->timeout_s);
		return -ETIMEDOUT;
	}
	return 0;
}

static int vpass_run(struct vpass *v)
{
	struct ini_session *s = v->s;
	uint64_t last_progress = ini_now_ns();
	int rc;

	v->next = v->completed = 0;
	v->next_io = 0; /* both passes issue the same I/Os */
	while (v->completed < v->size) {
		if (s->state != INI_S_FFP && s->state != INI_S_RECOVERING)
			return s->fail ? s->fail : -EIO;
		if (ini_interrupted) {
			ini_session_set_failed(s, -EINTR, "interrupted");
			return -EINTR;
		}
		rc = vpass_fill(v);
		if (rc < 0)
			return rc;
		if (v->err && s->inflight == 0)
			return v->err;
		rc = vpass_wait(v, &last_progress);
		if (rc < 0)
			return rc;
	}
	return v->err;
}

/* Whole blocks: sizes round down, but never below one block; the area
 * no larger than the LUN. -EINVAL when nothing is left. */
static int vpass_plan(struct vpass *v, const struct ini_opts *o)
{
	uint32_t bs = v->li->block_size;
	uint64_t cap = v->li->blocks * bs;

	v->nios = o->nverify_io;
	v->io = 0;
	for (int i = 0; i < v->nios; i++) {
		uint32_t io = o->verify_ios[i] - o->verify_ios[i] % bs;

		v->ios[i] = io ? io : bs;
		if (v->ios[i] > v->io)
			v->io = v->ios[i];
	}
	v->size = o->verify_size - o->verify_size % bs;
	if (v->size == 0)
		v->size = bs;
	if (v->size > cap) {
		ex_warn("verify: %" PRIu64 " bytes asked, the LUN has %" PRIu64,
			o->verify_size, cap);
		v->size = cap;
	}
	return v->size ? 0 : -EINVAL;
}

static double mib(uint64_t bytes)
{
	return (double)bytes / 1048576.0;
}

/* "verify: wrote ... read ... I/O sizes ...: OK"; t0..t1 the write
 * pass, t1..t2 the read pass. */
static void vpass_print(const struct vpass *v, uint64_t t0, uint64_t t1,
			uint64_t t2)
{
	double w = (double)(t1 - t0) / 1e9, r = (double)(t2 - t1) / 1e9;

	printf("verify: wrote %.1f MiB in %.3f s (%.1f MB/s), read %.1f MiB in "
	       "%.3f s (%.1f MB/s), I/O size%s %u",
	       mib(v->size), w, mib(v->size) / w, mib(v->size), r,
	       mib(v->size) / r, v->nios > 1 ? "s" : "", v->ios[0]);
	for (int i = 1; i < v->nios; i++)
		printf(",%u", v->ios[i]);
	printf(" (%" PRIu64 " bytes), seed 0x%016" PRIx64 ": %s\n", v->size,
	       v->seed, v->mismatch ? "MISMATCH" : "OK");
}

/* Both passes over one buffer of a region per command slot, registered
 * once; times in t[0..2]. */
static int vpass_both(struct vpass *v, uint64_t t[3])
{
	size_t bytes = (size_t)v->io * v->s->ncmds;
	int rc = idm_buf_alloc(v->s->ctx, bytes, &v->buf);

	if (rc < 0) {
		ex_err("verify: buffer of %zu bytes: %s", bytes,
		       idm_strerror(rc));
		return rc;
	}
	v->base = idm_buf_addr(v->buf);
	t[0] = ini_now_ns();
	v->write = true;
	rc = vpass_run(v);
	t[1] = ini_now_ns();
	if (rc == 0) {
		v->write = false;
		memset(v->base, 0, bytes); /* no stale pass */
		rc = vpass_run(v);
	}
	t[2] = ini_now_ns();
	idm_buf_destroy(v->buf);
	if (rc < 0)
		ex_err("verify: failed: %s",
		       v->s->why[0] ? v->s->why : idm_strerror(rc));
	return rc;
}

int ini_verify(struct ini_session *s, const struct ini_lun_info *li)
{
	struct vpass v = { .s = s, .li = li };
	uint64_t t[3];
	int rc = vpass_plan(&v, s->o);

	if (rc < 0)
		return rc;
	v.seed = s->o->seed ? s->o->seed : mix64(ini_now_ns());
	rc = vpass_both(&v, t);
	if (rc < 0)
		return rc;
	vpass_print(&v, t[0], t[1], t[2]);
	if (v.mismatch) {
		ex_err("verify: data mismatch at byte %" PRIu64 " (LBA %" PRIu64
		       ")",
		       v.mismatch_off, v.mismatch_off / li->block_size);
		return -EILSEQ;
	}
	return 0;
}
