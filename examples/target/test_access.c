/* SPDX-License-Identifier: BSD-2-Clause */
/* Unit tests of who may log in (access.c): which addresses are loopback,
 * the decision for each policy, and initiator ACL rules (parsing,
 * matching by name and address, LUN sets), without a connection. */
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
	access_acl_install(NULL);
}

/* Put `rules` in force (each must parse). */
static void rules(const char *const *r, int n)
{
	struct access_acl *a = access_acl_new();
	char why[512];

	ck_assert_ptr_nonnull(a);
	for (int i = 0; i < n; i++)
		ck_assert_msg(access_acl_add(a, r[i], why, sizeof(why)) == 0, "%s: %s", r[i], why);
	access_acl_install(a);
}
#define RULES(...) do { \
		static const char *const r_[] = { __VA_ARGS__ }; \
		rules(r_, (int)(sizeof(r_) / sizeof(r_[0]))); \
	} while (0)

/* The decision for `iname` from `ip` under the rules in force. */
static int decide(const char *iname, const char *ip, struct access_luns *l)
{
	struct access_request rq = from(ip);
	char why[512];

	rq.iname = iname;
	return access_decide(&rq, l, why, sizeof(why));
}

static bool lun_in(const struct access_luns *l, unsigned id)
{
	return l->all || ((l->mask[id / 64] >> (id % 64)) & 1);
}

#define H1 "iqn.1994-05.com.example:host1"
#define H2 "iqn.1994-05.com.example:host2"

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

START_TEST(acl_rules_parse)
{
	static const char *const good[] = {
		"* *", H1 " *", "* 10.9.0.0/24", H1 " 10.9.0.7", "* 10.9.0.7/32",
		"* 0.0.0.0/0", "* fd00::/64", "* [fd00::]/64", "* [fd00::1]", "* ::/0",
		"* ::1/128", "* ::ffff:10.0.0.0/104", "IQN.1994-05.COM.EXAMPLE:X 127.0.0.1",
		"eui.02004567A425678D *", "naa.52004567BA64678D *",
		"naa.6001405c0a1b2c3d4e5f60718293a4b5 *",
		H1 " * luns=0", H1 "\t10.0.0.0/8   luns=0,2,4-7,16383",
		"  * *  ",
	};
	static const char *const bad[] = {
		"", "*", H1, "* * * ", "* * luns=", "* * luns=1,", "* * luns=,1",
		"* * luns=a", "* * luns=16384", "* * luns=3-1", "* * luns=1-", "* * luns=-1",
		"* * lun=1", "* * luns=1 extra", "host1 *", "iqn. *", "eui.0200 *",
		"naa.12345 *", "* 10.9.0.0/33", "* 10.9.0.1/24", "* 10.9.0/24",
		"* 10.9.0.0/", "* 10.9.0.0/-1", "* 10.9.0.0/+8", "* 10.9.0.0/0024",
		"* fd00::/129", "* fd00::1/64", "* [10.0.0.1]", "* [fd00::", "* [fd00::]x",
		"* fe80::1%eth0", "* fd00:::1", "* 256.0.0.1", "* host.example.com",
		"* 10.9.0.0/24/8",
	};
	char why[512];
	struct access_acl *a = access_acl_new();

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(access_acl_add(a, good[i], why, sizeof(why)) == 0, "'%s': %s",
			      good[i], why);
	ck_assert_int_eq(access_acl_count(a), (int)(sizeof(good) / sizeof(good[0])));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		ck_assert_msg(access_acl_add(a, bad[i], why, sizeof(why)) == -EINVAL,
			      "'%s' refused", bad[i]);
		ck_assert_msg(why[0] && !strchr(why, '\n'), "'%s': one line why", bad[i]);
	}
	/* nothing refused was added */
	ck_assert_int_eq(access_acl_count(a), (int)(sizeof(good) / sizeof(good[0])));
	/* host bits: the message names the network */
	access_acl_add(a, "* 10.9.0.1/24", why, sizeof(why));
	ck_assert_ptr_nonnull(strstr(why, "the network is 10.9.0.0/24"));
	access_acl_add(a, "* fd00::1/64", why, sizeof(why));
	ck_assert_ptr_nonnull(strstr(why, "the network is fd00::/64"));
	access_acl_free(a);
}
END_TEST

