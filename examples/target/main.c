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
#include "luns.h"
#include "notify.h"

#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct target g_tgt;

static volatile sig_atomic_t stop, hup, usr1;
/* --threads > 1: the loops' view of stop, and who prints stats next */
static int stop_all, loop_failed;
static int *usr1_turn;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		hup = 1;
	else if (sig == SIGUSR1)
		usr1 = 1;
	else
		stop = 1;
}

/* The config file's LUNs are opt.luns[cfg_at, cfg_at + cfg_n): a SIGHUP
 * replaces them and keeps the command line's around them, in order, so
 * that auto-numbered LUNs keep their numbers. */
static int cfg_at = -1, cfg_n;

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
"Usage: %s [options]\n"
"An example iSCSI target on libidm, serving LUNs backed by RAM or files.\n"
"\n"
"  -c, --config FILE         read settings from FILE (\"name = value\" lines,\n"
"                            names as the long options below); options\n"
"                            after -c override it, lun/portal/key add to it\n"
"  -p, --portal HOST:PORT    listen address (default 0.0.0.0:3260; port 0\n"
"                            picks a free port; [v6addr]:port for IPv6);\n"
"                            may be given several times\n"
"  -t, --target-name IQN     target name (default iqn.2026-11.org.libidm:target)\n"
"  -a, --alias NAME          TargetAlias (informational)\n"
"  -l, --lun [N=]SPEC[,ro]   add a LUN: ram:SIZE (e.g. ram:64M) or file:PATH\n"
"                            (a regular file or block device); ,ro serves it\n"
"                            write protected; numbered 1, 2, ... unless N=\n"
"  -b, --block-size N        logical block size: 512 (default) or 4096\n"
"  -P, --provider LIST       transport providers: tcp, iser or tcp,iser\n"
"                            (default tcp)\n"
"  -k, --key NAME=VALUE      what the target answers for a login key, e.g.\n"
"                            ImmediateData=No, InitialR2T=Yes,\n"
"                            MaxBurstLength=65536, HeaderDigest=CRC32C,None\n"
"                            (defaults: ImmediateData=Yes InitialR2T=No\n"
"                            MaxBurstLength=1048576 FirstBurstLength=262144\n"
"                            MaxOutstandingR2T=16, digests CRC32C,None);\n"
"                            checked against the RFC 7143/7145 ranges\n"
"      --credentials FILE    read secrets from FILE (mode 0600: group and\n"
"                            others must have no access), e.g.\n"
"                            \"chap = USER:SECRET\": CHAP required from\n"
"                            every initiator, from any address; also\n"
"                            initiator-chap = IQN USER:SECRET, mutual-chap\n"
"                            and discovery-chap = USER:SECRET\n"
"      --chap USER:SECRET    the same on the command line, where every local\n"
"                            user can read it: for tests only (warns)\n"
"      --chap-algorithms LIST  CHAP algorithms accepted, in the target's\n"
"                            order of preference, from sha3-256, sha256,\n"
"                            sha1, md5 (default sha3-256,sha256,sha1,md5;\n"
"                            leave md5 out to refuse it)\n"
"      --max-auth-failures N after N failed authentications from one\n"
"                            address within 60 s, refuse its logins for\n"
"                            60 s (default 10; 0: no limit)\n"
"      --allow-all           serve initiators from any address without CHAP\n"
"                            (warns); by default, without CHAP, only\n"
"                            initiators on loopback may log in\n"
"      --acl 'NAME ADDRESS [luns=LIST]'\n"
"                            initiator ACL rule (repeatable, max 256): NAME\n"
"                            an initiator name or *, ADDRESS an address or\n"
"                            prefix (10.9.0.0/24, fd00::/64) or *, LIST LUN\n"
"                            numbers (0,2,4-7) it sees. With rules, only\n"
"                            logins some rule matches are served, loopback\n"
"                            included; not with --allow-all\n"
"      --login-timeout SEC   close a connection not in full feature phase\n"
"                            SEC seconds after it connected (default 15)\n"
"      --max-connections N   connections at once, in login or not; more are\n"
"                            refused (default 1024)\n"
"      --max-logins N        connections in login at once (default 256)\n"
"      --max-logins-per-address N\n"
"                            connections in login at once from one\n"
"                            initiator address (default 16)\n"
"      --port-file FILE      write the listening TCP port to FILE once ready\n"
"      --threads N           N event loops, one thread and libidm context\n"
"                            each, sharing every portal (default 1; tcp\n"
"                            only; a session's connections stay on one)\n"
"  -v, --verbose             more log output (debug: every failed command)\n"
"  -q, --quiet               less log output (-q warnings, -qq errors only)\n"
"      --log-level LEVEL     error, warn, info or debug (or 0-3); the\n"
"                            default is IDM_LOG_LEVEL, else info\n"
"      --log-target WHERE    auto (default), stderr, journal or syslog\n"
"  -V, --version             print the program and libidm versions\n"
"  -h, --help                this text\n"
"\n"
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
"Example:\n"
"  %s --portal 127.0.0.1:3260 --target-name iqn.2026-11.org.libidm:t1 \\\n"
"     --lun ram:64M --lun file:/var/tmp/disk.img,ro -v\n",
		prog, prog);
}

