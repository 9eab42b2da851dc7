/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --bench: N sessions, each keeping QD commands of BS bytes in flight for
 * DURATION seconds, reads and writes mixed by percentage. Every session
 * registers one buffer of QD*BS bytes up front; a completion records its
 * latency and resubmits from the same slot, so the hot path allocates
 * nothing and copies nothing.
 */
#include "initiator.h"

#include "ex_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bsess {
	struct ini_session s;
	struct bench *b;
	idm_buf *buf;
	uint64_t rng;
	uint64_t next_seq;	 /* sequential mode: next I/O index */
	struct ini_cmd *stalled; /* completed slots waiting for the window */
};

struct bench {
	const struct ini_opts *o;
	const struct ini_lun_info *li;
	struct bsess *ss;
	int n;
	bool running;
	uint64_t slots;	 /* I/O positions in the span */
	uint32_t blocks; /* blocks per I/O */
	struct ini_bench_result r;
	uint64_t window_bytes; /* bytes since the last peak sample */
};

static uint64_t xorshift(uint64_t *st)
{
	uint64_t x = *st;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *st = x;
}

static void bench_done(struct ini_cmd *c);

static int issue(struct bsess *bs, struct ini_cmd *c)
{
	struct bench *b = bs->b;
	uint64_t slot;
	bool write;
	int rc;

	if (b->o->seq)
		slot = bs->next_seq++ % b->slots;
	else
		slot = xorshift(&bs->rng) % b->slots;
	write = (int)(xorshift(&bs->rng) % 100) >= b->o->read_pct;
	c->lun = ini_lun_encode(b->li->lun);
	c->buf = bs->buf;
	c->buf_off = (size_t)c->idx * b->o->bs;
	c->len = b->o->bs;
	c->arg = bs;
	c->done_fn = bench_done;
	ini_cdb_rw(c, write, slot * b->blocks, b->blocks, b->o->use16);
	rc = ini_cmd_submit(c);
	if (rc == -EAGAIN) {
		/* CmdSN window closed: park it until a response opens it */
		c->next_free = bs->stalled;
		bs->stalled = c;
		return 0;
	}
	return rc;
}

static void bench_done(struct ini_cmd *c)
{
	struct bsess *bs = c->arg;
	struct bench *b = bs->b;
	uint64_t now = ini_now_ns();

	if (c->result < 0) {
		char err[128];

		if (!b->r.errors++)
			ex_err("bench: session %d: %s", bs->s.index,
			       ini_cmd_strerror(c, err, sizeof(err)));
		ini_cmd_put(c);
		return;
	}
	if (b->running) {
		uint64_t lat = now - c->t_start_ns;

		ini_hist_add(&b->r.lat, lat);
		b->r.ios++;
		b->r.bytes += c->len;
		b->window_bytes += c->len;
		if (c->dir == IDM_DATA_OUT) {
			b->r.writes++;
			ini_hist_add(&b->r.lat_wr, lat);
		} else {
			b->r.reads++;
			ini_hist_add(&b->r.lat_rd, lat);
		}
		if (issue(bs, c) == 0)
			return;
	}
	ini_cmd_put(c);
}

static void retry_stalled(struct bsess *bs)
{
	while (bs->stalled && ini_cmd_window_open(&bs->s)) {
		struct ini_cmd *c = bs->stalled;

		bs->stalled = c->next_free;
		c->next_free = NULL;
		if (ini_cmd_submit(c) < 0) {
			ini_cmd_put(c);
			return;
		}
	}
}

static int open_sessions(struct bench *b, idm_ctx *ctx, const char *target)
{
	const struct ini_opts *o = b->o;

	for (int i = 0; i < b->n; i++) {
		struct bsess *bs = &b->ss[i];
		int rc;

		bs->b = b;
		bs->rng = 0x9e3779b97f4a7c15ull ^
			  (ini_now_ns() + (uint64_t)i * 7919);
		if (!bs->rng)
			bs->rng = 1;
		bs->next_seq = (b->slots / (uint64_t)b->n) * (uint64_t)i;
		rc = ini_session_init(&bs->s, o, ctx, i + 1, o->qd);
		if (rc == 0)
			rc = idm_buf_alloc(ctx, (size_t)o->qd * o->bs,
					   &bs->buf);
		if (rc == 0)
			rc = ini_session_connect(&bs->s);
		if (rc == 0)
			rc = ini_session_login(&bs->s, false, target);
		if (rc == 0)
			rc = ini_clear_ua(&bs->s, b->li->lun);
		if (rc < 0) {
			ex_err("bench: session %d: %s", i + 1,
			       bs->s.why[0] ? bs->s.why : idm_strerror(rc));
			return rc;
		}
		/* writes carry recognisable data rather than zeros */
		memset(idm_buf_addr(bs->buf), 0xa5, (size_t)o->qd * o->bs);
	}
	return 0;
}

