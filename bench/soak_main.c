/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench-soak: options, the sessions' life cycle, the main loop (progress,
 * recovery, kills) and the report: one JSON object per line on stdout
 * ("start", one "interval" per --interval, "summary"), for bench/soak to
 * read; errors on stderr. Exit status 0 when every READ matched, nothing
 * failed and the program's own descriptors came back; 1 otherwise; 2 for
 * a usage error.
 */
#include "soak.h"

#include "ex_log.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS 1000000000ull

/* the session engine stops its waits when this is set (SIGINT/SIGTERM) */
volatile sig_atomic_t ini_interrupted;

static void on_signal(int sig)
{
	(void)sig;
	ini_interrupted = 1;
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [options] iscsi://HOST[:PORT]/IQN/LUN "
		"[-- idm-initiator options]\n"
		"  -s, --sessions N      sessions (default 64)\n"
		"  -d, --duration SEC    seconds of load (default 600)\n"
		"  -Q, --qd N            commands in flight per session "
		"(default 4)\n"
		"  -k, --kill-every SEC  mean seconds between connection kills "
		"(default 2; 0: none)\n"
		"  -i, --interval SEC    seconds per report line (default 1)\n"
		"      --max-io SIZE     largest I/O, a multiple of the block "
		"size (default 1M)\n"
		"      --read-pct N      percentage of READs (default 50)\n"
		"      --seed N          random seed (default: from the "
		"clock)\n"
		"  -h, --help            this text\n"
		"Each session owns LUN blocks / N blocks, at least 2 * qd * "
		"max-io.\n"
		"Options after -- go to the session engine (idm-initiator's: "
		"-v,\n"
		"--header-digest, --data-digest, --replacement-timeout, ...).\n",
		prog);
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K': x <<= 10; end++; break;
	case 'm': case 'M': x <<= 20; end++; break;
	case 'g': case 'G': x <<= 30; end++; break;
	default: break;
	}
	if (*end)
		return -1;
	*v = x;
	return 0;
}

static int parse_secs(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return (errno || end == s || *end || *v < 0 || *v > 1e7) ? -1 : 0;
}