#define MAX_PORTALS 8
#define MAX_LISTENERS (MAX_PORTALS * 64) /* every portal on every loop */

enum {
	OPT_PORT_FILE = 'F', OPT_CHAP = 'C', OPT_LOG_LEVEL = 256, OPT_LOG_TARGET,
	OPT_LOGIN_TIMEOUT, OPT_MAX_CONNS, OPT_MAX_LOGINS, OPT_MAX_LOGINS_PER_ADDR,
	OPT_THREADS, OPT_ALLOW_ALL, OPT_CREDENTIALS,
	OPT_ACL,
	OPT_CHAP_ALGS, OPT_MAX_AUTH_FAILURES, /* CHAP */
};

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "portal", required_argument, NULL, 'p' },
	{ "target-name", required_argument, NULL, 't' },
	{ "alias", required_argument, NULL, 'a' },
	{ "lun", required_argument, NULL, 'l' },
	{ "block-size", required_argument, NULL, 'b' },
	{ "provider", required_argument, NULL, 'P' },
	{ "port-file", required_argument, NULL, OPT_PORT_FILE },
	{ "key", required_argument, NULL, 'k' },
	{ "chap", required_argument, NULL, OPT_CHAP },
	{ "credentials", required_argument, NULL, OPT_CREDENTIALS },
	{ "chap-algorithms", required_argument, NULL, OPT_CHAP_ALGS },
	{ "max-auth-failures", required_argument, NULL, OPT_MAX_AUTH_FAILURES },
	{ "allow-all", no_argument, NULL, OPT_ALLOW_ALL },
	{ "acl", required_argument, NULL, OPT_ACL },
	{ "login-timeout", required_argument, NULL, OPT_LOGIN_TIMEOUT },
	{ "max-connections", required_argument, NULL, OPT_MAX_CONNS },
	{ "max-logins", required_argument, NULL, OPT_MAX_LOGINS },
	{ "max-logins-per-address", required_argument, NULL, OPT_MAX_LOGINS_PER_ADDR },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "log-target", required_argument, NULL, OPT_LOG_TARGET },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

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

