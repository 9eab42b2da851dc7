/* SPDX-License-Identifier: BSD-2-Clause */
/* Command line and portal URL parsing of idm-initiator. */
#include "initiator.h"

#include "config.h"
#include "ex_chap.h"
#include "ex_log.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ini_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [OPTIONS] URL\n"
		"\n"
		"An iSCSI initiator on libidm: discovers targets "
		"(SendTargets), logs in,\n"
		"lists LUNs with INQUIRY and READ CAPACITY(16), and optionally "
		"writes and\n"
		"reads back a verified pattern (--verify) or runs a benchmark "
		"(--bench).\n"
		"\n"
		"URL (libiscsi style):\n"
		"  iscsi://HOST[:PORT][/TARGET-IQN[/LUN]]   TCP provider\n"
		"  iser://HOST[:PORT][/TARGET-IQN[/LUN]]    iSER provider\n"
		"  Without a target the first one SendTargets reports is used; "
		"without a\n"
		"  LUN the first disk REPORT LUNS returns. HOST may be "
		"[IPv6].\n"
		"\n"
		"General:\n"
		"  -p, --provider NAME       tcp, iser or auto (default: from "
		"the URL scheme)\n"
		"  -n, --initiator-name IQN  (default "
		"iqn.2026-11.org.libidm:initiator)\n"
		"  -t, --timeout SEC         login and per-command timeout "
		"(default 10)\n"
		"      --noop-out-interval SEC  ping the target (NOP-Out) after "
		"SEC idle\n"
		"                            (default 5; 0: never)\n"
		"      --noop-out-timeout SEC   no answer within SEC: dead peer "
		"(default 5)\n"
		"      --replacement-timeout SEC  after a lost connection, "
		"reconnect and\n"
		"                            retry for up to SEC (default 120; "
		"0: fail at once)\n"
		"  -v, --verbose             more logging on stderr (twice: "
		"debug)\n"
		"      --log-level LEVEL     error, warn, info or debug; default "
		"IDM_LOG_LEVEL, else warn\n"
		"  -q, --quiet               do not print targets, LUNs, "
		"INQUIRY, capacity\n"
		"      --no-discovery        skip the discovery session (needs "
		"a target)\n"
		"  -V, --version             print the program and libidm versions\n"
		"      --credentials FILE    CHAP secrets from FILE (mode 0600): "
		"lines\n"
		"                            chap = USER:SECRET (what we give), "
		"mutual-chap =\n"
		"                            USER:SECRET (what the target must "
		"answer with),\n"
		"                            discovery-chap = USER:SECRET "
		"(discovery only)\n"
		"      --chap USER:SECRET    chap on the command line, where "
		"every local user\n"
		"                            can read it: for tests only (warns)\n"
		"      --chap-algorithms LIST  CHAP_A offered, in order (default\n"
		"                            sha3-256,sha256,sha1,md5)\n"
		"  -h, --help                this text\n"
		"\n"
		"Keys that change the data path (default: let the target "
		"choose):\n"
		"      --immediate-data yes|no\n"
		"      --initial-r2t yes|no\n"
		"      --first-burst N       FirstBurstLength (bytes)\n"
		"      --max-burst N         MaxBurstLength (bytes)\n"
		"      --max-recv-dsl N      our MaxRecvDataSegmentLength "
		"(default 256k);\n"
		"                            on iSER both *RecvDataSegmentLength "
		"offers\n"
		"      --max-outstanding-r2t N\n"
		"      --header-digest crc32c|none\n"
		"      --data-digest crc32c|none\n"
		"iSER only (RFC 7145 section 6):\n"
		"      --initiator-recv-dsl N  InitiatorRecvDataSegmentLength "
		"(default 256k)\n"
		"      --target-recv-dsl N   TargetRecvDataSegmentLength "
		"(default 8k)\n"
		"      --tagged-buffer-solicited-only yes|no\n"
		"                            declare "
		"TaggedBufferForSolicitedDataOnly\n"
		"      --iser-hello yes|no   declare iSERHelloRequired\n"
		"\n"
		"Verification:\n"
		"      --verify SIZE         write SIZE bytes of a seeded "
		"random pattern\n"
		"                            from LBA 0, read them back and "
		"compare\n"
		"      --verify-io SIZE[,SIZE...]\n"
		"                            I/O size of the verify pass "
		"(default 256k);\n"
		"                            a list is used in turn, I/O after "
		"I/O\n"
		"      --seed N              pattern seed (default: from the "
		"clock)\n"
		"      --cdb16               use READ/WRITE(16) (default: 10 "
		"when it fits)\n"
		"\n"
		"Benchmark:\n"
		"      --bench               run the benchmark after the "
		"checks above\n"
		"  -b, --bs SIZE             bytes per I/O (default 4k)\n"
		"  -d, --qd N                commands in flight per session "
		"(default 16)\n"
		"      --read-pct PCT        percentage of reads (default 100; "
		"alias\n"
		"                            --rw-mix)\n"
		"      --duration SEC        run time (default 5)\n"
		"      --sessions N          parallel sessions (default 1)\n"
		"      --seq                 sequential LBAs (default random)\n"
		"      --span SIZE           bytes of the LUN to touch "
		"(default all)\n"
		"      --json                print the results as JSON on "
		"stdout\n"
		"\n"
		"SIZE and N accept k, m, g suffixes (powers of 1024).\n"
		"Exit status: 0 success, 1 failure (data mismatch included), 2 "
		"usage.\n",
		prog);
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	/* decimal, or 0x hex; a leading 0 is not octal */
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		v = strtoull(s + 2, &end, 16);
	else
		v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (tolower((unsigned char)*end)) {
	case 'k':
		v <<= 10;
		end++;
		break;
	case 'm':
		v <<= 20;
		end++;
		break;
	case 'g':
		v <<= 30;
		end++;
		break;
	case 't':
		v <<= 40;
		end++;
		break;
	default:
		break;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (parse_size(s, &v) || v < min || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int parse_yesno(const char *s, int *out)
{
	if (!strcasecmp(s, "yes") || !strcmp(s, "1") || !strcasecmp(s, "on"))
		*out = INI_YES;
	else if (!strcasecmp(s, "no") || !strcmp(s, "0") ||
		 !strcasecmp(s, "off"))
		*out = INI_NO;
	else
		return -EINVAL;
	return 0;
}

static int parse_digest(const char *s, int *out)
{
	if (!strcasecmp(s, "crc32c"))
		*out = INI_YES;
	else if (!strcasecmp(s, "none"))
		*out = INI_NO;
	else
		return -EINVAL;
	return 0;
}

static int parse_level(const char *s)
{
	static const char *names[] = { "error", "warn", "info", "debug" };

	for (int i = 0; i < 4; i++)
		if (!strcasecmp(s, names[i]))
			return i;
	return -1;
}

enum {
	OPT_LOG_LEVEL = 256,
	OPT_NO_DISC,
	OPT_IMM,
	OPT_R2T,
	OPT_FBL,
	OPT_MBL,
	OPT_MRDSL,
	OPT_MAXR2T,
	OPT_HDIG,
	OPT_DDIG,
	OPT_IRDSL,
	OPT_TRDSL,
	OPT_TAGGED,
	OPT_HELLO,
	OPT_VERIFY,
	OPT_VERIFY_IO,
	OPT_SEED,
	OPT_CDB16,
	OPT_BENCH,
	OPT_READ_PCT,
	OPT_DURATION,
	OPT_SESSIONS,
	OPT_SEQ,
	OPT_SPAN,
	OPT_JSON,
	OPT_NOOP_INT,
	OPT_NOOP_TMO,
	OPT_REPL_TMO,
	OPT_CREDENTIALS,
	OPT_CHAP,
	OPT_CHAP_ALGS,
};

static const struct option long_opts[] = {
	{ "provider", required_argument, NULL, 'p' },
	{ "initiator-name", required_argument, NULL, 'n' },
	{ "timeout", required_argument, NULL, 't' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "no-discovery", no_argument, NULL, OPT_NO_DISC },
	{ "immediate-data", required_argument, NULL, OPT_IMM },
	{ "initial-r2t", required_argument, NULL, OPT_R2T },
	{ "first-burst", required_argument, NULL, OPT_FBL },
	{ "max-burst", required_argument, NULL, OPT_MBL },
	{ "max-recv-dsl", required_argument, NULL, OPT_MRDSL },
	{ "max-outstanding-r2t", required_argument, NULL, OPT_MAXR2T },
	{ "header-digest", required_argument, NULL, OPT_HDIG },
	{ "data-digest", required_argument, NULL, OPT_DDIG },
	{ "initiator-recv-dsl", required_argument, NULL, OPT_IRDSL },
	{ "target-recv-dsl", required_argument, NULL, OPT_TRDSL },
	{ "tagged-buffer-solicited-only", required_argument, NULL, OPT_TAGGED },
	{ "iser-hello", required_argument, NULL, OPT_HELLO },
	{ "verify", required_argument, NULL, OPT_VERIFY },
	{ "verify-io", required_argument, NULL, OPT_VERIFY_IO },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "cdb16", no_argument, NULL, OPT_CDB16 },
	{ "bench", no_argument, NULL, OPT_BENCH },
	{ "bs", required_argument, NULL, 'b' },
	{ "qd", required_argument, NULL, 'd' },
	{ "read-pct", required_argument, NULL, OPT_READ_PCT },
	{ "rw-mix", required_argument, NULL, OPT_READ_PCT },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "sessions", required_argument, NULL, OPT_SESSIONS },
	{ "seq", no_argument, NULL, OPT_SEQ },
	{ "span", required_argument, NULL, OPT_SPAN },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "noop-out-interval", required_argument, NULL, OPT_NOOP_INT },
	{ "noop-out-timeout", required_argument, NULL, OPT_NOOP_TMO },
	{ "replacement-timeout", required_argument, NULL, OPT_REPL_TMO },
	{ "credentials", required_argument, NULL, OPT_CREDENTIALS },
	{ "chap", required_argument, NULL, OPT_CHAP },
	{ "chap-algorithms", required_argument, NULL, OPT_CHAP_ALGS },
	{ NULL, 0, NULL, 0 },
};

