/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm-target: command line, LUN setup, portal and the event loop.
 */
#include "target.h"
#include "access.h"
#include "activation.h"
#include "budget.h"
#include "config.h"
#include "credentials.h"
#include "authlimit.h"
#include "ex_chap.h"
#include "ex_keys.h"
#include "ex_log.h"
#include "ex_opts.h"
#include "luns.h"
#include "notify.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

struct target g_tgt;

static volatile sig_atomic_t stop, hup, usr1;
/* --threads > 1: the loops' view of stop, and who prints stats next */
static int stop_all, loop_failed;
static int *usr1_turn;
/* loop 0's context, for the signal handler to wake it (set while the
 * context lives; the handler runs on loop 0's thread, the only one not
 * blocking the signals, which clears it before destroying the context) */
static idm_ctx *sig_wake_ctx;

static void on_signal(int sig)
{
	idm_ctx *ctx;

	if (sig == SIGHUP)
		hup = 1;
	else if (sig == SIGUSR1)
		usr1 = 1;
	else
		stop = 1;
	/* async-signal-safe: loop 0 may be asleep with no timeout */
	ctx = __atomic_load_n(&sig_wake_ctx, __ATOMIC_ACQUIRE);
	if (ctx)
		idm_ctx_wakeup(ctx);
}

/* Loops 1 .. N-1 look again at what loop 0 changed (stop_all, the stats
 * turn, a reload's ACL and LUNs). */
static void wake_other_loops(void)
{
	for (int i = 1; g_loops && i < g_nloops; i++)
		if (g_loops[i].ctx)
			idm_ctx_wakeup(g_loops[i].ctx);
}

/* The config file's LUNs are opt.luns[cfg_at, cfg_at + cfg_n): a SIGHUP
 * replaces them and keeps the command line's around them, in order, so
 * that auto-numbered LUNs keep their numbers. */
static int cfg_at = -1, cfg_n;

#define MAX_PORTALS 8
/* every portal on every loop, and its iSER listener on loop 0 */
#define MAX_LISTENERS (MAX_PORTALS * (64 + 1))

/* Keys of the target's own long-only options (ex_opts.h) */
enum {
	OPT_PORT_FILE = EX_KEY_PROGRAM, OPT_LOG_TARGET, OPT_LOGIN_TIMEOUT,
	OPT_MAX_CONNS, OPT_MAX_LOGINS, OPT_MAX_LOGINS_PER_ADDR, OPT_THREADS,
	OPT_ALLOW_ALL, OPT_ACL, OPT_MAX_AUTH_FAILURES, OPT_SHARED_RECV,
	OPT_RBD_CONF, OPT_RBD_USER, OPT_RBD_KEYRING, OPT_RBD_TIMEOUT,
};

/* Every option, in --help order; a config file uses the same names. */
static const struct ex_opt target_opts[] = {
	EX_OPT_TEXT("An example iSCSI target on libidm, serving LUNs backed by RAM, files\n"
		    "or Ceph RBD images.\n"
		    "\n"),
	{ "config", 'c', required_argument, "FILE",
	  "read settings from FILE (\"name = value\" lines,\n"
	  "names as the long options below); options\n"
	  "after -c override it, lun/portal/key add to it" },
	{ "portal", 'p', required_argument, "HOST:PORT",
	  "listen address (default 0.0.0.0:3260; port 0\n"
	  "picks a free port; [v6addr]:port for IPv6);\n"
	  "may be given several times" },
	{ "target-name", 't', required_argument, "IQN",
	  "target name (default iqn.2026-11.org.libidm:target)" },
	{ "alias", 'a', required_argument, "NAME", "TargetAlias (informational)" },
	{ "lun", 'l', required_argument, "[N=]SPEC[,ro]",
	  "add a LUN: ram:SIZE (e.g. ram:64M), file:PATH\n"
	  "(a regular file or block device) or\n"
	  "rbd:POOL/IMAGE (a Ceph RBD image); ,ro serves it\n"
	  "write protected; numbered 1, 2, ... unless N=" },
	{ "block-size", 'b', required_argument, "N",
	  "logical block size: 512 (default) or 4096" },
	{ "rbd-conf", OPT_RBD_CONF, required_argument, "FILE",
	  "Ceph configuration of rbd: LUNs (default:\n"
	  "librados' search, /etc/ceph/ceph.conf first)" },
	{ "rbd-user", OPT_RBD_USER, required_argument, "ID",
	  "Ceph user of rbd: LUNs, without \"client.\"\n"
	  "(default admin)" },
	{ "rbd-keyring", OPT_RBD_KEYRING, required_argument, "FILE",
	  "keyring file with that user's key (default: the\n"
	  "configuration's); no key on the command line" },
	{ "rbd-timeout", OPT_RBD_TIMEOUT, required_argument, "SEC",
	  "fail RBD calls the cluster has not answered\n"
	  "within SEC seconds with MEDIUM ERROR (default\n"
	  "0: wait; connecting gives up after SEC or 30)" },
	{ "provider", 'P', required_argument, "LIST",
	  "transport providers: tcp, iser or tcp,iser\n"
	  "(default tcp)" },
	{ "key", 'k', required_argument, "NAME=VALUE",
	  "what the target answers for a login key, e.g.\n"
	  "ImmediateData=No, InitialR2T=Yes,\n"
	  "MaxBurstLength=65536, HeaderDigest=CRC32C,None\n"
	  "(defaults: ImmediateData=Yes InitialR2T=No\n"
	  "MaxBurstLength=1048576 FirstBurstLength=262144\n"
	  "MaxOutstandingR2T=16, digests CRC32C,None);\n"
	  "checked against the RFC 7143/7145 ranges" },
	EX_OPT_CREDENTIALS("read secrets from FILE (mode 0600: group and\n"
			   "others must have no access), e.g.\n"
			   "\"chap = USER:SECRET\": CHAP required from\n"
			   "every initiator, from any address; also\n"
			   "initiator-chap = IQN USER:SECRET, mutual-chap\n"
			   "and discovery-chap = USER:SECRET"),
	EX_OPT_CHAP("the same on the command line, where every local\n"
		    "user can read it: for tests only (warns)"),
	EX_OPT_CHAP_ALGS("CHAP algorithms accepted, in the target's\n"
			 "order of preference, from sha3-256, sha256,\n"
			 "sha1, md5 (default sha3-256,sha256,sha1,md5;\n"
			 "leave md5 out to refuse it)"),
	{ "max-auth-failures", OPT_MAX_AUTH_FAILURES, required_argument, "N",
	  "after N failed authentications from one\n"
	  "address within 60 s, refuse its logins for\n"
	  "60 s (default 10; 0: no limit)" },
	{ "allow-all", OPT_ALLOW_ALL, no_argument, NULL,
	  "serve initiators from any address without CHAP\n"
	  "(warns); by default, without CHAP, only\n"
	  "initiators on loopback may log in" },
	{ "acl", OPT_ACL, required_argument, "'NAME ADDRESS [luns=LIST]'",
	  "\ninitiator ACL rule (repeatable, max 256): NAME\n"
	  "an initiator name or *, ADDRESS an address or\n"
	  "prefix (10.9.0.0/24, fd00::/64) or *, LIST LUN\n"
	  "numbers (0,2,4-7) it sees. With rules, only\n"
	  "logins some rule matches are served, loopback\n"
	  "included; not with --allow-all" },
	{ "login-timeout", OPT_LOGIN_TIMEOUT, required_argument, "SEC",
	  "close a connection not in full feature phase\n"
	  "SEC seconds after it connected (default 15)" },
	{ "max-connections", OPT_MAX_CONNS, required_argument, "N",
	  "connections at once, in login or not; more are\n"
	  "refused (default 1024)" },
	{ "max-logins", OPT_MAX_LOGINS, required_argument, "N",
	  "connections in login at once (default 256)" },
	{ "max-logins-per-address", OPT_MAX_LOGINS_PER_ADDR, required_argument, "N",
	  "\nconnections in login at once from one\n"
	  "initiator address (default 16)" },
	{ "port-file", OPT_PORT_FILE, required_argument, "FILE",
	  "write the listening TCP port to FILE once ready" },
	{ "threads", OPT_THREADS, required_argument, "N",
	  "N event loops, one thread and libidm context\n"
	  "each, sharing every portal (default 1; iSER\n"
	  "listens on loop 0 and places its sessions on\n"
	  "the loops; a session's connections stay on one)" },
	{ "shared-recv", OPT_SHARED_RECV, required_argument, "yes|no",
	  "\niSER connections share their receive buffers\n"
	  "(one shared receive queue per device) instead\n"
	  "of each pinning its own: far less memory per\n"
	  "session; TargetRecvDataSegmentLength is then\n"
	  "at most 8192 (default no)" },
	EX_OPT_VERBOSE("more log output (debug: every failed command)"),
	EX_OPT_QUIET("less log output (-q warnings, -qq errors only)"),
	EX_OPT_LOG_LEVEL("error, warn, info or debug (or 0-3); the\n"
			 "default is IDM_LOG_LEVEL, else info"),
	{ "log-target", OPT_LOG_TARGET, required_argument, "WHERE",
	  "auto (default), stderr, journal or syslog" },
	EX_OPT_VERSION,
	EX_OPT_HELP,
	EX_OPT_TEXT("\n"
		    "Started by systemd with the credential idm-target.credentials\n"
		    "(LoadCredential=), idm-target reads it unless --credentials is given.\n"
		    "\n"
		    "Socket activation: started by systemd (or systemd-socket-activate) with\n"
		    "listening sockets (LISTEN_FDS), idm-target serves those instead of its\n"
		    "portals; with a connection (Accept=yes) it serves that one and exits\n"
		    "when it ends.\n"
		    "\n"
		    "Stop with SIGINT or SIGTERM. SIGUSR1 prints every connection's counters\n"
		    "on stderr. SIGHUP re-reads the lun and acl lines of the config file\n"
		    "(all or nothing); sessions the new rules refuse are asked to log out.\n"
		    "Exit status: 0 stopped by a signal, 1 run-time failure, 2 bad\n"
		    "command line, config file, key or LUN.\n"
		    "Example:\n"),
	EX_OPT_END,
};