/* "option --name" or "FILE:LINE" for messages */
static const char *origin(const char *where, int o, char *buf, size_t n)
{
	if (where)
		return where;
	for (const struct option *p = long_opts; p->name; p++)
		if (p->val == o) {
			snprintf(buf, n, "option --%s", p->name);
			return buf;
		}
	return "option";
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
static int set_uint(const char *w, int o, const char *arg, unsigned lo, unsigned hi,
		    unsigned *out)
{
	const struct option *p = long_opts;
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (!*arg || *end || *arg == '-' || errno || v < lo || v > hi) {
		while (p->name && p->val != o)
			p++;
		ex_err("%s: %s='%s': must be a number from %u to %u", w,
		       p->name ? p->name : "value", arg, lo, hi);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

/* A flag: set by its option (arg NULL), or "yes" or "no" in a file. */
static int set_flag(const char *w, int o, const char *arg, bool *out)
{
	const struct option *p = long_opts;

	if (!arg || !strcmp(arg, "yes")) {
		*out = true;
		return 0;
	}
	if (!strcmp(arg, "no")) {
		*out = false;
		return 0;
	}
	while (p->name && p->val != o)
		p++;
	ex_err("%s: %s = '%s': use yes or no", w, p->name ? p->name : "flag", arg);
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

static int load_config(const char *path);
static int split_portal(const char *arg, char *host, size_t hn, char *port, size_t pn);

/* Apply one option from the command line (where == NULL) or a config
 * file. 0, or -1 after an error message. */
static int set_option(int o, char *arg, const char *where)
{
	char wbuf[64];
	const char *w = origin(where, o, wbuf, sizeof(wbuf));
	int v;

	switch (o) {
	case 'c':
		if (opt.config) {
			ex_err("%s: only one config file", w);
			return -1;
		}
		opt.config = arg;
		cfg_at = opt.nluns;
		opt.acl_at = opt.nacls;
		if (load_config(arg) < 0)
			return -1;
		cfg_n = opt.nluns - cfg_at;
		opt.acl_n = opt.nacls - opt.acl_at;
		return 0;
	case 'p':
		if (opt.nportals == MAX_PORTALS) {
			ex_err("%s: too many portals (max %d)", w, MAX_PORTALS);
			return -1;
		}
		{
			char host[256], port[16];

			char *end;
			unsigned long pn;

			if (split_portal(arg, host, sizeof(host), port, sizeof(port)) < 0 ||
			    (pn = strtoul(port, &end, 10), *end || end == port || pn > 65535)) {
				ex_err("%s: bad portal '%s': use HOST:PORT, HOST or [IPv6]:PORT", w, arg);
				return -1;
			}
		}
		opt.portals[opt.nportals++] = arg;
		return 0;
	case 't':
		if (!*arg || strlen(arg) > 223) {
			ex_err("%s: the target name must be 1 to 223 bytes", w);
			return -1;
		}
		g_tgt.name = arg;
		return 0;
	case 'a': g_tgt.alias = arg; return 0;
	case 'l':
		if (opt.nluns == TGT_MAX_LUNS) {
			ex_err("%s: too many LUNs (max %d)", w, TGT_MAX_LUNS);
			return -1;
		}
		opt.luns[opt.nluns++] = arg;
		return 0;
	case 'b':
		if (strcmp(arg, "512") && strcmp(arg, "4096")) {
			ex_err("%s: block size '%s': must be 512 or 4096", w, arg);
			return -1;
		}
		opt.bs = (uint32_t)atoi(arg);
		return 0;
	case 'P':
		opt.providers = arg;
		return 0;
	case OPT_PORT_FILE: opt.port_file = arg; return 0;
	case OPT_CHAP:
		if (credentials_set_chap(arg, w) < 0)
			return -1;
		warn_exposed_secret(where);
		return 0;
	case OPT_CREDENTIALS:
		if (opt.credentials) {
			ex_err("%s: only one credentials file", w);
			return -1;
		}
		opt.credentials = arg;
		return credentials_load(arg);
	case OPT_ALLOW_ALL:
		return set_flag(w, o, arg, &g_tgt.allow_all);
	case OPT_ACL:
		if (opt.nacls == ACCESS_MAX_RULES) {
			ex_err("%s: too many acl rules (max %d)", w, ACCESS_MAX_RULES);
			return -1;
		}
		if (check_acl(arg, w) < 0)
			return -1;
		opt.acls[opt.nacls++] = arg;
		return 0;
	case OPT_CHAP_ALGS:
		v = ex_chap_alg_list_parse(arg, g_tgt.chap_algs, EX_CHAP_MAX_ALGS);
		if (v < 0) {
			ex_err("%s: chap-algorithms '%s': a list of sha3-256, sha256, "
			       "sha1 and md5, each once", w, arg);
			return -1;
		}
		g_tgt.nchap_algs = v;
		return 0;
	case OPT_MAX_AUTH_FAILURES:
		return set_uint(w, o, arg, 0, 1000000, &g_authlimit_max);
	case 'k': return add_key(arg, w);
	case OPT_LOGIN_TIMEOUT:
		return set_uint(w, o, arg, 1, 3600, &g_budget.login_timeout_s);
	case OPT_MAX_CONNS:
		return set_uint(w, o, arg, 1, 1000000, &g_budget.max_conns);
	case OPT_MAX_LOGINS:
		return set_uint(w, o, arg, 1, 65536, &g_budget.max_logins);
	case OPT_MAX_LOGINS_PER_ADDR:
		return set_uint(w, o, arg, 1, 65536, &g_budget.max_logins_per_addr);
	case OPT_THREADS:
		return set_uint(w, o, arg, 1, 64, &opt.threads);
	case OPT_LOG_LEVEL:
		if ((v = ex_log_parse_level(arg)) < 0) {
			ex_err("%s: log level '%s': use error, warn, info, debug or 0-3", w, arg);
			return -1;
		}
		opt.level = v;
		return 0;
	case OPT_LOG_TARGET:
		if ((v = ex_log_parse_target(arg)) < 0) {
			ex_err("%s: log target '%s': use auto, stderr, journal or syslog", w, arg);
			return -1;
		}
		opt.log_target = v;
		return 0;
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
static bool config_allows(const struct option *p)
{
	if (p->has_arg == required_argument)
		return p->val != 'c';
	return p->val == OPT_ALLOW_ALL;
}

/* A config file line: its name is a long option config_allows(). */
static int config_setting(const char *name, char *value, const char *where, void *arg)
{
	(void)arg;
	for (const struct option *p = long_opts; p->name; p++)
		if (!strcmp(p->name, name)) {
			if (!config_allows(p)) {
				ex_err("%s: '%s' is not allowed in a config file", where, name);
				return -1;
			}
			return set_option(p->val, value, where);
		}
	ex_err("%s: unknown setting '%s'", where, name);
	return -1;
}

static int load_config(const char *path)
{
	static int depth;
	int r;

	if (depth) {
		ex_err("%s: config files cannot include others", path);
		return -1;
	}
	depth++;
	r = config_load(path, config_setting, NULL);
	depth--;
	return r;
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
	const struct option *p;

	/* A file that would not start the target must not reload it either. */
	for (p = long_opts; p->name && strcmp(p->name, name); p++)
		;
	if (!p->name || !config_allows(p)) {
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
	} else {
		int after = opt.nluns - cfg_at - cfg_n, r = 0;

		if (g_nloops > 1) {
			ex_warn("SIGHUP: reloading LUNs needs --threads 1; "
				"restart to change them (acl rules reloaded)");
		} else if (rs->n + after > TGT_MAX_LUNS) {
			ex_err("reload: too many LUNs (max %d)", TGT_MAX_LUNS);
			r = -1;
		} else {
			for (int i = cfg_at + cfg_n; i < opt.nluns; i++)
				rs->luns[rs->n++] = opt.luns[i];
			r = luns_reload(rs->luns, rs->n, opt.bs);
		}
		if (r < 0) {
			ex_err("reload failed: acl rules unchanged too");
			access_acl_free(acl);
		} else {
			ex_info("reload: %d acl rule(s) in force", access_acl_count(acl));
			access_acl_install(acl);
			access_log_policy();
		}
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

/* One pass of housekeeping after a progress call; the same on every
 * loop. */
static void loop_tick(void)
{
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
	if (i + 1 < g_nloops)
		__atomic_store_n(&usr1_turn[i + 1], 1, __ATOMIC_RELEASE);
}

/* Loops 1 .. N-1: their own thread, stopped by loop 0. */
static void *loop_thread(void *arg)
{
	g_loop = arg;
	while (!__atomic_load_n(&stop_all, __ATOMIC_RELAXED)) {
		int r = idm_ctx_progress(g_loop->ctx, 100);

		if (r < 0 && r != -EINTR) {
			ex_err("loop %d: idm_ctx_progress: %s", g_loop->index, idm_strerror(r));
			/* its connections would hang: the whole target stops */
			__atomic_store_n(&loop_failed, 1, __ATOMIC_RELAXED);
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
		int r = idm_ctx_progress(g_loop->ctx, 100);

		if ((r < 0 && r != -EINTR) || __atomic_load_n(&loop_failed, __ATOMIC_RELAXED)) {
			if (r < 0 && r != -EINTR)
				ex_err("idm_ctx_progress: %s", idm_strerror(r));
			return 1;
		}
		if (hup) {
			hup = 0;
			reload();
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

int main(int argc, char **argv)
{
	static idm_portal *portal[MAX_LISTENERS];
	const struct idm_provider_info *prov;
	size_t nprov;
	int o, r, rc = 2, nact, nportal = 0;
	bool single = false; /* serving one activated connection only */
	pthread_t threads[64 + 1];
	int nthreads = 0; /* loops 1 .. nthreads run */

	g_tgt.name = "iqn.2026-11.org.libidm:target";
	opt.providers = "tcp";
	opt.bs = 512;
	opt.threads = 1;
	opt.level = ex_log_env_level(argv[0], IDM_LOG_INFO);
	opt.log_target = EX_LOG_AUTO;
	/* errors of the command line and config file always show */
	ex_log_init(argv[0], IDM_LOG_WARN);
	while ((o = getopt_long(argc, argv, "c:p:t:a:l:b:P:k:vqVh", long_opts, NULL)) != -1) {
		if (o == 'h') {
			usage(stdout, argv[0]);
			return 0;
		}
		if (o == 'V') {
			ex_print_version(argv[0]);
			return 0;
		}
		if (o == '?' || o == ':') {
			fprintf(stderr, "Try '%s --help'.\n", argv[0]);
			return 2;
		}
		if (set_option(o, optarg, NULL) < 0)
			goto out;
	}
	if (optind < argc) {
		ex_err("unexpected argument '%s'", argv[optind]);
		fprintf(stderr, "Try '%s --help'.\n", argv[0]);
		goto out;
	}
	ex_log_init(argv[0], opt.level);
	ex_log_set_target((enum ex_log_target)opt.log_target);
	/* under systemd the credential stands for --credentials, read
	 * after the other options; an explicit file wins */
	if (!opt.credentials && credentials_load_systemd() < 0)
		goto out;
	if (credentials_check() < 0)
		goto out;
	{
		/* RFC 7143 13.14: FirstBurstLength <= MaxBurstLength */
		/* (only when both are given: the defaults adapt) */
		unsigned long long fbl = 0, mbl = 0;
		for (int i = 0; i < g_tgt.nkey_overrides; i++) {
			const char *k = g_tgt.key_overrides[i];
			if (!strncmp(k, "FirstBurstLength=", 17))
				fbl = strtoull(k + 17, NULL, 0);
			else if (!strncmp(k, "MaxBurstLength=", 15))
				mbl = strtoull(k + 15, NULL, 0);
		}
		if (fbl && mbl && fbl > mbl) {
			ex_err("FirstBurstLength (%llu) must not exceed MaxBurstLength "
			       "(%llu) (RFC 7143 section 13.14)", fbl, mbl);
			goto out;
		}
	}
	if (opt.nacls && g_tgt.allow_all) {
		ex_err("acl rules and allow-all exclude each other: allow-all serves "
		       "everyone, the rules name whom to serve; drop one");
		goto out;
	}
	if (opt.nacls) {
		struct access_acl *acl = build_acl(opt.acls, opt.nacls);

		if (!acl)
			goto out;
		access_acl_install(acl);
	}
	/* before any descriptor of ours: the passed ones start at 3 */
	nact = activation_fds(MAX_PORTALS);
	if (nact < 0)
		goto out;
	if (!opt.nportals && !nact)
		opt.portals[opt.nportals++] = "0.0.0.0:3260";
	if (!opt.nluns) {
		ex_err("no LUN given (use --lun ram:64M or --lun file:PATH)");
		goto out;
	}
	if (opt.threads > 1 && strcmp(opt.providers, "tcp")) {
		/* an RDMA CM id cannot share its port (IDM_PORTAL_REUSEPORT),
		 * nor an iSER connection move to another context */
		ex_err("--threads %u: serves tcp only (iSER: one loop)", opt.threads);
		goto out;
	}
	if (opt.threads > 1 && nact) {
		/* one listener the kernel balances over the loops would need
		 * REUSEPORT sockets the manager did not open; refuse rather
		 * than run N loops of which one accepts everything */
		ex_err("--threads %u: not with socket activation (LISTEN_FDS); "
		       "use one thread, or portals of its own", opt.threads);
		goto out;
	}
	if (luns_open_all(opt.luns, opt.nluns, opt.bs) < 0)
		goto out;

	rc = 1;
	g_nloops = (int)opt.threads;
	g_loops = calloc((size_t)g_nloops, sizeof(*g_loops));
	usr1_turn = calloc((size_t)g_nloops, sizeof(*usr1_turn));
	if (!g_loops || !usr1_turn) {
		ex_err("no memory for %d loops", g_nloops);
		goto out;
	}
	for (int i = 0; i < g_nloops; i++) {
		struct idm_ctx_attr ca = {
			.size = sizeof(ca),
			.log_fn = ex_log_idm_sink,
			.log_level = opt.level,
		};

		g_loops[i].index = i;
		r = idm_ctx_create(&ca, &g_loops[i].ctx);
		if (r < 0) {
			ex_err("idm_ctx_create: %s", idm_strerror(r));
			goto out;
		}
	}
	/* setup runs as loop 0: the LUNs' buffers are its context's (TCP
	 * takes them on every loop's connections) */
	g_loop = &g_loops[0];
	if (idm_get_providers(g_loop->ctx, &prov, &nprov) == 0)
		for (size_t i = 0; i < nprov; i++) {
			g_tgt.caps |= prov[i].caps;
			ex_info("provider %s: %s", prov[i].name, prov[i].path);
		}
	for (int i = 0; i < g_tgt.nluns; i++) {
		struct lun *l = g_tgt.luns[i];

		r = lun_attach_ctx(l, g_loop->ctx);
		if (r < 0) {
			ex_err("LUN %d: idm_buf_create: %s", l->id, idm_strerror(r));
			goto out;
		}
		ex_info("LUN %d: %s, %llu blocks of %u bytes%s", l->id, l->spec,
			(unsigned long long)l->nblocks, opt.bs,
			l->ro ? ", write protected" : "");
	}

	access_log_policy();

	/* descriptors besides connections: LUN files, the contexts', the
	 * listening sockets, logging */
	if (budget_init(32 + g_tgt.nluns + 8 * g_nloops +
			2 * g_nloops * (nact > 0 ? nact : opt.nportals)) < 0)
		goto out;
	if (nact > 0 && open_activated(nact, portal, &nportal, &single) < 0)
		goto out;
	for (int i = 0; nact == 0 && i < opt.nportals; i++) {
		char host[256], port[16];
		int first = nportal;

		if (split_portal(opt.portals[i], host, sizeof(host), port, sizeof(port)) < 0) {
			ex_err("bad portal '%s'", opt.portals[i]);
			rc = 2;
			goto out;
		}
		/* every loop listens on it; port 0: the first picks, the
		 * others share what it got */
		for (int l = 0; l < g_nloops; l++) {
			struct idm_portal_attr pa = {
				.size = sizeof(pa),
				.providers = opt.providers,
				.accept = conn_accept,
				.flags = g_nloops > 1 ? IDM_PORTAL_REUSEPORT : 0,
			};

			if (l > 0)
				snprintf(port, sizeof(port), "%d", idm_portal_port(portal[first]));
			r = idm_portal_create(g_loops[l].ctx, host, port, &pa, &portal[nportal]);
			if (r < 0) {
				const char *why = idm_last_error();

				ex_err("cannot listen on %s (%s): %s%s%s", opt.portals[i],
				       opt.providers, idm_strerror(r), why && *why ? ": " : "",
				       why ? why : "");
				goto out;
			}
			nportal++;
		}
		ex_info("listening on %s:%d (%s), target %s%s", host,
			idm_portal_port(portal[first]), opt.providers, g_tgt.name,
			g_nloops > 1 ? ", on every loop" : "");
	}
	if (opt.port_file && nportal) {
		FILE *f = fopen(opt.port_file, "w");
		if (!f || fprintf(f, "%d\n", idm_portal_port(portal[0])) < 0 || fclose(f)) {
			ex_err("cannot write %s", opt.port_file);
			goto out;
		}
	}

	{
		struct sigaction sa = { .sa_handler = on_signal };
		sigset_t block, old;

		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		sigaction(SIGUSR1, &sa, NULL);
		signal(SIGPIPE, SIG_IGN);
		/* the signals go to loop 0 (this thread): the others start
		 * with them blocked and learn of them from loop 0 */
		sigemptyset(&block);
		sigaddset(&block, SIGINT);
		sigaddset(&block, SIGTERM);
		sigaddset(&block, SIGHUP);
		sigaddset(&block, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &block, &old);
		for (int i = 1; i < g_nloops; i++) {
			r = pthread_create(&threads[i], NULL, loop_thread, &g_loops[i]);
			if (r) {
				ex_err("cannot start loop %d: %s", i, strerror(r));
				__atomic_store_n(&stop_all, 1, __ATOMIC_RELAXED);
				pthread_sigmask(SIG_SETMASK, &old, NULL);
				goto out;
			}
			nthreads = i;
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	notify_send("READY=1");
	rc = run_loop(single);
	if (rc == 0) {
		notify_send("STOPPING=1");
		ex_info("shutting down");
	}
out:
	__atomic_store_n(&stop_all, 1, __ATOMIC_RELAXED);
	for (int i = 1; i <= nthreads; i++)
		pthread_join(threads[i], NULL);
	for (int i = 0; i < nportal; i++)
		idm_portal_destroy(portal[i]);
	/* every loop stopped: this thread ends their connections, then the
	 * pools (a moved connection's buffers may be another pool's) */
	for (int i = 0; g_loops && i < g_nloops; i++) {
		g_loop = &g_loops[i];
		if (g_loop->ctx) {
			loop_handoff_flush();
			conn_destroy_all();
		}
	}
	for (int i = 0; g_loops && i < g_nloops; i++) {
		g_loop = &g_loops[i];
		if (g_loop->ctx)
			pool_destroy();
	}
	budget_fini();
	/* RAM LUN buffers go before the context they were created in */
	luns_close_all();
	for (int i = 0; g_loops && i < g_nloops; i++)
		if (g_loops[i].ctx)
			idm_ctx_destroy(g_loops[i].ctx);
	free(g_loops);
	free(usr1_turn);
	access_acl_install(NULL);
	config_free();
	return rc;
}
