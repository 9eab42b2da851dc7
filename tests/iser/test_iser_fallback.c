/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The "auto" provider of idm_conn_connect(): iSER first, TCP when there is
 * no RDMA path or the target rejects the iSER Service ID. Each case logs in
 * and moves verified data, then checks which provider both ends are on.
 *
 * Check case "rdma" (suite 'rdma', in the soft-RoCE guest, $IDM_RDMA_IP):
 * a portal listening on TCP only (the CM REJects the iSER REQ: fallback to
 * TCP) and one listening on both (iSER wins). Case "host" (suite 'tcp', the
 * build host, where no RDMA device exists): "auto" to 127.0.0.1 is TCP.
 */
#include <check.h>
#include "check_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iser_pair.h"
#include "rdma_env.h"

static const char *rdma_ip;

/* A connect that falls back must not wait for a CM timeout: the REJ
 * comes at once. Generous for TCG. */
#define CONNECT_BOUND_MS 30000

static void auto_run(const char *ip, const char *portal, const char *want)
{
	struct pair p;
	struct p_keys k;
	double t0;

	p_keys_default(&k);
	ck_assert_msg(p_init_with(&p, ip, 1024 * 1024, portal) == 0, "%s",
		      p.err);
	p.ini_provider = "auto";
	p.expect_provider = want;
	t0 = p_now();
	ck_assert_msg(p_login(&p, &k, CONNECT_BOUND_MS) == 0,
		      "auto -> portal %s at %s: %s", portal, ip, p.err);
	printf("auto -> portal \"%s\" at %s: %s/%s, logged in after %.2f s\n",
	       portal, ip, idm_conn_provider(p.ic), idm_conn_provider(p.tc),
	       p_now() - t0);
	ck_assert_str_eq(idm_conn_provider(p.ic), want);
	ck_assert_ptr_nonnull(p.tc);
	ck_assert_str_eq(idm_conn_provider(p.tc), want);
	ck_assert_msg(p_write_read_verify(&p, 100000, 11) == 0, "%s", p.err);
	ck_assert_msg(p_write_read_verify(&p, 1024 * 1024, 12) == 0, "%s",
		      p.err);
	ck_assert_int_eq(p.i_terminated + p.t_terminated, 0);
	p_fini(&p);
}

START_TEST(auto_tcp_only_portal)
{
	auto_run(rdma_ip, "tcp", "tcp");
}
END_TEST

START_TEST(auto_both_portal)
{
	auto_run(rdma_ip, "tcp,iser", "iser");
}
END_TEST

START_TEST(auto_no_rdma_device)
{
	const struct idm_provider_info *list;
	size_t n = 0;
	idm_ctx *ctx;

	/* for the log: iSER may be listed; without a device it declines
	 * every address (conn_is_capable) and "auto" moves on to TCP */
	ck_assert_int_eq(idm_ctx_create(NULL, &ctx), 0);
	ck_assert_int_ge(idm_get_providers(ctx, &list, &n), 0);
	printf("providers on this host:");
	for (size_t i = 0; i < n; i++)
		printf(" %s", list[i].name);
	printf("\n");
	idm_ctx_destroy(ctx);
	auto_run("127.0.0.1", "tcp", "tcp");
}
END_TEST

int main(void)
{
	const char *only = getenv("CK_RUN_CASE");
	Suite *s;
	TCase *tc;

	s = suite_create("iser_fallback");
	if (!only || strcmp(only, "host")) {
		rdma_ip = rdma_test_ip(); /* exits 77 without a device */
		tc = tcase_create("rdma");
		tcase_set_timeout(tc, 300);
		tcase_add_test(tc, auto_tcp_only_portal);
		tcase_add_test(tc, auto_both_portal);
		suite_add_tcase(s, tc);
	}
	tc = tcase_create("host");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, auto_no_rdma_device);
	suite_add_tcase(s, tc);
	return test_suite_run(s);
}
