/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of idm-initiator's pure parts: the latency histogram behind
 * the p50/p99/p99.9 columns, and command-line parsing (flags, sizes, the
 * libiscsi-style URL, provider from the scheme).
 */
#include "initiator.h"

#include <check.h>
#include "check_suite.h"
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* main.c is not linked in: it owns this flag. */
volatile sig_atomic_t ini_interrupted;

START_TEST(hist_exact_small)
{
	struct ini_hist h;

	ini_hist_init(&h);
	for (uint64_t v = 1; v <= 20; v++)
		ini_hist_add(&h, v);
	ck_assert_uint_eq(h.count, 20);
	ck_assert_uint_eq(h.min_ns, 1);
	ck_assert_uint_eq(h.max_ns, 20);
	ck_assert_uint_eq(ini_hist_pct(&h, 50), 10);
	ck_assert_uint_eq(ini_hist_pct(&h, 100), 20);
}
END_TEST

/* Uniform 1..100000 ns: every percentile within the 1/32 bucket width. */
START_TEST(hist_percentiles_accuracy)
{
	static const double pcts[] = { 50, 90, 99, 99.9 };
	struct ini_hist h;

	ini_hist_init(&h);
	for (uint64_t v = 1; v <= 100000; v++)
		ini_hist_add(&h, v);
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		double want = pcts[i] * 1000.0;
		double got = (double)ini_hist_pct(&h, pcts[i]);

		ck_assert_msg(got > want * 0.96 && got < want * 1.04,
			      "p%.1f: got %.0f want %.0f", pcts[i], got, want);
	}
}
END_TEST

START_TEST(hist_extremes)
{
	struct ini_hist h;

	ini_hist_init(&h);
	ck_assert_uint_eq(ini_hist_pct(&h, 99), 0); /* empty */
	ini_hist_add(&h, UINT64_MAX);
	ini_hist_add(&h, 0);
	ck_assert_uint_eq(h.count, 2);
	ck_assert_uint_eq(ini_hist_pct(&h, 100), UINT64_MAX);
	ck_assert_uint_eq(ini_hist_pct(&h, 1), 0);
}
END_TEST

/* One outlier in 1000 shows at p99.9, not at p99. */
START_TEST(hist_tail)
{
	struct ini_hist h;

	ini_hist_init(&h);
	for (int i = 0; i < 999; i++)
		ini_hist_add(&h, 50000);
	ini_hist_add(&h, 5000000);
	ck_assert_uint_lt(ini_hist_pct(&h, 99), 52000);
	ck_assert_uint_gt(ini_hist_pct(&h, 99.95), 4800000);
}
END_TEST

static int parse(struct ini_opts *o, const char *const *args)
{
	char *argv[32];
	int argc = 0;

	argv[argc++] = (char *)"idm-initiator";
	while (*args && argc < 31)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	optind = 0; /* reset getopt between calls (glibc) */
	opterr = 0;
	return ini_opts_parse(o, argc, argv);
}

START_TEST(opts_defaults_and_url)
{
	static const char *const args[] = {
		"iscsi://127.0.0.1:3261/iqn.2026-11.x:t/3", NULL
	};
	struct ini_opts o;

	ck_assert_int_eq(parse(&o, args), 0);
	/* no --provider: the one serving the scheme, asked of libidm later */
	ck_assert_ptr_null(o.provider);
	ck_assert_str_eq(o.portal.scheme, "iscsi");
	ck_assert_str_eq(o.portal.host, "127.0.0.1");
	ck_assert_str_eq(o.portal.port, "3261");
	ck_assert_str_eq(o.portal.target, "iqn.2026-11.x:t");
	ck_assert_int_eq(o.portal.lun, 3);
	ck_assert_int_eq(o.immediate_data, INI_DEFAULT);
	ck_assert_int_eq(o.header_digest, INI_DEFAULT);
	ck_assert_uint_eq(o.bs, 4096);
	ck_assert_uint_eq(o.qd, 16);
	/* open-iscsi's defaults */
	ck_assert_int_eq(o.noop_interval_s, 5);
	ck_assert_int_eq(o.noop_timeout_s, 5);
	ck_assert_int_eq(o.replacement_timeout_s, 120);
}
END_TEST

START_TEST(opts_recovery)
{
	static const char *const args[] = {
		"--noop-out-interval", "0", "--noop-out-timeout", "7",
		"--replacement-timeout", "0", "iscsi://h/iqn.2026-11.x:t", NULL
	};
	struct ini_opts o;

	ck_assert_int_eq(parse(&o, args), 0);
	ck_assert_int_eq(o.noop_interval_s, 0);
	ck_assert_int_eq(o.noop_timeout_s, 7);
	ck_assert_int_eq(o.replacement_timeout_s, 0);
}
END_TEST