static void close_sessions(struct bench *b)
{
	for (int i = 0; i < b->n; i++) {
		struct bsess *bs = &b->ss[i];

		if (bs->s.state == INI_S_FFP)
			ini_session_logout(&bs->s);
		ini_session_fini(&bs->s);
		if (bs->buf)
			idm_buf_destroy(bs->buf);
	}
}

/* Fill every command slot of every session. */
static int start_all(struct bench *b)
{
	for (int i = 0; i < b->n; i++) {
		struct bsess *bs = &b->ss[i];
		struct ini_cmd *c;

		while ((c = ini_cmd_get(&bs->s))) {
			int rc = issue(bs, c);

			if (rc < 0) {
				ini_cmd_put(c);
				ex_err("bench: submit: %s", idm_strerror(rc));
				return rc;
			}
		}
	}
	return 0;
}

/* One look at every session: pings, command timeouts, recovery of a
 * lost connection (which blocks the run meanwhile) and the commands the
 * CmdSN window held back. 0 while one is alive, else why they ended. */
static int poll_sessions(struct bench *b)
{
	bool alive = false;

	for (int i = 0; i < b->n; i++) {
		ini_session_poll(&b->ss[i].s);
		retry_stalled(&b->ss[i]);
		if (b->ss[i].s.state == INI_S_FFP ||
		    b->ss[i].s.state == INI_S_RECOVERING)
			alive = true;
	}
	if (alive)
		return 0;
	return b->ss[0].s.fail ? b->ss[0].s.fail : -ECONNRESET;
}

/* Every 100 ms: the bandwidth of that window, for the peak. */
static void sample_peak(struct bench *b, uint64_t *tick)
{
	uint64_t now = ini_now_ns();
	double bw;

	if (now - *tick < 100000000ull)
		return;
	bw = (double)b->window_bytes * 1e9 / (double)(now - *tick);
	if (bw > b->r.bw_peak)
		b->r.bw_peak = bw;
	b->window_bytes = 0;
	*tick = now;
}

/* The measured part: completions resubmit until the duration is up, and
 * at least one command has completed or failed: on a machine too busy for
 * a peer to finish one command within a short duration (a target starved
 * of CPU), the window goes on until one does, so that 0 I/O means nothing
 * completes, never that the window was short. The command timeout and
 * the session's end bound it. */
static int measure(struct bench *b, idm_ctx *ctx)
{
	uint64_t t0, tick, end;
	int rc = 0;

	t0 = tick = ini_now_ns();
	end = t0 + (uint64_t)(b->o->duration * 1e9);
	while ((ini_now_ns() < end || (!b->r.ios && !b->r.errors)) &&
	       !ini_interrupted) {
		rc = idm_ctx_progress(ctx, 10);
		if (rc < 0 && rc != -EINTR)
			break;
		rc = poll_sessions(b);
		if (rc < 0)
			break;
		sample_peak(b, &tick);
	}
	b->r.seconds = (double)(ini_now_ns() - t0) / 1e9;
	return rc;
}

/* Commands still to complete after the run; parked ones are freed. */
static uint32_t drain_step(struct bench *b)
{
	uint32_t inflight = 0;

	for (int i = 0; i < b->n; i++) {
		struct bsess *bs = &b->ss[i];

		while (bs->stalled) {
			struct ini_cmd *c = bs->stalled;

			bs->stalled = c->next_free;
			ini_cmd_put(c);
		}
		/* a lost connection is recovered here too: what it had in
		 * flight is retried, not abandoned */
		ini_session_poll(&bs->s);
		if (bs->s.state == INI_S_FFP ||
		    bs->s.state == INI_S_RECOVERING)
			inflight += bs->s.inflight + bs->s.nretry;
	}
	return inflight;
}