static void usage(FILE *f, const char *prog)
{
	fprintf(f, "Usage: %s [options]\n", prog);
	ex_opts_usage(f, target_opts);
	fprintf(f, "  %s --portal 127.0.0.1:3260 --target-name iqn.2026-11.org.libidm:t1 \\\n"
		"     --lun ram:64M --lun file:/var/tmp/disk.img,ro -v\n", prog);
}

/* Everything the command line and the config file set. */
static struct {
	char *portals[MAX_PORTALS];
	int nportals;
	char *luns[TGT_MAX_LUNS];
	int nluns;
	const char *providers, *port_file, *config, *credentials;
	uint32_t bs;
	int level;
	int log_target;
	unsigned threads;
	/* initiator ACL rules; the config file's are acls[acl_at, acl_at +
	 * acl_n), replaced by a SIGHUP as the LUNs are */
	char *acls[ACCESS_MAX_RULES];
	int nacls, acl_at, acl_n;
} opt;

/* Check an ACL rule: 0, or -1 after a message naming where it is. */
static int check_acl(const char *rule, const char *where)
{
	struct access_acl *a = access_acl_new();
	char why[512];
	int r;

	if (!a) {
		ex_err("%s: out of memory", where);
		return -1;
	}
	r = access_acl_add(a, rule, why, sizeof(why));
	access_acl_free(a);
	if (r < 0) {
		ex_err("%s: %s", where, why);
		return -1;
	}
	return 0;
}

/* Build the rule set of `rules` (each checked already); NULL, after a
 * message, on failure. */
static struct access_acl *build_acl(char *const *rules, int n)
{
	struct access_acl *a = access_acl_new();
	char why[512];

	for (int i = 0; a && i < n; i++)
		if (access_acl_add(a, rules[i], why, sizeof(why)) < 0) {
			ex_err("acl rule '%.128s': %s", rules[i], why);
			access_acl_free(a);
			return NULL;
		}
	if (!a)
		ex_err("no memory for the acl rules");
	return a;
}

/* The long name of option `key`, for messages */
static const char *option_name(int key, const char *otherwise)
{
	const struct ex_opt *p = ex_opts_by_key(target_opts, key);

	return p ? p->name : otherwise;
}

/* "option --name" or "FILE:LINE" for messages */
static const char *origin(const char *where, int key, char *buf, size_t n)
{
	const struct ex_opt *p = ex_opts_by_key(target_opts, key);

	if (where)
		return where;
	if (!p)
		return "option";
	snprintf(buf, n, "option --%s", p->name);
	return buf;
}

/* A key this target refuses although RFC 7143 allows it: 0, or -1 after
 * a message. */