START_TEST(opts_iser_scheme_and_flags)
{
	static const char *const args[] = { "--immediate-data",
					    "no",
					    "--initial-r2t",
					    "yes",
					    "--first-burst",
					    "8k",
					    "--max-burst",
					    "0x10000",
					    "--max-recv-dsl",
					    "512",
					    "--header-digest",
					    "crc32c",
					    "--data-digest",
					    "none",
					    "--verify",
					    "64M",
					    "--bench",
					    "--bs",
					    "64k",
					    "--qd",
					    "32",
					    "--read-pct",
					    "70",
					    "--duration",
					    "1.5",
					    "--sessions",
					    "4",
					    "--json",
					    "iser://[::1]/iqn.2026-11.x:t",
					    NULL };
	struct ini_opts o;

	ck_assert_int_eq(parse(&o, args), 0);
	ck_assert_ptr_null(o.provider);
	ck_assert_str_eq(o.portal.scheme, "iser");
	ck_assert_str_eq(o.portal.host, "::1");
	ck_assert_str_eq(o.portal.port, "3260");
	ck_assert_int_eq(o.portal.lun, -1);
	ck_assert_int_eq(o.immediate_data, INI_NO);
	ck_assert_int_eq(o.initial_r2t, INI_YES);
	ck_assert_uint_eq(o.first_burst, 8192);
	ck_assert_uint_eq(o.max_burst, 65536);
	ck_assert_uint_eq(o.max_recv_dsl, 512);
	ck_assert_int_eq(o.header_digest, INI_YES);
	ck_assert_int_eq(o.data_digest, INI_NO);
	ck_assert_uint_eq(o.verify_size, 64ull << 20);
	ck_assert(o.bench && o.json);
	ck_assert_uint_eq(o.bs, 65536);
	ck_assert_uint_eq(o.qd, 32);
	ck_assert_int_eq(o.read_pct, 70);
	ck_assert(o.duration > 1.49 && o.duration < 1.51);
	ck_assert_int_eq(o.sessions, 4);
}
END_TEST

START_TEST(opts_rejects)
{
	static const char *const bad[][4] = {
		{ "ftp:/host/x", NULL },
		{ "--first-burst", "100", "iscsi://h", NULL }, /* < 512 */
		{ "--max-burst", "32m", "iscsi://h", NULL },   /* > 2^24-1 */
		{ "--header-digest", "md5", "iscsi://h", NULL },
		{ "--immediate-data", "maybe", "iscsi://h", NULL },
		{ "--qd", "0", "iscsi://h", NULL },
		{ "--read-pct", "101", "iscsi://h", NULL },
		{ "--bs", "12q", "iscsi://h", NULL },
		{ "--no-discovery", "iscsi://h", NULL }, /* needs a target */
		{ "iscsi://h", "iscsi://h2", NULL },	 /* two URLs */
		{ "--provider", "Rdma", "iscsi://h", NULL },   /* not a name */
		{ "--provider", "", "iscsi://h", NULL },
		{ "--iser-hello", "maybe", "iscsi://h", NULL },
		{ "--target-recv-dsl", "100", "iscsi://h", NULL },
		{ "--verify-io", "512,x", "iscsi://h", NULL },
		{ "--noop-out-timeout", "0", "iscsi://h", NULL },
		{ "--noop-out-interval", "x", "iscsi://h", NULL },
		{ "--replacement-timeout", "100000", "iscsi://h", NULL },
	};
	struct ini_opts o;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(parse(&o, bad[i]) < 0, "case %zu accepted", i);
}
END_TEST

START_TEST(opts_iser_keys)
{
	static const char *const args[] = { "--initiator-recv-dsl", "512",
					    "--tagged-buffer-solicited-only",
					    "yes", "--iser-hello", "no",
					    "--verify-io", "512,4608,1m",
					    "iser://h/iqn.x:t", NULL };
	static const char *const dsl[] = { "--max-recv-dsl", "64k",
					   "iser://h", NULL };
	struct ini_opts o;

	ck_assert_int_eq(parse(&o, args), 0);
	ck_assert_uint_eq(ini_opts_local_dsl(&o, true), 512);
	ck_assert_uint_eq(ini_opts_local_dsl(&o, false), 262144);
	ck_assert_uint_eq(ini_opts_target_dsl(&o), 8192); /* iSER default */
	ck_assert_int_eq(o.tagged_solicited, INI_YES);
	ck_assert_int_eq(o.iser_hello, INI_NO);
	ck_assert_int_eq(o.nverify_io, 3);
	ck_assert_uint_eq(o.verify_ios[1], 4608);
	ck_assert_uint_eq(o.verify_io, 1048576); /* the largest */
	/* an explicit --max-recv-dsl still sets both iSER offers */
	ck_assert_int_eq(parse(&o, dsl), 0);
	ck_assert_uint_eq(ini_opts_local_dsl(&o, true), 65536);
	ck_assert_uint_eq(ini_opts_target_dsl(&o), 65536);
}
END_TEST

START_TEST(opts_help)
{
	static const char *const args[] = { "--help", NULL };
	struct ini_opts o;

	ck_assert_int_eq(parse(&o, args), 1);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { hist_exact_small,
				       hist_percentiles_accuracy,
				       hist_extremes,
				       hist_tail,
				       opts_defaults_and_url,
				       opts_iser_scheme_and_flags,
				       opts_iser_keys,
				       opts_rejects,
				       opts_recovery,
				       opts_help,
				       NULL };

	return test_suite_run_case("idm-initiator", "pure", 0, tests);
}