/* After the run, completions just free their slots. The command timeout
 * and recovery act first: the deadline only bounds a session that
 * neither answers nor fails. */
static void drain(struct bench *b, idm_ctx *ctx)
{
	const struct ini_opts *o = b->o;
	uint64_t deadline =
		ini_now_ns() + (uint64_t)(o->timeout_s + o->noop_interval_s +
					  o->noop_timeout_s +
					  o->replacement_timeout_s + 5) *
				       1000000000ull;
	uint32_t inflight;

	while ((inflight = drain_step(b))) {
		if (ini_now_ns() > deadline) {
			ex_err("bench: %u command(s) never completed", inflight);
			b->r.errors += inflight;
			return;
		}
		idm_ctx_progress(ctx, 10);
	}
}

static int run(struct bench *b, idm_ctx *ctx)
{
	int rc;

	b->running = true;
	rc = start_all(b);
	if (rc < 0) {
		b->running = false;
		return rc;
	}
	rc = measure(b, ctx);
	b->running = false;
	/* A Ctrl-C only shortens the run: still drain, report and log out
	 * (a second one stops those waits). */
	ini_interrupted = 0;
	drain(b, ctx);
	if (b->r.bw_peak == 0 && b->r.seconds > 0)
		b->r.bw_peak = (double)b->r.bytes / b->r.seconds;
	return rc;
}

/* I/O size and span against the LUN: blocks per I/O and I/O positions;
 * -EINVAL (said why) when they do not fit. */
static int plan(struct bench *b)
{
	const struct ini_opts *o = b->o;
	uint64_t span = b->li->blocks * b->li->block_size;

	if (o->bs % b->li->block_size) {
		ex_err("bench: --bs %u is not a multiple of the block size %u",
		       o->bs, b->li->block_size);
		return -EINVAL;
	}
	if (o->span && o->span < span)
		span = o->span;
	b->blocks = o->bs / b->li->block_size;
	b->slots = span / o->bs;
	if (b->slots == 0) {
		ex_err("bench: the LUN is smaller than one I/O");
		return -EINVAL;
	}
	return 0;
}

static void result_init(struct ini_bench_result *r, const struct ini_opts *o,
			const char *target, int lun)
{
	ini_hist_init(&r->lat);
	ini_hist_init(&r->lat_rd);
	ini_hist_init(&r->lat_wr);
	r->provider = o->provider;
	r->target = target;
	r->lun = lun;
	r->sessions = o->sessions;
	r->qd = o->qd;
	r->bs = o->bs;
	r->read_pct = o->read_pct;
	r->seq = o->seq;
}

/* Every session's connection counters, for the JSON report. */
static void collect_conn_stats(struct bench *b)
{
	b->r.conn_stats = calloc((size_t)b->n, sizeof(*b->r.conn_stats));
	for (int i = 0; b->r.conn_stats && i < b->n; i++) {
		struct idm_conn_stats *st = &b->r.conn_stats[b->r.n_conn_stats];

		st->size = sizeof(*st);
		if (b->ss[i].s.conn &&
		    idm_conn_get_stats(b->ss[i].s.conn, st) == 0)
			b->r.n_conn_stats++;
	}
}

/* A run that measured anything is reported, even a failed one. */
static void report(struct bench *b, int rc)
{
	if (rc != 0 && !b->r.ios)
		return;
	if (b->o->json) {
		collect_conn_stats(b);
		ini_report_json(&b->r);
	} else {
		ini_report_table(&b->r);
	}
}

int ini_bench(const struct ini_opts *o, idm_ctx *ctx, const char *target,
	      const struct ini_lun_info *li)
{
	struct bench b = { .o = o, .li = li, .n = o->sessions };
	int rc = plan(&b);

	if (rc < 0)
		return rc;
	b.ss = calloc((size_t)b.n, sizeof(*b.ss));
	if (!b.ss)
		return -ENOMEM;
	result_init(&b.r, o, target, li->lun);
	rc = open_sessions(&b, ctx, target);
	if (rc == 0) {
		b.r.provider = idm_conn_provider(b.ss[0].s.conn);
		rc = run(&b, ctx);
	}
	report(&b, rc);
	close_sessions(&b);
	free(b.r.conn_stats);
	free(b.ss);
	if (rc == 0 && b.r.errors)
		rc = -EIO;
	return rc;
}