START_TEST(acl_rules_bounded)
{
	struct access_acl *a = access_acl_new();
	char why[512];

	for (int i = 0; i < ACCESS_MAX_RULES; i++)
		ck_assert_int_eq(access_acl_add(a, "* *", why, sizeof(why)), 0);
	ck_assert_int_eq(access_acl_add(a, "* *", why, sizeof(why)), -E2BIG);
	ck_assert_ptr_nonnull(strstr(why, "max 256"));
	access_acl_free(a);
	access_acl_free(NULL);
	ck_assert_int_eq(access_acl_count(NULL), 0);
}
END_TEST

START_TEST(acl_by_name)
{
	reset();
	RULES(H1 " *");
	ck_assert_int_eq(decide(H1, "192.0.2.1", NULL), 0);
	ck_assert_int_eq(decide("IQN.1994-05.com.EXAMPLE:HOST1", "2001:db8::1", NULL), 0);
	ck_assert_int_eq(decide(H2, "192.0.2.1", NULL), -EACCES);
	ck_assert_int_eq(decide(H1 "x", "192.0.2.1", NULL), -EACCES);
	/* loopback is not special once there are rules */
	ck_assert_int_eq(decide(H2, "127.0.0.1", NULL), -EACCES);
	ck_assert_int_eq(decide(H2, "::1", NULL), -EACCES);
	/* CHAP does not open what the rules close */
	g_tgt.chap_user = "alice";
	ck_assert_int_eq(decide(H2, "192.0.2.1", NULL), -EACCES);
	reset();
}
END_TEST

START_TEST(acl_by_address)
{
	struct access_request rq = from("10.9.0.1");
	struct sockaddr_un *un = (struct sockaddr_un *)&rq.addr;
	char why[512];

	reset();
	RULES("* 10.9.0.0/24");
	ck_assert_int_eq(decide(H1, "10.9.0.1", NULL), 0);
	ck_assert_int_eq(decide(H2, "10.9.0.255", NULL), 0);
	ck_assert_int_eq(decide(H1, "::ffff:10.9.0.77", NULL), 0); /* mapped: an IPv4 peer */
	ck_assert_int_eq(decide(H1, "10.9.1.1", NULL), -EACCES);
	ck_assert_int_eq(decide(H1, "10.8.255.255", NULL), -EACCES);
	ck_assert_int_eq(decide(H1, "::ffff:10.9.1.1", NULL), -EACCES);
	ck_assert_int_eq(decide(H1, "::a09:1", NULL), -EACCES); /* compatible, not mapped */
	ck_assert_int_eq(decide(H1, "127.0.0.1", NULL), -EACCES);
	/* the refusal names who, from where, and how to open */
	rq = from("10.9.1.1");
	ck_assert_int_eq(access_check(&rq, why, sizeof(why)), -EACCES);
	ck_assert_str_eq(why, "iqn.2026-11.org.libidm:unit from 10.9.1.1: no initiator ACL "
			      "rule allows it; to serve it add one (--acl, or acl = NAME "
			      "ADDRESS in the config file)");
	/* an unknown address matches only * */
	memset(&rq.addr, 0, sizeof(rq.addr));
	un->sun_family = AF_UNIX;
	ck_assert_int_eq(access_check(&rq, why, sizeof(why)), -EACCES);
	RULES("* *");
	ck_assert_int_eq(access_check(&rq, why, sizeof(why)), 0);

	RULES("* 10.9.0.7/32");
	ck_assert_int_eq(decide(H1, "10.9.0.7", NULL), 0);
	ck_assert_int_eq(decide(H1, "10.9.0.6", NULL), -EACCES);
	RULES("* 10.9.0.7"); /* no prefix: one address */
	ck_assert_int_eq(decide(H1, "::ffff:10.9.0.7", NULL), 0);
	ck_assert_int_eq(decide(H1, "10.9.0.8", NULL), -EACCES);
	RULES("* 0.0.0.0/0"); /* every IPv4 peer, no IPv6 one */
	ck_assert_int_eq(decide(H1, "203.0.113.9", NULL), 0);
	ck_assert_int_eq(decide(H1, "::ffff:198.51.100.1", NULL), 0);
	ck_assert_int_eq(decide(H1, "2001:db8::1", NULL), -EACCES);
	ck_assert_int_eq(decide(H1, "::1", NULL), -EACCES);
	RULES("* ::/0"); /* every IPv6 address, IPv4 ones as mapped */
	ck_assert_int_eq(decide(H1, "2001:db8::1", NULL), 0);
	ck_assert_int_eq(decide(H1, "10.0.0.1", NULL), 0);
	RULES("* fd00::/64");
	ck_assert_int_eq(decide(H1, "fd00::1", NULL), 0);
	ck_assert_int_eq(decide(H1, "fd00::ffff:ffff:ffff:ffff", NULL), 0);
	ck_assert_int_eq(decide(H1, "fd00:0:0:1::1", NULL), -EACCES);
	ck_assert_int_eq(decide(H1, "10.0.0.1", NULL), -EACCES);
	RULES("* [fd00::5]");
	ck_assert_int_eq(decide(H1, "fd00::5", NULL), 0);
	ck_assert_int_eq(decide(H1, "fd00::4", NULL), -EACCES);
	RULES("* ::1/128");
	ck_assert_int_eq(decide(H1, "::1", NULL), 0);
	ck_assert_int_eq(decide(H1, "127.0.0.1", NULL), -EACCES);
	RULES("* ::ffff:10.0.0.0/104"); /* an IPv4 prefix written mapped */
	ck_assert_int_eq(decide(H1, "10.1.2.3", NULL), 0);
	ck_assert_int_eq(decide(H1, "11.1.2.3", NULL), -EACCES);
	RULES("* fc00::/7"); /* a prefix not on a byte boundary */
	ck_assert_int_eq(decide(H1, "fc00::1", NULL), 0);
	ck_assert_int_eq(decide(H1, "fdff::1", NULL), 0);
	ck_assert_int_eq(decide(H1, "fe00::1", NULL), -EACCES);
	RULES("* 10.9.0.128/25");
	ck_assert_int_eq(decide(H1, "10.9.0.200", NULL), 0);
	ck_assert_int_eq(decide(H1, "10.9.0.127", NULL), -EACCES);
	/* both must match in one rule */
	RULES(H1 " 10.9.0.0/24", H2 " 10.10.0.0/24");
	ck_assert_int_eq(decide(H1, "10.9.0.1", NULL), 0);
	ck_assert_int_eq(decide(H2, "10.10.0.1", NULL), 0);
	ck_assert_int_eq(decide(H1, "10.10.0.1", NULL), -EACCES);
	ck_assert_int_eq(decide(H2, "10.9.0.1", NULL), -EACCES);
	reset();
}
END_TEST

