/* SPDX-License-Identifier: BSD-2-Clause */
/* Command line and portal URL parsing of idm-initiator. */
#include "initiator.h"

#include "config.h"
#include "ex_chap.h"
#include "ex_log.h"
#include "ex_opts.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h> /* optind */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keys of idm-initiator's own long-only options (ex_opts.h) */
enum {
	OPT_NO_DISC = EX_KEY_PROGRAM,
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
	OPT_ISID,
};

/* Every option, in --help order. */
static const struct ex_opt initiator_opts[] = {
	EX_OPT_TEXT("\n"
		    "An iSCSI initiator on libidm: discovers targets (SendTargets), logs in,\n"
		    "lists LUNs with INQUIRY and READ CAPACITY(16), and optionally writes and\n"
		    "reads back a verified pattern (--verify) or runs a benchmark (--bench).\n"
		    "\n"
		    "URL (libiscsi style):\n"
		    "  iscsi://HOST[:PORT][/TARGET-IQN[/LUN]]   TCP provider\n"
		    "  iser://HOST[:PORT][/TARGET-IQN[/LUN]]    iSER provider\n"
		    "  SCHEME://...                             the provider declaring SCHEME\n"
		    "  Without a target the first one SendTargets reports is used; without a\n"
		    "  LUN the first disk REPORT LUNS returns. HOST may be [IPv6].\n"
		    "\n"
		    "General:\n"),
	{ "provider", 'p', required_argument, "NAME",
	  "tcp, iser, another provider or auto (default:\n"
	  "from the URL scheme)" },
	{ "initiator-name", 'n', required_argument, "IQN",
	  "(default iqn.2026-11.org.libidm:initiator)" },
	{ "isid", OPT_ISID, required_argument, "HEX",
	  "ISID of the first session, 12 hex digits;\n"
	  "session i adds i to its last byte (default:\n"
	  "random): a second run with the same one\n"
	  "reinstates the first's sessions" },
	{ "timeout", 't', required_argument, "SEC",
	  "login and per-command timeout (default 10)" },
	{ "noop-out-interval", OPT_NOOP_INT, required_argument, "SEC",
	  "ping the target (NOP-Out) after SEC idle\n"
	  "(default 5; 0: never)" },
	/* its text lined up with --noop-out-interval's */
	{ "noop-out-timeout", OPT_NOOP_TMO, required_argument, "SEC",
	  " no answer within SEC: dead peer (default 5)" },
	{ "replacement-timeout", OPT_REPL_TMO, required_argument, "SEC",
	  "after a lost connection, reconnect and\n"
	  "retry for up to SEC (default 120; 0: fail at once)" },
	EX_OPT_VERBOSE("more logging on stderr (twice: debug)"),
	EX_OPT_LOG_LEVEL("error, warn, info or debug; default IDM_LOG_LEVEL, else warn"),
	EX_OPT_QUIET("do not print targets, LUNs, INQUIRY, capacity"),
	{ "no-discovery", OPT_NO_DISC, no_argument, NULL,
	  "skip the discovery session (needs a target)" },
	EX_OPT_VERSION,
	EX_OPT_CREDENTIALS("CHAP secrets from FILE (mode 0600): lines\n"
			   "chap = USER:SECRET (what we give), mutual-chap =\n"
			   "USER:SECRET (what the target must answer with),\n"
			   "discovery-chap = USER:SECRET (discovery only)"),
	EX_OPT_CHAP("chap on the command line, where every local user\n"
		    "can read it: for tests only (warns)"),
	EX_OPT_CHAP_ALGS("CHAP_A offered, in order (default\n"
			 "sha3-256,sha256,sha1,md5)"),
	EX_OPT_HELP,
	EX_OPT_TEXT("\n"
		    "Keys that change the data path (default: let the target choose):\n"),
	{ "immediate-data", OPT_IMM, required_argument, "yes|no", "" },
	{ "initial-r2t", OPT_R2T, required_argument, "yes|no", "" },
	{ "first-burst", OPT_FBL, required_argument, "N", "FirstBurstLength (bytes)" },
	{ "max-burst", OPT_MBL, required_argument, "N", "MaxBurstLength (bytes)" },
	{ "max-recv-dsl", OPT_MRDSL, required_argument, "N",
	  "our MaxRecvDataSegmentLength (default 256k);\n"
	  "on iSER both *RecvDataSegmentLength offers" },
	{ "max-outstanding-r2t", OPT_MAXR2T, required_argument, "N", "" },
	{ "header-digest", OPT_HDIG, required_argument, "crc32c|none", "" },
	{ "data-digest", OPT_DDIG, required_argument, "crc32c|none", "" },
	EX_OPT_TEXT("iSER only (RFC 7145 section 6):\n"),
	{ "initiator-recv-dsl", OPT_IRDSL, required_argument, "N",
	  "InitiatorRecvDataSegmentLength (default 256k)" },
	{ "target-recv-dsl", OPT_TRDSL, required_argument, "N",
	  "TargetRecvDataSegmentLength (default 8k)" },
	{ "tagged-buffer-solicited-only", OPT_TAGGED, required_argument, "yes|no",
	  "\ndeclare TaggedBufferForSolicitedDataOnly" },
	{ "iser-hello", OPT_HELLO, required_argument, "yes|no",
	  "declare iSERHelloRequired" },
	EX_OPT_TEXT("\nVerification:\n"),
	{ "verify", OPT_VERIFY, required_argument, "SIZE",
	  "write SIZE bytes of a seeded random pattern\n"
	  "from LBA 0, read them back and compare" },
	{ "verify-io", OPT_VERIFY_IO, required_argument, "SIZE[,SIZE...]",
	  "\nI/O size of the verify pass (default 256k);\n"
	  "a list is used in turn, I/O after I/O" },
	{ "seed", OPT_SEED, required_argument, "N", "pattern seed (default: from the clock)" },
	{ "cdb16", OPT_CDB16, no_argument, NULL,
	  "use READ/WRITE(16) (default: 10 when it fits)" },
	EX_OPT_TEXT("\nBenchmark:\n"),
	{ "bench", OPT_BENCH, no_argument, NULL, "run the benchmark after the checks above" },
	{ "bs", 'b', required_argument, "SIZE", "bytes per I/O (default 4k)" },
	{ "qd", 'd', required_argument, "N", "commands in flight per session (default 16)" },
	{ "read-pct", OPT_READ_PCT, required_argument, "PCT",
	  "percentage of reads (default 100; alias\n"
	  "--rw-mix)" },
	{ "rw-mix", OPT_READ_PCT, required_argument, NULL, NULL },
	{ "duration", OPT_DURATION, required_argument, "SEC", "run time (default 5)" },
	{ "sessions", OPT_SESSIONS, required_argument, "N", "parallel sessions (default 1)" },
	{ "seq", OPT_SEQ, no_argument, NULL, "sequential LBAs (default random)" },
	{ "span", OPT_SPAN, required_argument, "SIZE", "bytes of the LUN to touch (default all)" },
	{ "json", OPT_JSON, no_argument, NULL, "print the results as JSON on stdout" },
	EX_OPT_TEXT("\n"
		    "SIZE and N accept k, m, g suffixes (powers of 1024).\n"
		    "Exit status: 0 success, 1 failure (data mismatch included), 2 usage.\n"),
	EX_OPT_END,
};

