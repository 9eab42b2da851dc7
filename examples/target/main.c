/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm-target: command line, LUN setup, portal and the event loop.
 */
#include "target.h"
#include "ex_log.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct target g_tgt;

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
"Usage: %s [options]\n"
"An example iSCSI target on libidm, serving LUNs backed by RAM or files.\n"
"\n"
"  -p, --portal HOST:PORT    listen address (default 0.0.0.0:3260; port 0\n"
"                            picks a free port; [v6addr]:port for IPv6);\n"
"                            may be given several times\n"
"  -t, --target-name IQN     target name (default iqn.2026-11.org.libidm:target)\n"
"  -a, --alias NAME          TargetAlias (informational)\n"
"  -l, --lun [N=]SPEC        add a LUN: ram:SIZE (e.g. ram:64M) or file:PATH;\n"
"                            numbered 1, 2, ... unless N= is given\n"
"  -b, --block-size N        logical block size: 512 (default) or 4096\n"
"  -P, --provider LIST       transport providers: tcp, iser or tcp,iser\n"
"                            (default tcp)\n"
"  -k, --key NAME=VALUE      what the target answers for a login key, e.g.\n"
"                            ImmediateData=No, InitialR2T=Yes,\n"
"                            MaxBurstLength=65536, HeaderDigest=CRC32C,None\n"
"                            (defaults: ImmediateData=Yes InitialR2T=No\n"
"                            MaxBurstLength=1048576 FirstBurstLength=262144\n"
"                            MaxOutstandingR2T=16, digests CRC32C,None)\n"
"      --chap USER:SECRET    require one-way CHAP (MD5) from every initiator\n"
"      --port-file FILE      write the listening TCP port to FILE once ready\n"
"  -v, --verbose             more log output (debug: every failed command)\n"
"  -q, --quiet               less log output (-q warnings, -qq errors only)\n"
"  -h, --help                this text\n"
"\n"
"Logs go to stderr. Stop with SIGINT or SIGTERM.\n"
"Example:\n"
"  %s --portal 127.0.0.1:3260 --target-name iqn.2026-11.org.libidm:t1 \\\n"
"     --lun ram:64M --lun file:/var/tmp/disk.img -v\n",
		prog, prog);
}