static int check_key_supported(const char *kv, const char *where)
{
	if (!strncmp(kv, "ErrorRecoveryLevel=", 19) && strtoull(kv + 19, NULL, 0) != 0) {
		ex_err("%s: %s: this target implements ErrorRecoveryLevel 0 only", where, kv);
		return -1;
	}
	if (!strncmp(kv, "MaxConnections=", 15) && strtoull(kv + 15, NULL, 0) != 1) {
		ex_err("%s: %s: this target has one connection per session "
		       "(MaxConnections=1)", where, kv);
		return -1;
	}
	if (!strncmp(kv, "AuthMethod=", 11)) {
		ex_err("%s: AuthMethod follows --chap (CHAP required) or its absence (None)",
		       where);
		return -1;
	}
	return 0;
}

static int add_key(char *kv, const char *where)
{
	const int max = (int)(sizeof(g_tgt.key_overrides) / sizeof(g_tgt.key_overrides[0]));
	size_t nl = (size_t)(strchr(kv, '=') - kv);
	char why[256];

	if (ex_key_check_setting(kv, why, sizeof(why)) < 0) {
		ex_err("%s: %s", where, why);
		return -1;
	}
	/* in range for the RFC, but beyond what this target implements */
	if (check_key_supported(kv, where) < 0)
		return -1;
	/* a later setting of the same key (command line after -c) wins */
	for (int i = 0; i < g_tgt.nkey_overrides; i++)
		if (!strncmp(g_tgt.key_overrides[i], kv, nl + 1)) {
			g_tgt.key_overrides[i] = kv;
			return 0;
		}
	if (g_tgt.nkey_overrides == max) {
		ex_err("%s: too many keys (max %d)", where, max);
		return -1;
	}
	g_tgt.key_overrides[g_tgt.nkey_overrides++] = kv;
	return 0;
}

/* A whole decimal number in [lo, hi] into *out; 0, or -1 after an
 * error message naming the setting. */
