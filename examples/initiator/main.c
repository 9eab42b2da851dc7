/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm-initiator: discovery, login, target/LUN listing, optional verified
 * write/read-back and benchmark, then Logout. See doc/idm-initiator.md.
 */
#include "initiator.h"

#include "ex_log.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

volatile sig_atomic_t ini_interrupted;

static void on_signal(int sig)
{
	(void)sig;
	ini_interrupted = 1;
}

static void print_session(const struct ini_session *s)
{
	const struct ex_params *p = &s->params;

	printf("Session: target %s at %s:%s via %s, TSIH 0x%04x\n", s->target,
	       s->o->portal.host, s->o->portal.port, idm_conn_provider(s->conn),
	       s->tsih);
	printf("Negotiated: HeaderDigest=%s DataDigest=%s ImmediateData=%s "
	       "InitialR2T=%s FirstBurstLength=%u MaxBurstLength=%u "
	       "MaxOutstandingR2T=%u MaxRecvDataSegmentLength=%u/%u",
	       p->header_digest ? "CRC32C" : "None",
	       p->data_digest ? "CRC32C" : "None",
	       p->immediate_data ? "Yes" : "No", p->initial_r2t ? "Yes" : "No",
	       p->first_burst, p->max_burst, p->max_outstanding_r2t,
	       p->ini_dsl, p->tgt_dsl);
	if (p->rdma)
		printf(" RDMAExtensions=Yes InitiatorRecvDataSegmentLength=%u "
		       "TargetRecvDataSegmentLength=%u "
		       "TaggedBufferForSolicitedDataOnly=%s iSERHelloRequired=%s",
		       p->ini_dsl, p->tgt_dsl,
		       p->tagged_solicited ? "Yes" : "No",
		       p->iser_hello ? "Yes" : "No");
	printf("\n");
}

/* The normal session: listing, then --verify. Returns 0 or -errno. */
static int normal_session(const struct ini_opts *o, idm_ctx *ctx,
			  const char *target, struct ini_lun_info *li)
{
	struct ini_session s;
	int lun = o->portal.lun;
	int rc;

	rc = ini_session_init(&s, o, ctx, 0, o->qd);
	if (rc == 0)
		rc = ini_session_connect(&s);
	if (rc == 0)
		rc = ini_session_login(&s, false, target);
	if (rc < 0) {
		ex_err("login to %s failed: %s", target,
		       s.why[0] ? s.why : idm_strerror(rc));
		if (!ini_fail_cause[0] && s.why[0])
			snprintf(ini_fail_cause, sizeof(ini_fail_cause), "%s",
				 s.why);
		ini_session_fini(&s);
		return rc;
	}
	if (!o->quiet)
		print_session(&s);
	rc = ini_probe_lun(&s, &lun, li);
	if (rc == 0 && o->verify_size)
		rc = ini_verify(&s, li);
	if (s.state == INI_S_FFP) {
		int lrc = ini_session_logout(&s);

		if (lrc < 0 && rc == 0)
			ex_warn("logout: %s", idm_strerror(lrc));
	}
	ini_session_fini(&s);
	return rc;
}

/*
 * No --provider: the URL's scheme picks it, as the providers declare
 * (iscsi:// TCP, iser:// iSER, or whatever scheme an added provider
 * serves), so that this program names no provider for a URL. When none
 * serves it, libidm says why ("provider iser not usable here: no RDMA
 * device").
 */
static int provider_for_url(struct ini_opts *o, idm_ctx *ctx)
{
	int rc = idm_provider_for_scheme(ctx, o->portal.scheme, &o->provider);

	if (rc < 0)
		ex_err("%s://%s:%s: %s", o->portal.scheme, o->portal.host,
		       o->portal.port,
		       idm_last_error()[0] ? idm_last_error() : idm_strerror(rc));
	return rc;
}

/* The command line into o. -1: go on; else the exit code (after --help,
 * --version or a usage error). */
static int parse_args(struct ini_opts *o, int argc, char **argv)
{
	int rc = ini_opts_parse(o, argc, argv);

	if (rc == 1) {
		ini_usage(stdout, argv[0]);
		return 0;
	}
	if (rc == 2) {
		ex_print_version(argv[0]);
		return 0;
	}
	if (rc < 0) {
		fprintf(stderr, "Try '%s --help'.\n", argv[0]);
		return 2;
	}
	return -1;
}

static void setup_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	/* a peer closing mid-write must not kill us; libidm reports EPIPE */
	signal(SIGPIPE, SIG_IGN);
	/* Ctrl-C ends a benchmark early (with its report) or a wait */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* RFC 7145 section 6.1: a forced digest cannot be had on iSER. */
static void warn_iser_digests(const struct ini_opts *o)
{
	if (!strcmp(o->provider, "iser") &&
	    (o->header_digest == INI_YES || o->data_digest == INI_YES))
		ex_warn("digests are always None on iSER (RFC 7145 section "
			"6.1)");
}

/* Discovery (unless skipped), the normal session, the benchmark. */
static int run(const struct ini_opts *o, idm_ctx *ctx)
{
	struct ini_lun_info li;
	char target[INI_MAX_NAME];
	int rc = 0;

	snprintf(target, sizeof(target), "%s", o->portal.target);
	if (!o->no_discovery)
		rc = ini_discover(o, ctx, target, sizeof(target));
	if (rc == 0)
		rc = normal_session(o, ctx, target, &li);
	if (rc == 0 && o->bench)
		rc = ini_bench(o, ctx, target, &li);
	return rc;
}

int main(int argc, char **argv)
{
	struct ini_opts o;
	struct idm_ctx_attr attr = { .size = sizeof(attr) };
	idm_ctx *ctx;
	int rc;

	rc = parse_args(&o, argc, argv);
	if (rc >= 0)
		return rc;
	ex_log_init(argv[0], o.log_level);
	if (ini_credentials_load(&o) < 0)
		return 2;
	setup_signals();
	attr.log_fn = ex_log_idm_sink;
	attr.log_level = o.log_level;
	rc = idm_ctx_create(&attr, &ctx);
	if (rc < 0) {
		ex_err("idm_ctx_create: %s", idm_strerror(rc));
		return 1;
	}
	if (!o.provider && provider_for_url(&o, ctx) < 0) {
		idm_ctx_destroy(ctx);
		return 1;
	}
	warn_iser_digests(&o);
	rc = run(&o, ctx);
	idm_ctx_destroy(ctx);
	fflush(stdout);
	if (rc < 0) {
		/* the first failure's cause, not just its errno */
		ex_err("failed: %s",
		       ini_fail_cause[0] ? ini_fail_cause : idm_strerror(rc));
		return 1;
	}
	return 0;
}
