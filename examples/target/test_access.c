/* SPDX-License-Identifier: BSD-2-Clause */
/* Unit tests of who may log in (access.c): which addresses are loopback,
 * and the decision for each policy, without a connection. */
#include <check.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "access.h"
#include "target.h"

struct target g_tgt;

/* A request from the numeric address `ip` (IPv4 or IPv6). */
static struct access_request from(const char *ip)
{
	struct access_request rq = { .iname = "iqn.2026-11.org.libidm:unit", .target = "t" };

	if (strchr(ip, ':')) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&rq.addr;

		in6->sin6_family = AF_INET6;
		ck_assert_int_eq(inet_pton(AF_INET6, ip, &in6->sin6_addr), 1);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)&rq.addr;

		in->sin_family = AF_INET;
		ck_assert_int_eq(inet_pton(AF_INET, ip, &in->sin_addr), 1);
	}
	return rq;
}

static bool loopback(const char *ip)
{
	struct access_request rq = from(ip);

	return access_addr_is_loopback(&rq.addr);
}

static void reset(void)
{
	memset(&g_tgt, 0, sizeof(g_tgt));
}

START_TEST(loopback_addresses)
{
	static const char *const yes[] = {
		"127.0.0.1", "127.0.2.6", "127.255.255.254", "::1",
		"::ffff:127.0.0.1", "::ffff:127.1.2.3",
	};
	static const char *const no[] = {
		"128.0.0.1", "126.255.255.255", "10.0.0.1", "0.0.0.0", "192.0.2.1",
		"::", "::2", "fe80::1", "::ffff:10.0.0.1", "::ffff:128.0.0.1",
		"::127.0.0.1", /* IPv4-compatible (deprecated), not mapped */
		"64:ff9b::7f00:1", /* NAT64 of 127.0.0.1: another host */
	};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ck_assert_msg(loopback(yes[i]), "%s is loopback", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert_msg(!loopback(no[i]), "%s is not loopback", no[i]);
}
END_TEST

START_TEST(unknown_family_not_trusted)
{
	struct access_request rq = { .iname = "i", .target = "t" };
	struct sockaddr_un *un = (struct sockaddr_un *)&rq.addr;
	char why[512];

	reset();
	ck_assert(!access_addr_is_loopback(&rq.addr)); /* family 0: unknown */
	ck_assert_int_eq(access_check(&rq, why, sizeof(why)), -EACCES);
	ck_assert_ptr_nonnull(strstr(why, "from an unknown address"));
	un->sun_family = AF_UNIX;
	ck_assert(!access_addr_is_loopback(&rq.addr));
	ck_assert_int_eq(access_check(&rq, why, sizeof(why)), -EACCES);
}
END_TEST

START_TEST(default_is_loopback_only)
{
	struct access_request lo = from("::ffff:127.0.0.1"), far = from("192.0.2.7");
	char why[512] = "";

	reset();
	ck_assert_int_eq(access_check(&lo, why, sizeof(why)), 0);
	ck_assert_int_eq(access_check(&far, why, sizeof(why)), -EACCES);
	/* one line: who, from where, and how to open the target */
	ck_assert_str_eq(why, "iqn.2026-11.org.libidm:unit from 192.0.2.7: without CHAP or "
			      "allow-all only loopback initiators may log in; to serve others "
			      "require CHAP (--credentials FILE) or set allow-all (--allow-all, "
			      "or allow-all = yes in the config file)");
	ck_assert_ptr_null(strchr(why, '\n'));
	/* a short buffer truncates, never overflows */
	ck_assert_int_eq(access_check(&far, why, 8), -EACCES);
	ck_assert_uint_eq(strlen(why), 7);
}
END_TEST

START_TEST(chap_or_allow_all_open_it)
{
	struct access_request far = from("2001:db8::7");
	char why[512];

	reset();
	g_tgt.chap_user = "alice"; /* login.c makes every login authenticate */
	g_tgt.chap_secret = "secret";
	ck_assert_int_eq(access_check(&far, why, sizeof(why)), 0);
	reset();
	g_tgt.allow_all = true;
	ck_assert_int_eq(access_check(&far, why, sizeof(why)), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("target_access");
	TCase *tc = tcase_create("all");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, loopback_addresses);
	tcase_add_test(tc, unknown_family_not_trusted);
	tcase_add_test(tc, default_is_loopback_only);
	tcase_add_test(tc, chap_or_allow_all_open_it);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