/* "SIZE[,SIZE...]": the verify pass cycles through the sizes. */
static int parse_io_list(const char *s, struct ini_opts *o)
{
	char buf[256];
	char *tok, *save = NULL;
	uint32_t max = 0;
	int n = 0;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, strlen(s) + 1);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint32_t v;

		if (n == INI_VERIFY_IO_MAX || parse_u32(tok, 512, 16u << 20, &v))
			return -EINVAL;
		o->verify_ios[n++] = v;
		if (v > max)
			max = v;
	}
	if (!n)
		return -EINVAL;
	o->nverify_io = n;
	o->verify_io = max;
	return 0;
}

uint32_t ini_opts_local_dsl(const struct ini_opts *o, bool iser)
{
	if (iser && o->initiator_rdsl)
		return o->initiator_rdsl;
	return o->max_recv_dsl ? o->max_recv_dsl : INI_DSL_DEFAULT;
}

uint32_t ini_opts_target_dsl(const struct ini_opts *o)
{
	if (o->target_rdsl)
		return o->target_rdsl;
	/* an explicit --max-recv-dsl still sets both offers, as before */
	return o->max_recv_dsl ? o->max_recv_dsl : INI_ISER_TRDSL_DEFAULT;
}

/* "USER:SECRET" split in place. */
static int split_cred(char *arg, const char **user, const char **secret)
{
	char *colon = strchr(arg, ':');

	if (!colon || colon == arg || !colon[1] ||
	    strlen(colon + 1) > EX_CHAP_SECRET_MAX || colon - arg > 255)
		return -EINVAL;
	*colon = '\0';
	*user = arg;
	*secret = colon + 1;
	return 0;
}