/* Returns 0, 1 for --help, or -1 (usage error, reported). */
static int parse(int argc, char **argv, struct soak_opts *so,
		 struct ini_opts *io)
{
	enum { OPT_MAX_IO = 256, OPT_READ_PCT, OPT_SEED };
	static const struct option lopts[] = {
		{ "sessions", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "qd", required_argument, NULL, 'Q' },
		{ "kill-every", required_argument, NULL, 'k' },
		{ "interval", required_argument, NULL, 'i' },
		{ "max-io", required_argument, NULL, OPT_MAX_IO },
		{ "read-pct", required_argument, NULL, OPT_READ_PCT },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* what the engine is told before the user's own options: quiet,
	 * no discovery, and recovery on (the soak kills connections) */
	static const char *const fixed[] = {
		"-q", "--no-discovery", "--log-level", "error",
		"--replacement-timeout", "30",
	};
	const int nfixed = (int)(sizeof(fixed) / sizeof(fixed[0]));
	uint64_t v, qd = 4;
	const char *bad = NULL;
	char **eargv;
	int c, eargc = 0, rc;

	memset(so, 0, sizeof(*so));
	so->sessions = 64;
	so->duration = 600;
	so->kill_every = 2;
	so->interval = 1;
	so->max_io = 1u << 20;
	so->read_pct = 50;
	so->max_reported = 20;
	while ((c = getopt_long(argc, argv, "+s:d:Q:k:i:h", lopts, NULL)) !=
	       -1) {
		switch (c) {
		case 's':
			if (parse_u64(optarg, &v) || v < 1 || v > 4096)
				bad = "--sessions";
			else
				so->sessions = (int)v;
			break;
		case 'd':
			if (parse_secs(optarg, &so->duration) ||
			    so->duration <= 0)
				bad = "--duration";
			break;
		case 'Q':
			if (parse_u64(optarg, &qd) || qd < 1 || qd > 256)
				bad = "--qd";
			break;
		case 'k':
			if (parse_secs(optarg, &so->kill_every))
				bad = "--kill-every";
			break;
		case 'i':
			if (parse_secs(optarg, &so->interval) ||
			    so->interval < 0.1)
				bad = "--interval";
			break;
		case OPT_MAX_IO:
			if (parse_u64(optarg, &v) || v < 512 || v > (16u << 20))
				bad = "--max-io";
			else
				so->max_io = (uint32_t)v;
			break;
		case OPT_READ_PCT:
			if (parse_u64(optarg, &v) || v > 100)
				bad = "--read-pct";
			else
				so->read_pct = (int)v;
			break;
		case OPT_SEED:
			if (parse_u64(optarg, &so->seed))
				bad = "--seed";
			break;
		case 'h':
			return 1;
		default:
			return -1;
		}
		if (bad) {
			fprintf(stderr, "%s: bad value '%s' for %s\n", argv[0],
				optarg, bad);
			return -1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: expected a URL\n", argv[0]);
		return -1;
	}
	/* the engine's command line: fixed, the user's, then the URL */
	eargv = calloc((size_t)(nfixed + argc + 2), sizeof(*eargv));
	if (!eargv)
		return -1;
	eargv[eargc++] = argv[0];
	for (int i = 0; i < nfixed; i++)
		eargv[eargc++] = (char *)fixed[i];
	for (int i = optind + 1; i < argc; i++)
		if (i > optind + 1 || strcmp(argv[i], "--"))
			eargv[eargc++] = argv[i];
	eargv[eargc++] = argv[optind];
	optind = 0; /* glibc: start a new scan */
	rc = ini_opts_parse(io, eargc, eargv);
	free(eargv);
	if (rc)
		return -1;
	io->qd = (uint32_t)qd;
	return 0;
}

/* Descriptors this process has open: libidm must give back its own. */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* not the directory's own */
}

/* ------------------------------------------------------------------ */
/* Sessions                                                            */
/* ------------------------------------------------------------------ */

static int sess_login(struct soak_sess *ss)
{
	struct soak *k = ss->k;
	int rc;

	rc = ini_session_init(&ss->s, &k->io, k->ctx, ss->idx + 1, k->io.qd);
	if (rc == 0)
		rc = ini_session_connect(&ss->s);
	if (rc == 0)
		rc = ini_session_login(&ss->s, false, k->target);
	if (rc < 0)
		ex_err("session %d: login: %s", ss->idx + 1,
		       ss->s.why[0] ? ss->s.why : idm_strerror(rc));
	return rc;
}

/* Logged in (sess_login): clear the Unit Attention and start issuing. */
static int sess_start(struct soak_sess *ss)
{
	int rc = ini_clear_ua(&ss->s, ss->k->li.lun);

	if (rc == 0) {
		ss->open = true;
		ss->seen_recoveries = ss->s.recoveries;
		rc = soak_start_slots(ss);
	}
	return rc;
}

static int sess_alloc(struct soak *k, struct soak_sess *ss, int idx)
{
	uint64_t per = k->li.blocks / (uint64_t)k->n;

	ss->k = k;
	ss->idx = idx;
	ss->rng = k->run_id ^ ((uint64_t)(idx + 1) * 0x9e3779b97f4a7c15ull);
	if (!ss->rng)
		ss->rng = 1;
	ss->base = per * (uint64_t)idx;
	ss->nblocks = per;
	ss->gen = calloc(per, sizeof(*ss->gen));
	ss->slots = calloc(k->io.qd, sizeof(*ss->slots));
	if (!ss->gen || !ss->slots)
		return -ENOMEM;
	return idm_buf_alloc(k->ctx, (size_t)k->io.qd * k->so->max_io,
			     &ss->buf);
}

/* The session failed for good (recovery gave up, a protocol error):
 * what it had in flight failed with it (counted by soak_io.c); open it
 * anew in a second, as a new session. */
static void sess_failed(struct soak_sess *ss)
{
	struct soak *k = ss->k;

	k->now.session_failures++;
	ex_err("session %d: failed: %s; opening it again", ss->idx + 1,
	       ss->s.why[0] ? ss->s.why : idm_strerror(ss->s.fail));
	soak_drop_stalled(ss);
	for (uint32_t i = 0; i < k->io.qd; i++) {
		struct soak_slot *sl = &ss->slots[i];

		if (sl->blocks && sl->write)
			for (uint32_t b = 0; b < sl->blocks; b++)
				ss->gen[sl->lba - ss->base + b] = 0;
		sl->blocks = 0;
	}
	ini_session_fini(&ss->s);
	ss->open = false;
	ss->reopen_ns = ini_now_ns() + NS;
}

static void sess_reopen(struct soak_sess *ss)
{
	if (sess_login(ss) == 0 && sess_start(ss) == 0)
		return;
	ss->k->now.session_failures++;
	soak_drop_stalled(ss);
	ini_session_fini(&ss->s);
	ss->open = false;
	ss->reopen_ns = ini_now_ns() + NS;
}

/* Recovery, timeouts and failures of one session; call often. */
static void sess_poll(struct soak_sess *ss)
{
	struct soak *k = ss->k;

	if (!ss->open) {
		if (k->running && ini_now_ns() >= ss->reopen_ns)
			sess_reopen(ss);
		return;
	}
	ini_session_poll(&ss->s);
	if (ss->s.recoveries != ss->seen_recoveries) {
		k->now.recoveries +=
			(uint64_t)(ss->s.recoveries - ss->seen_recoveries);
		ss->seen_recoveries = ss->s.recoveries;
	}
	if (ss->s.state == INI_S_FFP) {
		soak_retry_stalled(ss);
		return;
	}
	if (ss->s.state != INI_S_RECOVERING)
		sess_failed(ss);
}

/* ------------------------------------------------------------------ */
/* Report                                                              */
/* ------------------------------------------------------------------ */

static void add_counts(struct soak_counts *t, const struct soak_counts *c)
{
	t->reads += c->reads;
	t->writes += c->writes;
	t->read_bytes += c->read_bytes;
	t->write_bytes += c->write_bytes;
	t->verified_blocks += c->verified_blocks;
	t->verify_errors += c->verify_errors;
	t->io_errors += c->io_errors;
	t->retried += c->retried;
	t->kills_abort += c->kills_abort;
	t->kills_shutdown += c->kills_shutdown;
	t->recoveries += c->recoveries;
	t->session_failures += c->session_failures;
	soak_count_max(&t->lat_max_ns, c->lat_max_ns);
}

static void print_counts(const struct soak_counts *c, double secs)
{
	double ios = (double)(c->reads + c->writes);
	double bytes = (double)(c->read_bytes + c->write_bytes);

	printf("\"reads\": %" PRIu64 ", \"writes\": %" PRIu64
	       ", \"read_bytes\": %" PRIu64 ", \"write_bytes\": %" PRIu64
	       ", \"iops\": %.1f, \"mb_s\": %.2f"
	       ", \"verified_blocks\": %" PRIu64 ", \"verify_errors\": %" PRIu64
	       ", \"io_errors\": %" PRIu64 ", \"retried\": %" PRIu64
	       ", \"kills\": %" PRIu64 ", \"kills_abort\": %" PRIu64
	       ", \"kills_shutdown\": %" PRIu64 ", \"recoveries\": %" PRIu64
	       ", \"session_failures\": %" PRIu64 ", \"lat_max_ms\": %.1f",
	       c->reads, c->writes, c->read_bytes, c->write_bytes,
	       secs > 0 ? ios / secs : 0.0, secs > 0 ? bytes / secs / 1e6 : 0.0,
	       c->verified_blocks, c->verify_errors, c->io_errors, c->retried,
	       c->kills_abort + c->kills_shutdown, c->kills_abort,
	       c->kills_shutdown, c->recoveries, c->session_failures,
	       (double)c->lat_max_ns / 1e6);
}

static void report_interval(struct soak *k, double t, double dt)
{
	int up = 0;

	for (int i = 0; i < k->n; i++)
		up += k->ss[i].open && k->ss[i].s.state == INI_S_FFP;
	printf("{\"type\": \"interval\", \"t\": %.3f, \"dt\": %.3f, "
	       "\"sessions_up\": %d, ",
	       t, dt, up);
	print_counts(&k->now, dt);
	printf("}\n");
	fflush(stdout);
	add_counts(&k->total, &k->now);
	memset(&k->now, 0, sizeof(k->now));
}

/* ------------------------------------------------------------------ */
/* The run                                                             */
/* ------------------------------------------------------------------ */

static void kill_one(struct soak *k)
{
	/* a random session that is up; a few tries, then skip this one */
	for (int t = 0; t < 8; t++) {
		struct soak_sess *ss = &k->ss[soak_rand(&k->rng) % (uint64_t)k->n];

		if (!ss->open || ss->s.state != INI_S_FFP)
			continue;
		if (soak_kill(ss, soak_rand(&k->rng) & 1) ==
		    SOAK_KILL_SHUTDOWN)
			k->now.kills_shutdown++;
		else
			k->now.kills_abort++;
		return;
	}
}

static uint64_t next_kill_in(struct soak *k)
{
	/* uniform in [0.5, 1.5] x the mean: kills do not fall in step with
	 * the report intervals */
	double f = 0.5 + (double)(soak_rand(&k->rng) % 1000) / 1000.0;

	return (uint64_t)(k->so->kill_every * f * 1e9);
}

static int run(struct soak *k)
{
	const struct soak_opts *so = k->so;
	uint64_t t0 = ini_now_ns(), tick = t0, now, kill_at, end, bound;
	uint64_t step = (uint64_t)(so->interval * 1e9);
	uint32_t left = 0;

	end = t0 + (uint64_t)(so->duration * 1e9);
	kill_at = so->kill_every > 0 ? t0 + next_kill_in(k) : UINT64_MAX;
	while ((now = ini_now_ns()) < end && !ini_interrupted) {
		int rc = idm_ctx_progress(k->ctx, 10);

		if (rc < 0 && rc != -EINTR) {
			ex_err("progress: %s", idm_strerror(rc));
			return rc;
		}
		for (int i = 0; i < k->n; i++)
			sess_poll(&k->ss[i]);
		now = ini_now_ns();
		if (now >= kill_at) {
			kill_one(k);
			kill_at = now + next_kill_in(k);
		}
		if (now - tick >= step) {
			report_interval(k, (double)(now - t0) / 1e9,
					(double)(now - tick) / 1e9);
			tick = now;
		}
	}
	k->running = false;
	k->seconds = (double)(ini_now_ns() - t0) / 1e9;
	ini_interrupted = 0; /* a Ctrl-C shortens the run; still drain */
	/* Drain: completions no longer issue. A killed connection is still
	 * recovered here, so what it had in flight completes. The bound
	 * only catches a session that neither answers nor fails. */
	bound = ini_now_ns() + (uint64_t)(k->io.timeout_s +
					  k->io.noop_interval_s +
					  k->io.noop_timeout_s +
					  k->io.replacement_timeout_s + 5) *
				       NS;
	for (;;) {
		left = 0;
		for (int i = 0; i < k->n; i++) {
			struct soak_sess *ss = &k->ss[i];

			soak_drop_stalled(ss);
			sess_poll(ss);
			if (ss->open)
				left += ss->s.inflight + ss->s.nretry;
		}
		if (!left || ini_now_ns() > bound)
			break;
		idm_ctx_progress(k->ctx, 10);
	}
	if (left) {
		ex_err("%u command(s) never completed", left);
		k->now.io_errors += left;
	}
	now = ini_now_ns();
	report_interval(k, (double)(now - t0) / 1e9, (double)(now - tick) / 1e9);
	return 0;
}

/* Before the load: every session writes its whole region once, in
 * order, with no kills. Then every block has a known generation, so
 * every READ checks every block, and the RAM LUN's pages are all in
 * before the target's memory is watched (the load touching pages for
 * the first time would look like a leak). */
static int prefill(struct soak *k, uint64_t *bytes)
{
	bool busy = true;

	while (busy && !ini_interrupted) {
		int rc = idm_ctx_progress(k->ctx, 10);

		if (rc < 0 && rc != -EINTR) {
			ex_err("progress: %s", idm_strerror(rc));
			return rc;
		}
		busy = false;
		for (int i = 0; i < k->n; i++) {
			struct soak_sess *ss = &k->ss[i];

			sess_poll(ss);
			if (ss->open &&
			    (ss->prefill_next < ss->nblocks ||
			     ss->s.inflight || ss->s.nretry || ss->stalled))
				busy = true;
		}
	}
	*bytes = k->now.write_bytes;
	/* what failed counts; the throughput is not the load's */
	k->total.io_errors += k->now.io_errors;
	k->total.verify_errors += k->now.verify_errors;
	k->total.session_failures += k->now.session_failures;
	k->total.recoveries += k->now.recoveries;
	memset(&k->now, 0, sizeof(k->now));
	for (int i = 0; i < k->n; i++) {
		struct soak_sess *ss = &k->ss[i];

		ss->prefilling = false;
		if (ss->open && ss->s.state == INI_S_FFP) {
			int rc = soak_start_slots(ss);

			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

static int open_all(struct soak *k)
{
	uint32_t bsz, max_blocks;
	uint64_t per;
	int lun = k->io.portal.lun;
	int rc;

	k->ss = calloc((size_t)k->n, sizeof(*k->ss));
	if (!k->ss)
		return -ENOMEM;
	/* the first session finds the LUN's size */
	k->ss[0].k = k;
	rc = sess_login(&k->ss[0]);
	if (rc == 0)
		rc = ini_probe_lun(&k->ss[0].s, &lun, &k->li);
	if (rc < 0)
		return rc;
	bsz = k->li.block_size;
	if (bsz < 512 || bsz % 8 || k->so->max_io % bsz) {
		ex_err("--max-io %u is not a multiple of the block size %u",
		       k->so->max_io, bsz);
		return -EINVAL;
	}
	max_blocks = k->so->max_io / bsz;
	per = k->li.blocks / (uint64_t)k->n;
	if (per < 2ull * k->io.qd * max_blocks) {
		ex_err("the LUN is too small: %d sessions of %u commands of "
		       "up to %u bytes need at least %" PRIu64 " bytes",
		       k->n, k->io.qd, k->so->max_io,
		       (uint64_t)2 * k->io.qd * k->so->max_io * (uint64_t)k->n);
		return -EINVAL;
	}
	for (int i = 0; i < k->n; i++) {
		struct soak_sess *ss = &k->ss[i];

		rc = sess_alloc(k, ss, i);
		ss->prefilling = true;
		if (rc == 0 && i > 0)
			rc = sess_login(ss);
		if (rc < 0)
			return rc;
	}
	k->running = true;
	for (int i = 0; i < k->n; i++) {
		rc = sess_start(&k->ss[i]);
		if (rc < 0) {
			ex_err("session %d: %s", i + 1, idm_strerror(rc));
			return rc;
		}
	}
	return 0;
}

static void close_all(struct soak *k)
{
	if (!k->ss)
		return;
	for (int i = 0; i < k->n; i++) {
		struct soak_sess *ss = &k->ss[i];

		if (ss->k && ss->s.state == INI_S_FFP) {
			int rc = ini_session_logout(&ss->s);

			if (rc < 0) {
				ex_err("session %d: logout: %s", i + 1,
				       idm_strerror(rc));
				k->total.io_errors++;
			}
		}
		if (ss->k)
			ini_session_fini(&ss->s);
		if (ss->buf)
			idm_buf_destroy(ss->buf);
		free(ss->gen);
		free(ss->slots);
	}
	free(k->ss);
	k->ss = NULL;
}

int main(int argc, char **argv)
{
	struct soak_opts so;
	struct soak k = { .so = &so };
	struct idm_ctx_attr attr = { .size = sizeof(attr) };
	const struct soak_counts *t = &k.total;
	int fds_before, fds_after, rc;
	double setup_s;
	uint64_t t_setup, prefill_b = 0;
	bool ok;

	rc = parse(argc, argv, &so, &k.io);
	if (rc == 1) {
		usage(stdout, argv[0]);
		return 0;
	}
	if (rc < 0) {
		fprintf(stderr, "Try '%s --help'.\n", argv[0]);
		return 2;
	}
	ex_log_init(argv[0], k.io.log_level);
	signal(SIGPIPE, SIG_IGN); /* libidm reports EPIPE */
	{
		struct sigaction sa = { .sa_handler = on_signal };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	k.n = so.sessions;
	k.target = k.io.portal.target;
	k.run_id = so.seed ? so.seed : ini_now_ns();
	so.seed = k.run_id;
	k.rng = k.run_id * 0x2545f4914f6cdd1dull | 1;

	fds_before = count_fds();
	attr.log_fn = ex_log_idm_sink;
	attr.log_level = k.io.log_level;
	rc = idm_ctx_create(&attr, &k.ctx);
	if (rc < 0) {
		ex_err("idm_ctx_create: %s", idm_strerror(rc));
		return 1;
	}
	/* the logins and the prefill overlap: a session starts writing its
	 * region as soon as it is logged in */
	t_setup = ini_now_ns();
	rc = open_all(&k);
	if (rc == 0)
		rc = prefill(&k, &prefill_b);
	setup_s = (double)(ini_now_ns() - t_setup) / 1e9;
	if (rc == 0) {
		printf("{\"type\": \"start\", \"sessions\": %d, \"qd\": %u, "
		       "\"duration\": %.1f, \"kill_every\": %.2f, "
		       "\"max_io\": %u, \"read_pct\": %d, \"seed\": %" PRIu64
		       ", \"lun_blocks\": %" PRIu64 ", \"block_size\": %u, "
		       "\"region_blocks\": %" PRIu64 ", \"setup_s\": %.2f, "
		       "\"prefill_bytes\": %" PRIu64 ", \"provider\": \"%s\"}\n",
		       k.n, k.io.qd, so.duration, so.kill_every, so.max_io,
		       so.read_pct, so.seed, k.li.blocks, k.li.block_size,
		       k.ss[0].nblocks, setup_s, prefill_b,
		       idm_conn_provider(k.ss[0].s.conn));
		fflush(stdout);
		rc = run(&k);
	}
	close_all(&k);
	idm_ctx_destroy(k.ctx);
	fds_after = count_fds();

	ok = rc == 0 && !t->verify_errors && !t->io_errors &&
	     !t->session_failures && t->reads + t->writes > 0 &&
	     fds_after == fds_before;
	printf("{\"type\": \"summary\", \"ok\": %s, \"error\": \"%s\", ",
	       ok ? "true" : "false", rc < 0 ? idm_strerror(rc) : "");
	print_counts(t, k.seconds);
	printf(", \"seconds\": %.3f", k.seconds);
	printf(", \"driver_fds_before\": %d, \"driver_fds_after\": %d}\n",
	       fds_before, fds_after);
	fflush(stdout);
	if (fds_after != fds_before)
		ex_err("descriptors: %d before, %d after closing everything",
		       fds_before, fds_after);
	return ok ? 0 : 1;
}
