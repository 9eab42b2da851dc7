/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The soak's workload: each command slot of a session issues a READ or a
 * WRITE of a random size at a random LBA of the session's own region,
 * never overlapping another command of the session in flight, so that
 * the generation each block holds is known exactly. A WRITE stamps every
 * block with a new generation (soak_pattern.c); a READ checks every block
 * against the generation last written there. A completion issues the
 * slot's next command at once: no allocation, one buffer part per slot.
 */
#include "soak.h"

#include "ex_log.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

uint64_t soak_rand(uint64_t *st)
{
	uint64_t x = *st; /* xorshift64 */

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *st = x;
}

void soak_count_max(uint64_t *max, uint64_t v)
{
	if (v > *max)
		*max = v;
}

static void soak_done(struct ini_cmd *c);

/* Sizes are log-uniform (each power of two as likely as the next) from
 * one block to max_io, so that small commands are as common as large
 * ones instead of a uniform draw that almost never picks a small one. */
static uint32_t pick_blocks(struct soak_sess *ss, uint32_t max_blocks)
{
	uint32_t bits = 0, lo, hi;

	while ((2u << bits) <= max_blocks)
		bits++;
	lo = 1u << (soak_rand(&ss->rng) % (bits + 1));
	hi = 2 * lo - 1 < max_blocks ? 2 * lo - 1 : max_blocks;
	return lo + (uint32_t)(soak_rand(&ss->rng) % (hi - lo + 1));
}

static bool overlaps(const struct soak_sess *ss, uint32_t self, uint64_t lba,
		     uint32_t blocks)
{
	for (uint32_t i = 0; i < ss->k->io.qd; i++) {
		const struct soak_slot *o = &ss->slots[i];

		if (i == self || !o->blocks)
			continue;
		if (lba < o->lba + o->blocks && o->lba < lba + blocks)
			return true;
	}
	return false;
}

/* A free place for `*blocks` blocks: random tries, smaller and smaller;
 * the region is at least 2 * qd commands of max_io (soak_main.c checks),
 * so one block always fits somewhere. */
static uint64_t pick_lba(struct soak_sess *ss, uint32_t self, uint32_t *blocks)
{
	for (;;) {
		for (int t = 0; t < 16; t++) {
			uint64_t lba = ss->base +
				       soak_rand(&ss->rng) %
					       (ss->nblocks - *blocks + 1);

			if (!overlaps(ss, self, lba, *blocks))
				return lba;
		}
		if (*blocks == 1)
			break;
		*blocks /= 2;
	}
	for (uint64_t lba = ss->base; lba < ss->base + ss->nblocks; lba++)
		if (!overlaps(ss, self, lba, 1))
			return lba;
	return ss->base; /* unreachable: qd - 1 commands cannot cover it */
}

int soak_issue(struct soak_sess *ss, struct ini_cmd *c)
{
	struct soak *k = ss->k;
	struct soak_slot *sl = &ss->slots[c->idx];
	uint32_t bsz = k->li.block_size;
	uint32_t blocks = k->so->max_io / bsz;
	uint8_t *data;
	int rc;

	if (ss->prefilling) {
		/* in order, the largest commands: no overlap possible */
		if (ss->prefill_next >= ss->nblocks)
			return 1;
		if (blocks > ss->nblocks - ss->prefill_next)
			blocks = (uint32_t)(ss->nblocks - ss->prefill_next);
		sl->lba = ss->base + ss->prefill_next;
		ss->prefill_next += blocks;
		sl->write = true;
	} else {
		blocks = pick_blocks(ss, blocks);
		sl->lba = pick_lba(ss, c->idx, &blocks);
		sl->write = (int)(soak_rand(&ss->rng) % 100) >= k->so->read_pct;
	}
	sl->blocks = blocks;
	sl->epoch = ss->s.recoveries;
	c->lun = ini_lun_encode(k->li.lun);
	c->buf = ss->buf;
	c->buf_off = (size_t)c->idx * k->so->max_io;
	c->len = blocks * bsz;
	c->arg = ss;
	c->done_fn = soak_done;
	data = (uint8_t *)idm_buf_addr(ss->buf) + c->buf_off;
	if (sl->write) {
		if (++ss->next_gen == 0) /* 0 means unknown */
			ss->next_gen = 1;
		sl->gen = ss->next_gen;
		for (uint32_t i = 0; i < blocks; i++)
			soak_stamp(data + (size_t)i * bsz, bsz, k->run_id,
				   sl->lba + i, sl->gen, ss->idx);
	} else {
		/* a READ that places nothing must not pass on old data */
		memset(data, 0, c->len);
	}
	ini_cdb_rw(c, sl->write, sl->lba, blocks, false);
	rc = ini_cmd_submit(c);
	if (rc == -EAGAIN) {
		/* CmdSN window closed: park it until a response opens it */
		c->next_free = ss->stalled;
		ss->stalled = c;
		return 0;
	}
	if (rc < 0)
		sl->blocks = 0;
	return rc;
}