static bool chap_on_cmdline;

static int cred_setting(const char *name, char *value, const char *where,
			void *arg)
{
	struct ini_opts *o = arg;
	const char **u, **s;

	if (!strcmp(name, "chap")) {
		u = &o->chap_user;
		s = &o->chap_secret;
	} else if (!strcmp(name, "mutual-chap")) {
		u = &o->mutual_user;
		s = &o->mutual_secret;
	} else if (!strcmp(name, "discovery-chap")) {
		u = &o->disc_user;
		s = &o->disc_secret;
	} else {
		ex_err("%s: unknown setting '%s' (a credentials file holds: "
		       "chap, mutual-chap, discovery-chap)",
		       where, name);
		return -1;
	}
	/* never quoted: the value holds the secret */
	if (split_cred(value, u, s) < 0) {
		ex_err("%s: %s needs USER:SECRET (secret up to %d bytes)",
		       where, name, EX_CHAP_SECRET_MAX);
		return -1;
	}
	return 0;
}

int ini_credentials_load(struct ini_opts *o)
{
	if (chap_on_cmdline)
		ex_warn("option --chap: every local user can read the secret "
			"(ps, /proc/PID/cmdline); outside tests keep it in a "
			"credentials file (--credentials FILE, mode 0600)");
	if (o->credentials &&
	    config_load_private(o->credentials, "credentials file", cred_setting,
				o) < 0)
		return -1;
	/* RFC 7143 12.1.3: the target proves itself with its own secret */
	if (o->mutual_secret &&
	    ((o->chap_secret && !strcmp(o->mutual_secret, o->chap_secret)) ||
	     (o->disc_secret && !strcmp(o->mutual_secret, o->disc_secret)))) {
		ex_err("credentials: the mutual-chap secret must differ from "
		       "the initiator's own");
		return -1;
	}
	if (o->mutual_user && !o->chap_user && !o->disc_user) {
		ex_err("credentials: mutual-chap needs chap = USER:SECRET too "
		       "(the initiator authenticates first)");
		return -1;
	}
	return 0;
}