static int set_uint(const char *w, int key, const char *arg, unsigned lo, unsigned hi,
		    unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (!*arg || *end || *arg == '-' || errno || v < lo || v > hi) {
		ex_err("%s: %s='%s': must be a number from %u to %u", w,
		       option_name(key, "value"), arg, lo, hi);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

/* A flag: set by its option (arg NULL), or "yes" or "no" in a file. */
static int set_flag(const char *w, int key, const char *arg, bool *out)
{
	if (!arg || !strcmp(arg, "yes")) {
		*out = true;
		return 0;
	}
	if (!strcmp(arg, "no")) {
		*out = false;
		return 0;
	}
	ex_err("%s: %s = '%s': use yes or no", w, option_name(key, "flag"), arg);
	return -1;
}

/* The CHAP secret in argv or a config file can be read by others: say
 * where it belongs (credentials.h). */
static void warn_exposed_secret(const char *where)
{
	if (!where)
		ex_warn("option --chap: every local user can read the secret "
			"(ps, /proc/PID/cmdline); outside tests keep it in a "
			"credentials file (--credentials FILE, mode 0600)");
	else
		ex_warn("%s: chap in the config file: keep the secret in a "
			"credentials file (credentials = FILE, mode 0600)", where);
}

static int split_portal(const char *arg, char *host, size_t hn, char *port, size_t pn);

static int add_portal(char *arg, const char *w)
{
	char host[256], port[16], *end;
	unsigned long pn;

	if (opt.nportals == MAX_PORTALS) {
		ex_err("%s: too many portals (max %d)", w, MAX_PORTALS);
		return -1;
	}
	if (split_portal(arg, host, sizeof(host), port, sizeof(port)) < 0 ||
	    (pn = strtoul(port, &end, 10), *end || end == port || pn > 65535)) {
		ex_err("%s: bad portal '%s': use HOST:PORT, HOST or [IPv6]:PORT", w, arg);
		return -1;
	}
	opt.portals[opt.nportals++] = arg;
	return 0;
}

static int set_target_name(char *arg, const char *w)
{
	if (!*arg || strlen(arg) > 223) {
		ex_err("%s: the target name must be 1 to 223 bytes", w);
		return -1;
	}
	g_tgt.name = arg;
	return 0;
}

static int add_lun(char *arg, const char *w)
{
	if (opt.nluns == TGT_MAX_LUNS) {
		ex_err("%s: too many LUNs (max %d)", w, TGT_MAX_LUNS);
		return -1;
	}
	opt.luns[opt.nluns++] = arg;
	return 0;
}

/* a Ceph user id: its name, never a key */
static int set_rbd_user(char *arg, const char *w)
{
	if (!*arg || strlen(arg) > 100 || strchr(arg, '=') || strchr(arg, ' ')) {
		ex_err("%s: rbd-user '%s': a Ceph user id such as admin or iscsi "
		       "(its key goes in --rbd-keyring)", w, arg);
		return -1;
	}
	if (!strncmp(arg, "client.", 7))
		arg += 7;
	g_lun_rbd.user = arg;
	return 0;
}

static int set_block_size(const char *arg, const char *w)
{
	if (strcmp(arg, "512") && strcmp(arg, "4096")) {
		ex_err("%s: block size '%s': must be 512 or 4096", w, arg);
		return -1;
	}
	opt.bs = (uint32_t)atoi(arg);
	return 0;
}

/* --chap: `where` NULL on the command line, `w` what messages name */
static int set_chap(char *arg, const char *w, const char *where)
{
	if (credentials_set_chap(arg, w) < 0)
		return -1;
	warn_exposed_secret(where);
	return 0;
}

static int set_credentials(char *arg, const char *w)
{
	if (opt.credentials) {
		ex_err("%s: only one credentials file", w);
		return -1;
	}
	opt.credentials = arg;
	return credentials_load(arg);
}

static int add_acl(char *arg, const char *w)
{
	if (opt.nacls == ACCESS_MAX_RULES) {
		ex_err("%s: too many acl rules (max %d)", w, ACCESS_MAX_RULES);
		return -1;
	}
	if (check_acl(arg, w) < 0)
		return -1;
	opt.acls[opt.nacls++] = arg;
	return 0;
}

static int set_chap_algs(const char *arg, const char *w)
{
	int n = ex_chap_alg_list_parse(arg, g_tgt.chap_algs, EX_CHAP_MAX_ALGS);

	if (n < 0) {
		ex_err("%s: chap-algorithms '%s': a list of sha3-256, sha256, "
		       "sha1 and md5, each once", w, arg);
		return -1;
	}
	g_tgt.nchap_algs = n;
	return 0;
}

static int set_log_level(const char *arg, const char *w)
{
	int v = ex_log_parse_level(arg);

	if (v < 0) {
		ex_err("%s: log level '%s': use error, warn, info, debug or 0-3", w, arg);
		return -1;
	}
	opt.level = v;
	return 0;
}

static int set_log_target(const char *arg, const char *w)
{
	int v = ex_log_parse_target(arg);

	if (v < 0) {
		ex_err("%s: log target '%s': use auto, stderr, journal or syslog", w, arg);
		return -1;
	}
	opt.log_target = v;
	return 0;
}

/* The options that set a number in a range: where it goes. */
static const struct uint_setting {
	int key;
	unsigned lo, hi;
	unsigned *field;
} uint_settings[] = {
	{ OPT_MAX_AUTH_FAILURES, 0, 1000000, &g_authlimit_max },
	{ OPT_LOGIN_TIMEOUT, 1, 3600, &g_budget.login_timeout_s },
	{ OPT_MAX_CONNS, 1, 1000000, &g_budget.max_conns },
	{ OPT_MAX_LOGINS, 1, 65536, &g_budget.max_logins },
	{ OPT_MAX_LOGINS_PER_ADDR, 1, 65536, &g_budget.max_logins_per_addr },
	{ OPT_THREADS, 1, 64, &opt.threads },
	{ OPT_RBD_TIMEOUT, 0, 3600, &g_lun_rbd.timeout_s },
};

static const struct uint_setting *uint_setting_of(int key)
{
	for (size_t i = 0; i < sizeof(uint_settings) / sizeof(uint_settings[0]); i++)
		if (uint_settings[i].key == key)
			return &uint_settings[i];
	return NULL;
}

/* Apply one option (but --config) from the command line (where == NULL)
 * or a config file. 0, or -1 after an error message. */
static int set_option(int key, char *arg, const char *where)
{
	const struct uint_setting *u = uint_setting_of(key);
	char wbuf[64];
	const char *w = origin(where, key, wbuf, sizeof(wbuf));

	if (u)
		return set_uint(w, key, arg, u->lo, u->hi, u->field);
	switch (key) {
	case 'p': return add_portal(arg, w);
	case 't': return set_target_name(arg, w);
	case 'a': g_tgt.alias = arg; return 0;
	case 'l': return add_lun(arg, w);
	case 'b': return set_block_size(arg, w);
	case 'P': opt.providers = arg; return 0;
	case 'k': return add_key(arg, w);
	case OPT_PORT_FILE: opt.port_file = arg; return 0;
	case OPT_RBD_CONF: g_lun_rbd.conf = arg; return 0;
	case OPT_RBD_USER: return set_rbd_user(arg, w);
	case OPT_RBD_KEYRING: g_lun_rbd.keyring = arg; return 0;
	case EX_KEY_CHAP: return set_chap(arg, w, where);
	case EX_KEY_CREDENTIALS: return set_credentials(arg, w);
	case EX_KEY_CHAP_ALGS: return set_chap_algs(arg, w);
	case OPT_ALLOW_ALL: return set_flag(w, key, arg, &g_tgt.allow_all);
	case OPT_SHARED_RECV: return set_flag(w, key, arg, &g_tgt.shared_recv);
	case OPT_ACL: return add_acl(arg, w);
	case EX_KEY_LOG_LEVEL: return set_log_level(arg, w);
	case OPT_LOG_TARGET: return set_log_target(arg, w);
	case 'v':
		if (opt.level < IDM_LOG_DEBUG)
			opt.level++;
		return 0;
	case 'q':
		if (opt.level > IDM_LOG_ERROR)
			opt.level--;
		return 0;
	}
	ex_err("%s: not handled", w);
	return -1;
}

/* Whether a config file may set option `p`: one that takes a value (but
 * not another config file), or a flag meant for services ("yes"/"no"). */
static bool config_allows(const struct ex_opt *p)
{
	if (p->has_arg == required_argument)
		return p->key != 'c';
	return p->key == OPT_ALLOW_ALL;
}

/* A config file line: its name is a long option config_allows(). */
static int config_setting(const char *name, char *value, const char *where, void *arg)
{
	const struct ex_opt *p = ex_opts_by_name(target_opts, name);

	(void)arg;
	if (!p) {
		ex_err("%s: unknown setting '%s'", where, name);
		return -1;
	}
	if (!config_allows(p)) {
		ex_err("%s: '%s' is not allowed in a config file", where, name);
		return -1;
	}
	return set_option(p->key, value, where);
}

/* -c FILE: its settings, as if given where -c stands. Files include no
 * others (config_allows), so this is the one place that reads one. */
static int read_config(char *path)
{
	if (opt.config) {
		ex_err("option --config: only one config file");
		return -1;
	}
	opt.config = path;
	cfg_at = opt.nluns;
	opt.acl_at = opt.nacls;
	if (config_load(path, config_setting, NULL) < 0)
		return -1;
	cfg_n = opt.nluns - cfg_at;
	opt.acl_n = opt.nacls - opt.acl_at;
	return 0;
}

/* An option of the command line (ex_opts_parse) */
static int command_line_option(const struct ex_opt *o, char *arg, void *ctx)
{
	(void)ctx;
	if (o->key == 'c')
		return read_config(arg);
	return set_option(o->key, arg, NULL);
}

/* SIGHUP: the lun lines of the config file again; see doc/idm-target.md */
struct reload_specs {
	char *luns[TGT_MAX_LUNS];
	int n;
	uint32_t bs;
	char *acls[ACCESS_MAX_RULES]; /* the file's acl lines */
	int nacls;
	bool allow_all;               /* the file sets allow-all = yes */
};

static int reload_setting(const char *name, char *value, const char *where, void *arg)
{
	struct reload_specs *rs = arg;
	const struct ex_opt *p = ex_opts_by_name(target_opts, name);

	/* A file that would not start the target must not reload it either. */
	if (!p || !config_allows(p)) {
		ex_err("%s: unknown setting '%s'; nothing reloaded", where, name);
		return -1;
	}
	if (!strcmp(name, "lun")) {
		if (rs->n == TGT_MAX_LUNS) {
			ex_err("%s: too many LUNs (max %d)", where, TGT_MAX_LUNS);
			return -1;
		}
		rs->luns[rs->n++] = value;
	} else if (!strcmp(name, "acl")) {
		if (rs->nacls + opt.nacls - opt.acl_n >= ACCESS_MAX_RULES) {
			ex_err("%s: too many acl rules (max %d)", where, ACCESS_MAX_RULES);
			return -1;
		}
		if (check_acl(value, where) < 0)
			return -1;
		rs->acls[rs->nacls++] = value;
	} else if (!strcmp(name, "allow-all")) {
		bool v;

		if (set_flag(where, OPT_ALLOW_ALL, value, &v) < 0)
			return -1;
		rs->allow_all = v;
		if (v != g_tgt.allow_all)
			ex_warn("%s: allow-all changes need a restart; keeping allow-all = %s",
				where, g_tgt.allow_all ? "yes" : "no");
	} else if (!strcmp(name, "block-size") && (uint32_t)atoi(value) != rs->bs) {
		ex_warn("%s: block-size changes need a restart; keeping %u", where, rs->bs);
	}
	return 0;
}

/* The ACL set of a reload: the command line's rules around the file's,
 * as at start-up. NULL after a message if the set is refused. */
static struct access_acl *reload_acl(const struct reload_specs *rs)
{
	char *all[ACCESS_MAX_RULES];
	int n = 0;

	for (int i = 0; i < opt.acl_at; i++)
		all[n++] = opt.acls[i];
	for (int i = 0; i < rs->nacls; i++)
		all[n++] = rs->acls[i];
	for (int i = opt.acl_at + opt.acl_n; i < opt.nacls; i++)
		all[n++] = opt.acls[i];
	if (n && (g_tgt.allow_all || rs->allow_all)) {
		ex_err("reload: acl rules and allow-all exclude each other");
		return NULL;
	}
	return build_acl(all, n);
}

/* The LUNs of a reload: the file's (rs, read) between the command
 * line's, as at start-up. 0, or -1 after a message. */
static int reload_luns(struct reload_specs *rs)
{
	int after = opt.nluns - cfg_at - cfg_n;

	if (g_nloops > 1) {
		ex_warn("SIGHUP: reloading LUNs needs --threads 1; "
			"restart to change them (acl rules reloaded)");
		return 0;
	}
	if (rs->n + after > TGT_MAX_LUNS) {
		ex_err("reload: too many LUNs (max %d)", TGT_MAX_LUNS);
		return -1;
	}
	for (int i = cfg_at + cfg_n; i < opt.nluns; i++)
		rs->luns[rs->n++] = opt.luns[i];
	return luns_reload(rs->luns, rs->n, opt.bs);
}

/* All or nothing: a file with an error changes neither the LUNs nor the
 * ACLs. With several loops the LUNs stay (every loop reads the table
 * unlocked); the ACLs are reloaded (each loop checks its sessions). */
static void reload(void)
{
	struct reload_specs *rs = calloc(1, sizeof(*rs));
	struct access_acl *acl = NULL;
	void *mark;

	if (!opt.config) {
		ex_warn("SIGHUP: no config file (-c) to reload");
		free(rs);
		return;
	}
	if (!rs) {
		ex_err("SIGHUP: out of memory; nothing reloaded");
		return;
	}
	rs->bs = opt.bs;
	notify_send("RELOADING=1");
	ex_info("SIGHUP: reloading the LUNs and acl rules of %s", opt.config);
	/* the command line's LUNs stay; the file's are read again */
	for (int i = 0; i < cfg_at; i++)
		rs->luns[rs->n++] = opt.luns[i];
	mark = config_mark();
	if (config_load(opt.config, reload_setting, rs) < 0 || !(acl = reload_acl(rs))) {
		ex_err("reload failed: LUNs and acl rules unchanged");
	} else if (reload_luns(rs) < 0) {
		ex_err("reload failed: acl rules unchanged too");
		access_acl_free(acl);
	} else {
		ex_info("reload: %d acl rule(s) in force", access_acl_count(acl));
		access_acl_install(acl);
		access_log_policy();
	}
	free(rs);
	/* the LUNs copied their specs: the file's strings can go */
	config_release(mark);
	notify_send("READY=1");
}

static int split_portal(const char *arg, char *host, size_t hn, char *port, size_t pn)
{
	const char *colon;

	if (arg[0] == '[') {
		const char *rb = strchr(arg, ']');
		if (!rb || (rb[1] && rb[1] != ':'))
			return -1;
		snprintf(host, hn, "%.*s", (int)(rb - arg - 1), arg + 1);
		snprintf(port, pn, "%s", rb[1] ? rb + 2 : "3260");
		return 0;
	}
	colon = strrchr(arg, ':');
	if (!colon) {
		snprintf(host, hn, "%s", arg);
		snprintf(port, pn, "3260");
		return 0;
	}
	snprintf(host, hn, "%.*s", (int)(colon - arg), arg);
	snprintf(port, pn, "%s", colon + 1);
	return *port ? 0 : -1;
}

/* Serve the n sockets the service manager passed (activation.h): each
 * listening one as a portal, a connected one (Accept=yes) as a
 * connection, after which the target ends with that connection. */
static int open_activated(int n, idm_portal **portal, int *nportal, bool *single)
{
	struct idm_portal_attr pa = {
		.size = sizeof(pa),
		.providers = "tcp", /* a socket: iSER listens on RDMA CM ids */
		.accept = conn_accept,
	};
	int r;

	if (opt.nportals)
		ex_info("socket activation: serving the %d socket(s) passed, "
			"not the portal settings", n);
	if (strcmp(opt.providers, "tcp"))
		ex_warn("socket activation: the passed sockets are served "
			"over tcp only");
	for (int fd = ACTIVATION_FD_START; fd < ACTIVATION_FD_START + n; fd++) {
		if (!activation_is_listener(fd)) {
			r = activation_adopt(fd);
			if (r < 0) {
				ex_err("socket activation: connection on descriptor "
				       "%d: %s%s%s", fd, idm_strerror(r),
				       *idm_last_error() ? ": " : "", idm_last_error());
				return -1;
			}
			*single = true;
			continue;
		}
		r = idm_portal_create_fd(g_loop->ctx, fd, &pa, &portal[*nportal]);
		if (r < 0) {
			ex_err("socket activation: listening socket %d: %s%s%s", fd,
			       idm_strerror(r), *idm_last_error() ? ": " : "",
			       idm_last_error());
			return -1;
		}
		ex_info("listening on activated socket %d (port %d, tcp), target %s",
			fd, idm_portal_port(portal[*nportal]), g_tgt.name);
		(*nportal)++;
	}
	return 0;
}

/*
 * How long this loop's progress call may sleep. What other threads do
 * for it (a handoff, a signal, a stop, the stats turn, a reload) wakes
 * it with idm_ctx_wakeup(), and what its connections do is an event, so
 * it sleeps until the earliest of its timers: the login timeout of its
 * oldest connection in login, a closing connection's grace, a pending
 * TMF's and a lost-access logout's deadline; none armed, no timeout.
 * Work that is polled, not timed (a connection waiting for its handoff,
 * an ACL to decide again, retired LUNs waiting for their commands, the
 * budget's due reports) keeps the 100 ms tick of old.
 */
#define LOOP_TICK_MS 100

static void earliest(struct timespec *due, bool *armed, const struct timespec *t)
{
	if (!*armed || t->tv_sec < due->tv_sec ||
	    (t->tv_sec == due->tv_sec && t->tv_nsec < due->tv_nsec))
		*due = *t;
	*armed = true;
}

static int loop_wait_ms(void)
{
	struct timespec due = {0, 0}, now;
	bool armed = false;
	long long ms;

	if (g_loop->outbox || luns_retired() || budget_tick_due())
		return LOOP_TICK_MS;
	if (g_loop->lhead)
		earliest(&due, &armed, &g_loop->lhead->login_deadline);
	for (struct tconn *c = g_loop->conns; c; c = c->next) {
		if (c->state != CS_CLOSING)
			continue;
		if (c->handoff)
			return LOOP_TICK_MS;
		earliest(&due, &armed, &c->deadline);
	}
	for (struct session *s = g_loop->sessions; s; s = s->next) {
		if (s->acl_recheck)
			return LOOP_TICK_MS;
		if (s->tmf.active)
			earliest(&due, &armed, &s->tmf.deadline);
		if (s->logout_asked)
			earliest(&due, &armed, &s->logout_deadline);
	}
	if (!armed)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(due.tv_sec - now.tv_sec) * 1000 +
	     (due.tv_nsec - now.tv_nsec + 999999) / 1000000;
	if (ms <= 0)
		return 0;
	return ms > 60000 ? 60000 : (int)ms;
}

/* One pass of housekeeping after a progress call; the same on every
 * loop. */
static void loop_tick(void)
{
	lun_cq_drain(&g_loop->cq);
	loop_run_handoffs();
	conn_reap();
	session_timers();
	luns_reap();
}

/* SIGUSR1 with several loops: each prints its own connections, loop 0
 * first, and passes the turn on, so that the dumps come in loop order
 * and never interleave. */
static void stats_turn(int i)
{
	if (!__atomic_load_n(&usr1_turn[i], __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&usr1_turn[i], 0, __ATOMIC_RELAXED);
	stats_print_all();
	if (i + 1 < g_nloops) {
		__atomic_store_n(&usr1_turn[i + 1], 1, __ATOMIC_RELEASE);
		idm_ctx_wakeup(g_loops[i + 1].ctx);
	}
}

/* Loops 1 .. N-1: their own thread, stopped by loop 0. */
static void *loop_thread(void *arg)
{
	char name[16];

	g_loop = arg;
	/* "idm-loop-N" in top -H, ps -L and /proc/PID/task/TID/comm */
	snprintf(name, sizeof(name), "idm-loop-%d", g_loop->index);
	prctl(PR_SET_NAME, name);
	while (!__atomic_load_n(&stop_all, __ATOMIC_RELAXED)) {
		int r = idm_ctx_progress(g_loop->ctx, loop_wait_ms());

		if (r < 0 && r != -EINTR) {
			ex_err("loop %d: idm_ctx_progress: %s", g_loop->index, idm_strerror(r));
			/* its connections would hang: the whole target stops */
			__atomic_store_n(&loop_failed, 1, __ATOMIC_RELAXED);
			idm_ctx_wakeup(g_loops[0].ctx);
			break;
		}
		stats_turn(g_loop->index);
		loop_tick();
	}
	return NULL;
}

/* Loop 0, on the main thread, where the signals arrive. 0 when stopped by
 * a signal (or the activated connection ended), 1 on failure. */
static int run_loop(bool single)
{
	g_loop = &g_loops[0];
	while (!stop) {
		int r = idm_ctx_progress(g_loop->ctx, loop_wait_ms());

		if ((r < 0 && r != -EINTR) || __atomic_load_n(&loop_failed, __ATOMIC_RELAXED)) {
			if (r < 0 && r != -EINTR)
				ex_err("idm_ctx_progress: %s", idm_strerror(r));
			return 1;
		}
		if (hup) {
			hup = 0;
			reload();
			wake_other_loops();
		}
		if (usr1) {
			usr1 = 0;
			__atomic_store_n(&usr1_turn[0], 1, __ATOMIC_RELAXED);
		}
		stats_turn(0);
		loop_tick();
		if (single && !g_loop->conns) {
			ex_info("the activated connection ended");
			break;
		}
	}
	return 0;
}

/* What main() set up, for serving and for taking down. */
static struct server {
	idm_portal *portal[MAX_LISTENERS];
	int nportal;
	int nact;		 /* sockets passed by the service manager */
	bool single;		 /* serving one activated connection only */
	pthread_t threads[64 + 1];
	int nthreads;		 /* loops 1 .. nthreads run */
} srv;

/* The command line (and the config file it names) into opt and g_tgt.
 * -1 to go on, else the exit status: 0 after --help or --version, 2 on
 * an error. */
static int read_command_line(int argc, char **argv)
{
	g_tgt.name = "iqn.2026-11.org.libidm:target";
	opt.providers = "tcp";
	opt.bs = 512;
	opt.threads = 1;
	opt.level = ex_log_env_level(argv[0], IDM_LOG_INFO);
	opt.log_target = EX_LOG_AUTO;
	/* errors of the command line and config file always show */
	ex_log_init(argv[0], IDM_LOG_WARN);
	switch (ex_opts_parse(target_opts, argc, argv, command_line_option, NULL)) {
	case EX_OPTS_HELP:
		usage(stdout, argv[0]);
		return 0;
	case EX_OPTS_VERSION:
		ex_print_version(argv[0]);
		return 0;
	case EX_OPTS_UNKNOWN:
		fprintf(stderr, "Try '%s --help'.\n", argv[0]);
		return 2;
	case EX_OPTS_REFUSED:
		return 2;
	case EX_OPTS_DONE:
		break;
	}
	if (optind < argc) {
		ex_err("unexpected argument '%s'", argv[optind]);
		fprintf(stderr, "Try '%s --help'.\n", argv[0]);
		return 2;
	}
	return -1;
}

/* RFC 7143 13.14 between the -k settings (ex_params_check_bursts()).
 * 0, or -1 after a message. */
static int check_burst_keys(void)
{
	char why[160];

	if (ex_params_check_bursts((const char *const *)g_tgt.key_overrides,
				   g_tgt.nkey_overrides, why, sizeof(why)) < 0) {
		ex_err("%s", why);
		return -1;
	}
	return 0;
}

/* Under systemd the credential stands for --credentials, read after the
 * other options; an explicit file wins. 0, or -1 after a message. */
static int load_credentials(void)
{
	if (!opt.credentials && credentials_load_systemd() < 0)
		return -1;
	return credentials_check();
}

/* Who may log in by address and name: the ACL rules. 0, or -1 after a
 * message. */
static int install_acl(void)
{
	if (opt.nacls && g_tgt.allow_all) {
		ex_err("acl rules and allow-all exclude each other: allow-all serves "
		       "everyone, the rules name whom to serve; drop one");
		return -1;
	}
	if (opt.nacls) {
		struct access_acl *acl = build_acl(opt.acls, opt.nacls);

		if (!acl)
			return -1;
		access_acl_install(acl);
	}
	return 0;
}

/* Whether --provider names `name` */
static bool serves(const char *name)
{
	size_t n = strlen(name);

	for (const char *p = opt.providers; p && *p; p += strcspn(p, ",")) {
		p += *p == ',';
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	}
	return false;
}

/* --threads against what serves the connections. 0, or -1 after a
 * message. */
static int check_threads(void)
{
	if (opt.threads > 1 && !serves("tcp") && !serves("iser")) {
		ex_err("--threads %u: serves tcp and iser only", opt.threads);
		return -1;
	}
	if (opt.threads > 1 && serves("iser") && g_tgt.shared_recv)
		/* a shared receive queue is one loop's: its connections
		 * cannot move (idm_conn_move: -EOPNOTSUPP) */
		ex_info("--threads %u --shared-recv yes: iSER sessions stay on "
			"loop 0, whose shared receive queue their connections use",
			opt.threads);
	if (opt.threads > 1 && srv.nact) {
		/* one listener the kernel balances over the loops would need
		 * REUSEPORT sockets the manager did not open; refuse rather
		 * than run N loops of which one accepts everything */
		ex_err("--threads %u: not with socket activation (LISTEN_FDS); "
		       "use one thread, or portals of its own", opt.threads);
		return -1;
	}
	return 0;
}

/* Everything checked and the LUNs opened, before any loop. 0, or -1
 * after a message (exit status 2). */
static int configure(void)
{
	ex_log_set_target((enum ex_log_target)opt.log_target);
	if (load_credentials() < 0 || check_burst_keys() < 0 || install_acl() < 0)
		return -1;
	/* before any descriptor of ours: the passed ones start at 3 */
	srv.nact = activation_fds(MAX_PORTALS);
	if (srv.nact < 0)
		return -1;
	if (!opt.nportals && !srv.nact)
		opt.portals[opt.nportals++] = "0.0.0.0:3260";
	if (!opt.nluns) {
		ex_err("no LUN given (use --lun ram:64M, --lun file:PATH or --lun rbd:POOL/IMAGE)");
		return -1;
	}
	if (check_threads() < 0)
		return -1;
	return luns_open_all(opt.luns, opt.nluns, opt.bs);
}

/* A context per loop, in domain dom. 0, or -1 after a message. */
/* lun_cq's wake: a LUN call completed on another thread (librbd's) */
static void wake_loop(void *arg)
{
	struct loop *lp = arg;

	idm_ctx_wakeup(lp->ctx);
}

static int create_loop_contexts(idm_domain *dom)
{
	g_nloops = (int)opt.threads;
	g_loops = calloc((size_t)g_nloops, sizeof(*g_loops));
	usr1_turn = calloc((size_t)g_nloops, sizeof(*usr1_turn));
	if (!g_loops || !usr1_turn) {
		ex_err("no memory for %d loops", g_nloops);
		return -1;
	}
	for (int i = 0; i < g_nloops; i++) {
		struct idm_ctx_attr ca = {
			.size = sizeof(ca),
			.flags = g_tgt.shared_recv ? IDM_CTX_SHARED_RECV : 0,
			.log_fn = ex_log_idm_sink,
			.log_level = opt.level,
			.domain = dom,
		};
		int r;

		g_loops[i].index = i;
		r = idm_ctx_create(&ca, &g_loops[i].ctx);
		if (r < 0) {
			ex_err("idm_ctx_create: %s", idm_strerror(r));
			return -1;
		}
		r = lun_cq_init(&g_loops[i].cq, wake_loop, &g_loops[i]);
		if (r < 0) {
			ex_err("completion queue: %s", strerror(-r));
			return -1;
		}
		g_loops[i].cq_ready = true;
	}
	return 0;
}

/* One libidm context per loop, all in one domain: the LUNs' buffers,
 * made through loop 0, are registered once and serve the connections of
 * every loop, also on a provider that registers memory (iSER). 0, or -1
 * after a message. */
static int create_loops(void)
{
	idm_domain *dom;
	int r = idm_domain_create(NULL, &dom);

	if (r < 0) {
		ex_err("idm_domain_create: %s", idm_strerror(r));
		return -1;
	}
	r = create_loop_contexts(dom);
	idm_domain_destroy(dom); /* the contexts hold it */
	return r;
}

/* Setup runs as loop 0: the providers' capabilities, and the LUNs'
 * buffers in its context (the loops' domain: every loop's connections
 * take them, on any provider).
 * 0, or -1 after a message. */
static int attach_luns(void)
{
	const struct idm_provider_info *prov;
	size_t nprov;

	g_loop = &g_loops[0];
	if (idm_get_providers(g_loop->ctx, &prov, &nprov) == 0)
		for (size_t i = 0; i < nprov; i++) {
			g_tgt.caps |= prov[i].caps;
			ex_info("provider %s: %s", prov[i].name, prov[i].path);
		}
	for (int i = 0; i < g_tgt.nluns; i++) {
		struct lun *l = g_tgt.luns[i];
		int r = lun_attach_ctx(l, g_loop->ctx);

		if (r < 0) {
			ex_err("LUN %d: idm_buf_create: %s", l->id, idm_strerror(r));
			return -1;
		}
		ex_info("LUN %d: %s, %llu blocks of %u bytes%s", l->id, l->spec,
			(unsigned long long)l->nblocks, opt.bs,
			l->ro ? ", write protected" : "");
	}
	return 0;
}

/* One listener on loop `loop`: srv.portal[srv.nportal++]. 0, or -1
 * after a message. */
static int portal_on(int loop, const char *host, const char *port,
		     const char *providers, uint32_t flags, const char *spec)
{
	struct idm_portal_attr pa = {
		.size = sizeof(pa),
		.providers = providers,
		.accept = conn_accept,
		.flags = flags,
	};
	int r = idm_portal_create(g_loops[loop].ctx, host, port, &pa,
				  &srv.portal[srv.nportal]);

	if (r < 0) {
		const char *why = idm_last_error();

		ex_err("cannot listen on %s (%s): %s%s%s", spec, providers,
		       idm_strerror(r), why && *why ? ": " : "", why ? why : "");
		return -1;
	}
	srv.nportal++;
	return 0;
}

/* Portal `spec` on every loop; port 0: the first picks, the others share
 * what it got. With several loops TCP listens on every loop (the kernel
 * spreads connections: IDM_PORTAL_REUSEPORT), iSER on loop 0 only (an
 * RDMA CM id cannot share its port; login.c places its sessions on the
 * loops). 0, -1 after a message, or 2 for a portal that does not parse. */
static int listen_on(const char *spec)
{
	char host[256], port[16];
	int first = srv.nportal;

	if (split_portal(spec, host, sizeof(host), port, sizeof(port)) < 0) {
		ex_err("bad portal '%s'", spec);
		return 2;
	}
	if (g_nloops == 1) {
		if (portal_on(0, host, port, opt.providers, 0, spec) < 0)
			return -1;
	} else {
		for (int l = 0; serves("tcp") && l < g_nloops; l++) {
			if (portal_on(l, host, port, "tcp", IDM_PORTAL_REUSEPORT, spec) < 0)
				return -1;
			snprintf(port, sizeof(port), "%d", idm_portal_port(srv.portal[first]));
		}
		if (serves("iser") && portal_on(0, host, port, "iser", 0, spec) < 0)
			return -1;
	}
	ex_info("listening on %s:%d (%s), target %s%s", host,
		idm_portal_port(srv.portal[first]), opt.providers, g_tgt.name,
		g_nloops == 1 ? "" : serves("iser") ? ", TCP on every loop, iSER on loop 0"
						    : ", on every loop");
	return 0;
}

/* --port-file: the first portal's port, for whoever started us */
static int write_port_file(void)
{
	FILE *f;

	if (!opt.port_file || !srv.nportal)
		return 0;
	f = fopen(opt.port_file, "w");
	if (!f || fprintf(f, "%d\n", idm_portal_port(srv.portal[0])) < 0 || fclose(f)) {
		ex_err("cannot write %s", opt.port_file);
		return -1;
	}
	return 0;
}

/* The descriptor budget, then the sockets passed or the portals. 0, -1
 * after a message, or 2 for a portal that does not parse. */
static int open_portals(void)
{
	/* descriptors besides connections: LUN files, the contexts', the
	 * listening sockets, logging */
	if (budget_init(32 + g_tgt.nluns + 8 * g_nloops +
			2 * g_nloops * (srv.nact > 0 ? srv.nact : opt.nportals)) < 0)
		return -1;
	if (srv.nact > 0)
		return open_activated(srv.nact, srv.portal, &srv.nportal, &srv.single);
	for (int i = 0; i < opt.nportals; i++) {
		int r = listen_on(opt.portals[i]);

		if (r)
			return r;
	}
	return 0;
}

/* The signals go to loop 0 (this thread): the other loops start with
 * them blocked and learn of them from loop 0. 0, or -1 after a message. */
static int start_loops(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1 };
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, old;

	__atomic_store_n(&sig_wake_ctx, g_loops[0].ctx, __ATOMIC_RELEASE);
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&block, sigs[i]);
	}
	signal(SIGPIPE, SIG_IGN);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (int i = 1; i < g_nloops; i++) {
		int r = pthread_create(&srv.threads[i], NULL, loop_thread, &g_loops[i]);

		if (r) {
			ex_err("cannot start loop %d: %s", i, strerror(r));
			__atomic_store_n(&stop_all, 1, __ATOMIC_RELAXED);
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			return -1;
		}
		srv.nthreads = i;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return 0;
}

/* From the loops to listening, then serving until a signal: the exit
 * status. */
static int serve(void)
{
	int r;

	if (create_loops() < 0 || attach_luns() < 0)
		return 1;
	access_log_policy();
	r = open_portals();
	if (r)
		return r < 0 ? 1 : r;
	/* the port file says "started": after the signal handlers, so that
	 * whoever read it may stop us with SIGINT or SIGTERM at once */
	if (start_loops() < 0 || write_port_file() < 0)
		return 1;
	notify_send("READY=1");
	r = run_loop(srv.single);
	if (r == 0) {
		notify_send("STOPPING=1");
		ex_info("shutting down");
	}
	return r;
}

/* Every loop stopped: this thread ends their connections, then the
 * pools (a moved connection's buffers may be another pool's). Returns
 * whether LUN calls are still in flight (a cluster that never answered). */
static bool destroy_connections(void)
{
	bool stuck = false;

	for (int i = 0; g_loops && i < g_nloops; i++) {
		g_loop = &g_loops[i];
		if (g_loop->ctx) {
			loop_handoff_flush();
			conn_destroy_all();
		}
	}
	/* LUN calls still in flight write into, or read from, the pools'
	 * buffers: wait for them (a cluster that is down: its timeout) */
	for (int i = 0; g_loops && i < g_nloops; i++) {
		g_loop = &g_loops[i];
		if (g_loop->cq_ready && lun_cq_quiesce(&g_loop->cq, 60000) > 0) {
			ex_warn("loop %d: %d LUN calls still in flight after 60 s: exiting "
				"without them", i, g_loop->cq.inflight);
			stuck = true;
		}
	}
	if (stuck)
		return true;
	for (int i = 0; g_loops && i < g_nloops; i++) {
		g_loop = &g_loops[i];
		if (g_loop->ctx)
			pool_destroy();
	}
	return false;
}

/* Undo whatever of main()'s setup was done. */
static void take_down(void)
{
	__atomic_store_n(&stop_all, 1, __ATOMIC_RELAXED);
	wake_other_loops();
	for (int i = 1; i <= srv.nthreads; i++)
		pthread_join(srv.threads[i], NULL);
	__atomic_store_n(&sig_wake_ctx, NULL, __ATOMIC_RELEASE);
	for (int i = 0; i < srv.nportal; i++)
		idm_portal_destroy(srv.portal[i]);
	if (destroy_connections()) {
		/* librbd would still write into the pools' buffers and queue
		 * on the loops' completion queues, and closing its image
		 * would wait for the cluster: leave it all to the exit */
		return;
	}
	budget_fini();
	/* RAM LUN buffers go before the context they were created in */
	luns_close_all();
	for (int i = 0; g_loops && i < g_nloops; i++) {
		if (g_loops[i].cq_ready)
			lun_cq_fini(&g_loops[i].cq);
		if (g_loops[i].ctx)
			idm_ctx_destroy(g_loops[i].ctx);
	}
	free(g_loops);
	free(usr1_turn);
	access_acl_install(NULL);
	config_free();
}

int main(int argc, char **argv)
{
	int rc = read_command_line(argc, argv);

	if (rc < 0) {
		ex_log_init(argv[0], opt.level);
		rc = configure() < 0 ? 2 : serve();
	}
	take_down();
	return rc;
}