/* A WRITE that failed for good may have reached any of its blocks, or
 * part of one: their contents are unknown until written again. */
static void forget(struct soak_sess *ss, const struct soak_slot *sl)
{
	for (uint32_t i = 0; i < sl->blocks; i++)
		ss->gen[sl->lba - ss->base + i] = 0;
}

static void verify(struct soak_sess *ss, const struct ini_cmd *c,
		   const struct soak_slot *sl)
{
	struct soak *k = ss->k;
	uint32_t bsz = k->li.block_size;
	const uint8_t *data = (const uint8_t *)idm_buf_addr(ss->buf) + c->buf_off;

	for (uint32_t i = 0; i < sl->blocks; i++) {
		uint64_t lba = sl->lba + i, flba;
		uint32_t gen = ss->gen[lba - ss->base], fgen, bad;

		if (!gen)
			continue; /* not written by us (yet): anything goes */
		k->now.verified_blocks++;
		if (!soak_check(data + (size_t)i * bsz, bsz, k->run_id, lba,
				gen, ss->idx, &flba, &fgen, &bad))
			continue;
		k->now.verify_errors++;
		if (k->reported++ >= k->so->max_reported)
			continue;
		if (flba == UINT64_MAX)
			ex_err("session %d: VERIFY MISMATCH at LBA %" PRIu64
			       ": expected generation %u, found no soak "
			       "header (%s)",
			       ss->idx + 1, lba, gen,
			       c->data_received < c->len ? "short read"
							 : "foreign data");
		else
			ex_err("session %d: VERIFY MISMATCH at LBA %" PRIu64
			       ": expected generation %u, found LBA %" PRIu64
			       " generation %u, first bad word at byte %u",
			       ss->idx + 1, lba, gen, flba, fgen, bad);
	}
}

static void soak_done(struct ini_cmd *c)
{
	struct soak_sess *ss = c->arg;
	struct soak *k = ss->k;
	struct soak_slot *sl = &ss->slots[c->idx];
	int rc;

	soak_count_max(&k->now.lat_max_ns, ini_now_ns() - c->t_start_ns);
	if (sl->epoch != ss->s.recoveries)
		k->now.retried++; /* its connection was killed under it */
	if (c->result < 0) {
		char err[128];

		k->now.io_errors++;
		ex_err("session %d: %s of %u blocks at LBA %" PRIu64
		       " failed: %s",
		       ss->idx + 1, sl->write ? "WRITE" : "READ", sl->blocks,
		       sl->lba, ini_cmd_strerror(c, err, sizeof(err)));
		if (sl->write)
			forget(ss, sl);
	} else if (sl->write) {
		for (uint32_t i = 0; i < sl->blocks; i++)
			ss->gen[sl->lba - ss->base + i] = sl->gen;
		k->now.writes++;
		k->now.write_bytes += c->len;
	} else {
		k->now.reads++;
		k->now.read_bytes += c->len;
		verify(ss, c, sl);
	}
	sl->blocks = 0;
	if (k->running && ss->open && ss->s.state == INI_S_FFP) {
		rc = soak_issue(ss, c);
		if (rc == 0)
			return;
		if (rc < 0) {
			ex_err("session %d: submit: %s", ss->idx + 1,
			       idm_strerror(rc));
			k->now.io_errors++;
		}
	}
	ini_cmd_put(c);
}

int soak_start_slots(struct soak_sess *ss)
{
	struct ini_cmd *c;

	while ((c = ini_cmd_get(&ss->s))) {
		int rc = soak_issue(ss, c);

		if (rc != 0) {
			ini_cmd_put(c);
			return rc < 0 ? rc : 0;
		}
	}
	return 0;
}

void soak_retry_stalled(struct soak_sess *ss)
{
	while (ss->stalled && ini_cmd_window_open(&ss->s)) {
		struct ini_cmd *c = ss->stalled;
		int rc;

		ss->stalled = c->next_free;
		c->next_free = NULL;
		rc = ini_cmd_submit(c);
		if (rc < 0) {
			ex_err("session %d: submit: %s", ss->idx + 1,
			       idm_strerror(rc));
			ss->k->now.io_errors++;
			ss->slots[c->idx].blocks = 0;
			ini_cmd_put(c);
			return;
		}
	}
}

void soak_drop_stalled(struct soak_sess *ss)
{
	while (ss->stalled) {
		struct ini_cmd *c = ss->stalled;

		ss->stalled = c->next_free;
		c->next_free = NULL;
		ss->slots[c->idx].blocks = 0;
		ini_cmd_put(c);
	}
}