START_TEST(acl_luns)
{
	struct access_luns l;

	reset();
	RULES(H1 " 10.9.0.0/24 luns=0,2", H1 " 10.9.0.5 luns=4-6", H2 " * luns=16383",
	      "* 10.10.0.0/16");
	ck_assert_int_eq(decide(H1, "10.9.0.1", &l), 0);
	ck_assert(!l.all);
	ck_assert(lun_in(&l, 0) && lun_in(&l, 2));
	ck_assert(!lun_in(&l, 1) && !lun_in(&l, 3) && !lun_in(&l, 4) && !lun_in(&l, 64));
	/* every matching rule adds its LUNs */
	ck_assert_int_eq(decide(H1, "10.9.0.5", &l), 0);
	ck_assert(lun_in(&l, 0) && lun_in(&l, 2) && lun_in(&l, 4) && lun_in(&l, 5) &&
		  lun_in(&l, 6));
	ck_assert(!lun_in(&l, 7) && !lun_in(&l, 1));
	ck_assert_int_eq(decide(H2, "192.0.2.1", &l), 0);
	ck_assert(!l.all && lun_in(&l, 16383) && !lun_in(&l, 0));
	/* a matching rule without luns= grants every LUN */
	ck_assert_int_eq(decide(H2, "10.10.3.4", &l), 0);
	ck_assert(l.all);
	ck_assert_int_eq(decide(H1, "10.11.0.1", &l), -EACCES);
	/* without rules: every LUN */
	reset();
	ck_assert_int_eq(decide(H1, "127.0.0.1", &l), 0);
	ck_assert(l.all);
}
END_TEST

START_TEST(acl_generation)
{
	unsigned g;

	reset();
	g = access_generation();
	RULES("* *");
	ck_assert_uint_ne(access_generation(), g);
	g = access_generation();
	/* an empty set is no ACL: the default policy is back */
	access_acl_install(access_acl_new());
	ck_assert_uint_ne(access_generation(), g);
	ck_assert_int_eq(decide(H1, "192.0.2.1", NULL), -EACCES);
	ck_assert_int_eq(decide(H1, "127.0.0.1", NULL), 0);
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
	tcase_add_test(tc, acl_rules_parse);
	tcase_add_test(tc, acl_rules_bounded);
	tcase_add_test(tc, acl_by_name);
	tcase_add_test(tc, acl_by_address);
	tcase_add_test(tc, acl_luns);
	tcase_add_test(tc, acl_generation);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