static int add_lun(const char *arg, int next_id, uint32_t bs)
{
	const char *spec = arg;
	const char *eq = strchr(arg, '=');
	int id = next_id;
	struct lun *l;
	int r;

	if (eq && strncmp(arg, "ram:", 4) && strncmp(arg, "file:", 5)) {
		char *end;
		long v = strtol(arg, &end, 10);
		if (end != eq || v < 0 || v > 16383) {
			ex_err("bad LUN number in '%s'", arg);
			return -1;
		}
		id = (int)v;
		spec = eq + 1;
	}
	if (g_tgt.nluns == TGT_MAX_LUNS) {
		ex_err("too many LUNs (max %d)", TGT_MAX_LUNS);
		return -1;
	}
	for (int i = 0; i < g_tgt.nluns; i++)
		if (g_tgt.luns[i]->id == id) {
			ex_err("LUN %d given twice", id);
			return -1;
		}
	r = lun_open(spec, id, bs, &l);
	if (r < 0) {
		ex_err("cannot open LUN '%s': %s", spec, strerror(-r));
		return -1;
	}
	g_tgt.luns[g_tgt.nluns++] = l;
	return id;
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

#define MAX_PORTALS 8

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "portal", required_argument, NULL, 'p' },
		{ "target-name", required_argument, NULL, 't' },
		{ "alias", required_argument, NULL, 'a' },
		{ "lun", required_argument, NULL, 'l' },
		{ "block-size", required_argument, NULL, 'b' },
		{ "provider", required_argument, NULL, 'P' },
		{ "port-file", required_argument, NULL, 'F' },
		{ "key", required_argument, NULL, 'k' },
		{ "chap", required_argument, NULL, 'C' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *portals[MAX_PORTALS];
	const char *lun_args[TGT_MAX_LUNS];
	const char *providers = "tcp", *port_file = NULL;
	int nportals = 0, nlun_args = 0, verbosity = IDM_LOG_INFO, opt, rc = 1;
	uint32_t bs = 512;
	idm_portal *portal[MAX_PORTALS] = { 0 };
	const struct idm_provider_info *prov;
	size_t nprov;

	g_tgt.name = "iqn.2026-11.org.libidm:target";
	while ((opt = getopt_long(argc, argv, "p:t:a:l:b:P:k:vqh", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (nportals == MAX_PORTALS) {
				fprintf(stderr, "too many portals\n");
				return 2;
			}
			portals[nportals++] = optarg;
			break;
		case 't': g_tgt.name = optarg; break;
		case 'a': g_tgt.alias = optarg; break;
		case 'l':
			if (nlun_args == TGT_MAX_LUNS) {
				fprintf(stderr, "too many LUNs\n");
				return 2;
			}
			lun_args[nlun_args++] = optarg;
			break;
		case 'b': bs = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'P': providers = optarg; break;
		case 'F': port_file = optarg; break;
		case 'C': {
			char *colon = strchr(optarg, ':');
			if (!colon || colon == optarg || !colon[1]) {
				fprintf(stderr, "--chap needs USER:SECRET\n");
				return 2;
			}
			*colon = '\0';
			g_tgt.chap_user = optarg;
			g_tgt.chap_secret = colon + 1;
			break;
		}
		case 'k':
			if (!strchr(optarg, '=') ||
			    g_tgt.nkey_overrides == (int)(sizeof(g_tgt.key_overrides) / sizeof(g_tgt.key_overrides[0]))) {
				fprintf(stderr, "bad or too many --key options\n");
				return 2;
			}
			g_tgt.key_overrides[g_tgt.nkey_overrides++] = optarg;
			break;
		case 'v': verbosity++; break;
		case 'q': verbosity = verbosity > IDM_LOG_ERROR ? verbosity - 1 : IDM_LOG_ERROR; break;
		case 'h': usage(stdout, argv[0]); return 0;
		default: usage(stderr, argv[0]); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
		usage(stderr, argv[0]);
		return 2;
	}
	if (verbosity > IDM_LOG_DEBUG)
		verbosity = IDM_LOG_DEBUG;
	ex_log_init(argv[0], verbosity);
	if (bs != 512 && bs != 4096) {
		ex_err("block size must be 512 or 4096");
		return 2;
	}
	if (strlen(g_tgt.name) > 223) {
		ex_err("target name longer than 223 bytes");
		return 2;
	}
	if (!nportals)
		portals[nportals++] = "0.0.0.0:3260";
	if (!nlun_args) {
		ex_err("no LUN given (use --lun ram:64M or --lun file:PATH)");
		return 2;
	}
	for (int i = 0, next = 1; i < nlun_args; i++) {
		int id = add_lun(lun_args[i], next, bs);
		if (id < 0)
			goto out;
		next = id + 1;
	}

	struct idm_ctx_attr ca = {
		.size = sizeof(ca),
		.log_fn = ex_log_idm_sink,
		.log_level = verbosity,
	};
	int r = idm_ctx_create(&ca, &g_tgt.ctx);
	if (r < 0) {
		ex_err("idm_ctx_create: %s", idm_strerror(r));
		goto out;
	}
	if (idm_get_providers(g_tgt.ctx, &prov, &nprov) == 0)
		for (size_t i = 0; i < nprov; i++) {
			g_tgt.caps |= prov[i].caps;
			ex_info("provider %s: %s", prov[i].name, prov[i].path);
		}
	for (int i = 0; i < g_tgt.nluns; i++) {
		r = lun_attach_ctx(g_tgt.luns[i], g_tgt.ctx);
		if (r < 0) {
			ex_err("LUN %d: idm_buf_create: %s", g_tgt.luns[i]->id, idm_strerror(r));
			goto out;
		}
		ex_info("LUN %d: %s, %llu blocks of %u bytes", g_tgt.luns[i]->id,
			g_tgt.luns[i]->spec, (unsigned long long)g_tgt.luns[i]->nblocks, bs);
	}

	for (int i = 0; i < nportals; i++) {
		char host[256], port[16];
		struct idm_portal_attr pa = {
			.size = sizeof(pa),
			.providers = providers,
			.accept = conn_accept,
		};
		if (split_portal(portals[i], host, sizeof(host), port, sizeof(port)) < 0) {
			ex_err("bad portal '%s'", portals[i]);
			goto out;
		}
		r = idm_portal_create(g_tgt.ctx, host, port, &pa, &portal[i]);
		if (r < 0) {
			ex_err("cannot listen on %s (%s): %s", portals[i], providers, idm_strerror(r));
			goto out;
		}
		ex_info("listening on %s:%d (%s), target %s", host, idm_portal_port(portal[i]),
			providers, g_tgt.name);
	}
	if (port_file) {
		FILE *f = fopen(port_file, "w");
		if (!f || fprintf(f, "%d\n", idm_portal_port(portal[0])) < 0 || fclose(f)) {
			ex_err("cannot write %s", port_file);
			goto out;
		}
	}

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	while (!stop) {
		r = idm_ctx_progress(g_tgt.ctx, 100);
		if (r < 0 && r != -EINTR) {
			ex_err("idm_ctx_progress: %s", idm_strerror(r));
			goto out;
		}
		conn_reap();
		session_timers();
	}
	ex_info("shutting down");
	rc = 0;
out:
	for (int i = 0; i < nportals; i++)
		if (portal[i])
			idm_portal_destroy(portal[i]);
	if (g_tgt.ctx) {
		conn_destroy_all();
		pool_destroy();
		for (int i = 0; i < g_tgt.nluns; i++) {
			if (g_tgt.luns[i]->ib)
				idm_buf_destroy(g_tgt.luns[i]->ib);
			g_tgt.luns[i]->ib = NULL;
		}
		idm_ctx_destroy(g_tgt.ctx);
	}
	for (int i = 0; i < g_tgt.nluns; i++)
		lun_close(g_tgt.luns[i]);
	return rc;
}