void ini_usage(FILE *f, const char *prog)
{
	fprintf(f, "Usage: %s [OPTIONS] URL\n", prog);
	ex_opts_usage(f, initiator_opts);
}

static int parse_size(const char *s, uint64_t *out)
{
	static const char suffixes[] = "kmgt"; /* powers of 1024 */
	const char *suffix;
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
	suffix = *end ? strchr(suffixes, tolower((unsigned char)*end)) : NULL;
	if (suffix) {
		v <<= 10 * (suffix - suffixes + 1);
		end++;
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

/* The defaults, before the command line changes them. */
static void set_defaults(struct ini_opts *o, const char *prog)
{
	memset(o, 0, sizeof(*o));
	o->initiator_name = "iqn.2026-11.org.libidm:initiator";
	/* IDM_LOG_LEVEL first; -v and --log-level change it */
	o->log_level = ex_log_env_level(prog, IDM_LOG_WARN);
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
}

/* How the value of an option that sets one field is read. */
enum field_kind {
	FIELD_FLAG,   /* no argument: true */
	FIELD_U32,    /* a SIZE in [lo, hi] into a uint32_t */
	FIELD_INT,    /* a SIZE in [lo, hi] into an int */
	FIELD_YESNO,  /* yes/no (1/0, on/off) into an enum ini_tri */
	FIELD_DIGEST, /* crc32c/none into an enum ini_tri */
};

/* The options that set one field of struct ini_opts. */
static const struct field_option {
	int key;
	enum field_kind kind;
	size_t off;
	uint32_t lo, hi;
} field_options[] = {
	{ 't', FIELD_INT, offsetof(struct ini_opts, timeout_s), 1, 3600 },
	{ 'q', FIELD_FLAG, offsetof(struct ini_opts, quiet), 0, 0 },
	{ OPT_NO_DISC, FIELD_FLAG, offsetof(struct ini_opts, no_discovery), 0, 0 },
	{ OPT_IMM, FIELD_YESNO, offsetof(struct ini_opts, immediate_data), 0, 0 },
	{ OPT_R2T, FIELD_YESNO, offsetof(struct ini_opts, initial_r2t), 0, 0 },
	/* ranges: RFC 7143 section 13 */
	{ OPT_FBL, FIELD_U32, offsetof(struct ini_opts, first_burst), 512, 16777215 },
	{ OPT_MBL, FIELD_U32, offsetof(struct ini_opts, max_burst), 512, 16777215 },
	{ OPT_MRDSL, FIELD_U32, offsetof(struct ini_opts, max_recv_dsl), 512, 16777215 },
	{ OPT_IRDSL, FIELD_U32, offsetof(struct ini_opts, initiator_rdsl), 512, 16777215 },
	{ OPT_TRDSL, FIELD_U32, offsetof(struct ini_opts, target_rdsl), 512, 16777215 },
	{ OPT_TAGGED, FIELD_YESNO, offsetof(struct ini_opts, tagged_solicited), 0, 0 },
	{ OPT_HELLO, FIELD_YESNO, offsetof(struct ini_opts, iser_hello), 0, 0 },
	{ OPT_MAXR2T, FIELD_U32, offsetof(struct ini_opts, max_outstanding_r2t), 1, 65535 },
	{ OPT_HDIG, FIELD_DIGEST, offsetof(struct ini_opts, header_digest), 0, 0 },
	{ OPT_DDIG, FIELD_DIGEST, offsetof(struct ini_opts, data_digest), 0, 0 },
	{ OPT_CDB16, FIELD_FLAG, offsetof(struct ini_opts, use16), 0, 0 },
	{ OPT_BENCH, FIELD_FLAG, offsetof(struct ini_opts, bench), 0, 0 },
	{ 'b', FIELD_U32, offsetof(struct ini_opts, bs), 512, 16u << 20 },
	{ 'd', FIELD_U32, offsetof(struct ini_opts, qd), 1, 1024 },
	{ OPT_READ_PCT, FIELD_INT, offsetof(struct ini_opts, read_pct), 0, 100 },
	{ OPT_SESSIONS, FIELD_INT, offsetof(struct ini_opts, sessions), 1, 64 },
	{ OPT_SEQ, FIELD_FLAG, offsetof(struct ini_opts, seq), 0, 0 },
	{ OPT_JSON, FIELD_FLAG, offsetof(struct ini_opts, json), 0, 0 },
	{ OPT_NOOP_INT, FIELD_INT, offsetof(struct ini_opts, noop_interval_s), 0, 3600 },
	{ OPT_NOOP_TMO, FIELD_INT, offsetof(struct ini_opts, noop_timeout_s), 1, 3600 },
	{ OPT_REPL_TMO, FIELD_INT, offsetof(struct ini_opts, replacement_timeout_s), 0, 86400 },
};

static const struct field_option *field_option_of(int key)
{
	for (size_t i = 0; i < sizeof(field_options) / sizeof(field_options[0]); i++)
		if (field_options[i].key == key)
			return &field_options[i];
	return NULL;
}

/* 0, or -EINVAL for a value out of the field's kind or range (the field
 * keeps its value). */
static int set_field(const struct field_option *f, const char *arg, struct ini_opts *o)
{
	char *field = (char *)o + f->off;
	uint64_t v;

	switch (f->kind) {
	case FIELD_FLAG:
		*(bool *)field = true;
		return 0;
	case FIELD_U32:
		return parse_u32(arg, f->lo, f->hi, (uint32_t *)field);
	case FIELD_INT:
		if (parse_size(arg, &v) || v < f->lo || v > f->hi)
			return -EINVAL;
		*(int *)field = (int)v;
		return 0;
	case FIELD_YESNO:
		return parse_yesno(arg, (int *)field);
	case FIELD_DIGEST:
		return parse_digest(arg, (int *)field);
	}
	return -EINVAL;
}

/* A provider's name as libidm spells them (1-32 of [a-z0-9_]) or "auto";
 * whether one of that name is loaded is libidm's to say at connect time,
 * so that a provider added to the search path can be named too. */
static int set_provider(const char *arg, struct ini_opts *o)
{
	size_t n = strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789_");

	o->provider = arg;
	return n == 0 || n > 32 || arg[n] ? -EINVAL : 0;
}

static int set_log_level(const char *arg, struct ini_opts *o)
{
	int lvl = parse_level(arg);

	if (lvl < 0)
		return -EINVAL;
	o->log_level = lvl;
	return 0;
}

static int set_chap(char *arg, struct ini_opts *o)
{
	if (split_cred(arg, &o->chap_user, &o->chap_secret))
		return -EINVAL;
	chap_on_cmdline = true;
	return 0;
}

static int set_chap_algs(const char *arg, struct ini_opts *o)
{
	int n = ex_chap_alg_list_parse(arg, o->chap_algs, EX_CHAP_MAX_ALGS);

	if (n < 0)
		return -EINVAL;
	o->nchap_algs = n;
	return 0;
}

static int set_duration(const char *arg, struct ini_opts *o)
{
	char *end;
	double d = strtod(arg, &end);

	if (*end || !(d > 0) || d > 86400)
		return -EINVAL;
	o->duration = d;
	return 0;
}

/* --isid: 12 hex digits, an optional 0x before them */
static int set_isid(const char *arg, struct ini_opts *o)
{
	if (!strncmp(arg, "0x", 2) || !strncmp(arg, "0X", 2))
		arg += 2;
	if (strlen(arg) != 2 * sizeof(o->isid) ||
	    strspn(arg, "0123456789abcdefABCDEF") != strlen(arg))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(o->isid); i++) {
		char byte[3] = { arg[2 * i], arg[2 * i + 1], '\0' };

		o->isid[i] = (uint8_t)strtoul(byte, NULL, 16);
	}
	o->isid_set = true;
	return 0;
}

/* The options that do more than set one field: 0, or -EINVAL. */
static int set_other(int key, char *arg, struct ini_opts *o)
{
	switch (key) {
	case 'p': return set_provider(arg, o);
	case 'n':
		o->initiator_name = arg;
		return strlen(arg) >= INI_MAX_NAME ? -EINVAL : 0;
	case 'v':
		if (o->log_level < IDM_LOG_DEBUG)
			o->log_level++;
		return 0;
	case EX_KEY_LOG_LEVEL: return set_log_level(arg, o);
	case OPT_VERIFY:
		return parse_size(arg, &o->verify_size) || !o->verify_size ? -EINVAL : 0;
	case OPT_VERIFY_IO: return parse_io_list(arg, o);
	case OPT_SEED: return parse_size(arg, &o->seed);
	case OPT_ISID: return set_isid(arg, o);
	case EX_KEY_CREDENTIALS:
		o->credentials = arg;
		return 0;
	case EX_KEY_CHAP: return set_chap(arg, o);
	case EX_KEY_CHAP_ALGS: return set_chap_algs(arg, o);
	case OPT_DURATION: return set_duration(arg, o);
	case OPT_SPAN: return parse_size(arg, &o->span) || !o->span ? -EINVAL : 0;
	}
	return -EINVAL;
}

/* What the command line's options are parsed into (ex_opts_parse) */
struct parse_ctx {
	struct ini_opts *o;
	const char *prog;
};

static int set_option(const struct ex_opt *opt, char *arg, void *arg_ctx)
{
	struct parse_ctx *ctx = arg_ctx;
	const struct field_option *f = field_option_of(opt->key);
	int r = f ? set_field(f, arg, ctx->o) : set_other(opt->key, arg, ctx->o);

	if (r < 0) {
		fprintf(stderr, "%s: bad value '%s' for --%s\n", ctx->prog, arg, opt->name);
		return -1;
	}
	return 0;
}

/* The one operand: the portal URL. 0, or -EINVAL after a message. */
static int parse_url(struct ini_opts *o, int argc, char **argv)
{
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

/* Returns 0, 1 for --help, 2 for --version (caller exits 0), or -EINVAL
 * (usage error). */
int ini_opts_parse(struct ini_opts *o, int argc, char **argv)
{
	struct parse_ctx ctx = { o, argv[0] };

	set_defaults(o, argv[0]);
	switch (ex_opts_parse(initiator_opts, argc, argv, set_option, &ctx)) {
	case EX_OPTS_HELP:
		return 1;
	case EX_OPTS_VERSION:
		return 2;
	case EX_OPTS_UNKNOWN:
	case EX_OPTS_REFUSED:
		return -EINVAL;
	case EX_OPTS_DONE:
		break;
	}
	return parse_url(o, argc, argv);
}