/* Returns 0, 1 for --help, 2 for --version (caller exits 0), or -EINVAL
 * (usage error). */
int ini_opts_parse(struct ini_opts *o, int argc, char **argv)
{
	uint64_t v;
	int c, lvl;
	const char *bad = NULL;

	memset(o, 0, sizeof(*o));
	o->initiator_name = "iqn.2026-11.org.libidm:initiator";
	/* IDM_LOG_LEVEL first; -v and --log-level change it */
	o->log_level = ex_log_env_level(argv[0], IDM_LOG_WARN);
	o->timeout_s = 10;
	o->noop_interval_s = 5; /* open-iscsi's defaults */
	o->noop_timeout_s = 5;
	o->replacement_timeout_s = 120;
	o->immediate_data = o->initial_r2t = INI_DEFAULT;
	o->header_digest = o->data_digest = INI_DEFAULT;
	o->first_burst = 262144;
	o->max_burst = 1048576;
	o->max_outstanding_r2t = 1;
	o->tagged_solicited = o->iser_hello = INI_DEFAULT;
	o->verify_io = 256 * 1024;
	o->verify_ios[0] = o->verify_io;
	o->nverify_io = 1;
	o->bs = 4096;
	o->qd = 16;
	o->read_pct = 100;
	o->duration = 5;
	o->sessions = 1;
	chap_on_cmdline = false;
	o->nchap_algs = ex_chap_alg_list_parse("sha3-256,sha256,sha1,md5",
					       o->chap_algs, EX_CHAP_MAX_ALGS);

	while ((c = getopt_long(argc, argv, "p:n:t:vqhVb:d:", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 'p':
			if (strcmp(optarg, "tcp") && strcmp(optarg, "iser") &&
			    strcmp(optarg, "auto"))
				bad = "--provider";
			o->provider = optarg;
			break;
		case 'n':
			if (strlen(optarg) >= INI_MAX_NAME)
				bad = "--initiator-name";
			o->initiator_name = optarg;
			break;
		case 't':
			if (parse_size(optarg, &v) || v == 0 || v > 3600)
				bad = "--timeout";
			else
				o->timeout_s = (int)v;
			break;
		case 'v':
			if (o->log_level < IDM_LOG_DEBUG)
				o->log_level++;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			return 1;
		case 'V':
			return 2;
		case OPT_LOG_LEVEL:
			lvl = parse_level(optarg);
			if (lvl < 0)
				bad = "--log-level";
			else
				o->log_level = lvl;
			break;
		case OPT_NO_DISC:
			o->no_discovery = true;
			break;
		case OPT_IMM:
			if (parse_yesno(optarg, &o->immediate_data))
				bad = "--immediate-data";
			break;
		case OPT_R2T:
			if (parse_yesno(optarg, &o->initial_r2t))
				bad = "--initial-r2t";
			break;
		/* ranges: RFC 7143 section 13 */
		case OPT_FBL:
			if (parse_u32(optarg, 512, 16777215, &o->first_burst))
				bad = "--first-burst";
			break;
		case OPT_MBL:
			if (parse_u32(optarg, 512, 16777215, &o->max_burst))
				bad = "--max-burst";
			break;
		case OPT_MRDSL:
			if (parse_u32(optarg, 512, 16777215, &o->max_recv_dsl))
				bad = "--max-recv-dsl";
			break;
		case OPT_IRDSL:
			if (parse_u32(optarg, 512, 16777215, &o->initiator_rdsl))
				bad = "--initiator-recv-dsl";
			break;
		case OPT_TRDSL:
			if (parse_u32(optarg, 512, 16777215, &o->target_rdsl))
				bad = "--target-recv-dsl";
			break;
		case OPT_TAGGED:
			if (parse_yesno(optarg, &o->tagged_solicited))
				bad = "--tagged-buffer-solicited-only";
			break;
		case OPT_HELLO:
			if (parse_yesno(optarg, &o->iser_hello))
				bad = "--iser-hello";
			break;
		case OPT_MAXR2T:
			if (parse_u32(optarg, 1, 65535,
				      &o->max_outstanding_r2t))
				bad = "--max-outstanding-r2t";
			break;
		case OPT_HDIG:
			if (parse_digest(optarg, &o->header_digest))
				bad = "--header-digest";
			break;
		case OPT_DDIG:
			if (parse_digest(optarg, &o->data_digest))
				bad = "--data-digest";
			break;
		case OPT_VERIFY:
			if (parse_size(optarg, &o->verify_size) ||
			    !o->verify_size)
				bad = "--verify";
			break;
		case OPT_VERIFY_IO:
			if (parse_io_list(optarg, o))
				bad = "--verify-io";
			break;
		case OPT_SEED:
			if (parse_size(optarg, &o->seed))
				bad = "--seed";
			break;
		case OPT_CDB16:
			o->use16 = true;
			break;
		case OPT_CREDENTIALS:
			o->credentials = optarg;
			break;
		case OPT_CHAP:
			if (split_cred(optarg, &o->chap_user, &o->chap_secret))
				bad = "--chap";
			else
				chap_on_cmdline = true;
			break;
		case OPT_CHAP_ALGS:
			lvl = ex_chap_alg_list_parse(optarg, o->chap_algs,
						     EX_CHAP_MAX_ALGS);
			if (lvl < 0)
				bad = "--chap-algorithms";
			else
				o->nchap_algs = lvl;
			break;
		case OPT_BENCH:
			o->bench = true;
			break;
		case 'b':
			if (parse_u32(optarg, 512, 16u << 20, &o->bs))
				bad = "--bs";
			break;
		case 'd':
			if (parse_u32(optarg, 1, 1024, &o->qd))
				bad = "--qd";
			break;
		case OPT_READ_PCT:
			if (parse_size(optarg, &v) || v > 100)
				bad = "--read-pct";
			else
				o->read_pct = (int)v;
			break;
		case OPT_DURATION: {
			char *end;
			double d = strtod(optarg, &end);

			if (*end || !(d > 0) || d > 86400)
				bad = "--duration";
			else
				o->duration = d;
			break;
		}
		case OPT_SESSIONS:
			if (parse_size(optarg, &v) || v < 1 || v > 64)
				bad = "--sessions";
			else
				o->sessions = (int)v;
			break;
		case OPT_SEQ:
			o->seq = true;
			break;
		case OPT_SPAN:
			if (parse_size(optarg, &o->span) || !o->span)
				bad = "--span";
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_NOOP_INT:
			if (parse_size(optarg, &v) || v > 3600)
				bad = "--noop-out-interval";
			else
				o->noop_interval_s = (int)v;
			break;
		case OPT_NOOP_TMO:
			if (parse_size(optarg, &v) || v < 1 || v > 3600)
				bad = "--noop-out-timeout";
			else
				o->noop_timeout_s = (int)v;
			break;
		case OPT_REPL_TMO:
			if (parse_size(optarg, &v) || v > 86400)
				bad = "--replacement-timeout";
			else
				o->replacement_timeout_s = (int)v;
			break;
		default:
			return -EINVAL;
		}
		if (bad) {
			fprintf(stderr, "%s: bad value '%s' for %s\n", argv[0],
				optarg, bad);
			return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "%s: expected exactly one URL\n", argv[0]);
		return -EINVAL;
	}
	if (ex_url_parse(argv[optind], &o->portal)) {
		fprintf(stderr,
			"%s: bad URL '%s' (want "
			"iscsi://host[:port][/iqn[/lun]])\n",
			argv[0], argv[optind]);
		return -EINVAL;
	}
	if (o->no_discovery && !o->portal.target[0]) {
		fprintf(stderr,
			"%s: --no-discovery needs a target in the URL\n",
			argv[0]);
		return -EINVAL;
	}
	return 0;
}
