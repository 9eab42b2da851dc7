/* SPDX-License-Identifier: BSD-2-Clause */
/* Unit tests of the example helpers: text parsing/building, key
 * negotiation result functions, portal URLs. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ex_chap.h"
#include "ex_keys.h"
#include "ex_params.h"
#include "ex_text.h"
#include "ex_url.h"

START_TEST(text_parse_pairs)
{
	char buf[64] = "A=1\0B=two\0\0\0"; /* padding NULs are skipped */
	struct ex_kv kv[4];
	int n = ex_text_parse(buf, 12, kv, 4);

	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(kv[0].key, "A");
	ck_assert_str_eq(kv[0].val, "1");
	ck_assert_str_eq(ex_text_get(kv, 2, "B"), "two");
	ck_assert_ptr_null(ex_text_get(kv, 2, "C"));
}
END_TEST

START_TEST(text_parse_bad)
{
	char a[16] = "NoEquals";
	char b[16] = "=v";
	char c[16] = "K=\0"; /* empty value is legal */
	char d[8] = "X=12345"; /* no final NUL: the byte past len is used */
	char e[32] = "A=1\0B=2\0C=3";
	struct ex_kv kv[2];

	ck_assert_int_eq(ex_text_parse(a, 8, kv, 2), -EINVAL);
	ck_assert_int_eq(ex_text_parse(b, 2, kv, 2), -EINVAL);
	ck_assert_int_eq(ex_text_parse(c, 3, kv, 2), 1);
	ck_assert_str_eq(kv[0].val, "");
	ck_assert_int_eq(ex_text_parse(d, 7, kv, 2), 1);
	ck_assert_str_eq(kv[0].val, "12345");
	ck_assert_int_eq(ex_text_parse(e, 11, kv, 2), -E2BIG);
}
END_TEST

START_TEST(text_build)
{
	char buf[12];
	struct ex_textbuf tb;

	ex_textbuf_init(&tb, buf, sizeof(buf));
	ck_assert_int_eq(ex_text_add(&tb, "A", "%d", 1), 0);
	ck_assert_int_eq(tb.len, 4);
	ck_assert_int_eq(ex_text_add(&tb, "Long", "%s", "value"), -ENOSPC);
	ck_assert_int_eq(tb.len, 4); /* nothing appended */
	ck_assert_int_eq(ex_text_add(&tb, "B", "12345"), 0);
	ck_assert_int_eq(tb.len, 12);
	ck_assert_int_eq(memcmp(buf, "A=1\0B=12345\0", 12), 0);
}
END_TEST

static const char *respond(const char *key, const char *offer, const char *mine, int *rc)
{
	static char out[64];

	*rc = ex_key_respond(ex_key_find(key), offer, mine, out, sizeof(out));
	return out;
}

START_TEST(keys_respond)
{
	int rc;

	ck_assert_str_eq(respond("MaxBurstLength", "262144", "1048576", &rc), "262144");
	ck_assert_str_eq(respond("MaxBurstLength", "16776192", "1048576", &rc), "1048576");
	ck_assert_str_eq(respond("DefaultTime2Wait", "0", "2", &rc), "2");
	ck_assert_str_eq(respond("ImmediateData", "Yes", "No", &rc), "No");
	ck_assert_str_eq(respond("InitialR2T", "No", "Yes", &rc), "Yes");
	ck_assert_str_eq(respond("InitialR2T", "No", "No", &rc), "No");
	ck_assert_str_eq(respond("HeaderDigest", "CRC32C,None", "None", &rc), "None");
	ck_assert_str_eq(respond("HeaderDigest", "None,CRC32C", "CRC32C,None", &rc), "None");
	ck_assert_str_eq(respond("DataDigest", "CRC32C", "CRC32C,None", &rc), "CRC32C");
	ck_assert_int_eq(rc, 0);
	/* malformed or out-of-range offers are answered Reject */
	ck_assert_str_eq(respond("MaxBurstLength", "100", "1048576", &rc), "Reject");
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_str_eq(respond("MaxBurstLength", "-5", "1048576", &rc), "Reject");
	ck_assert_str_eq(respond("ImmediateData", "Maybe", "Yes", &rc), "Reject");
	ck_assert_str_eq(respond("AuthMethod", "CHAP", "None", &rc), "Reject");
	ck_assert_str_eq(respond("ErrorRecoveryLevel", "0x2", "0", &rc), "0");
	ck_assert_str_eq(respond("OFMarkInt", "2048~8192", "", &rc), "Irrelevant");
	ck_assert_ptr_null(ex_key_find("X-com.example.Key"));
}
END_TEST

/* Digests on iSER (RFC 7145 6.2): both programs take their value from
 * ex_key_iser_value(), the initiator as its offer (discovery and normal
 * sessions), the target as its answer (before any --key). */
START_TEST(keys_iser_digests)
{
	const struct ex_key *hd = ex_key_find("HeaderDigest");
	const char *none = ex_key_iser_value("HeaderDigest");
	char out[64];
	int rc;

	ck_assert_str_eq(none, "None");
	ck_assert_str_eq(ex_key_iser_value("DataDigest"), "None");
	ck_assert_ptr_null(ex_key_iser_value("MaxBurstLength"));
	ck_assert_ptr_null(ex_key_iser_value("RDMAExtensions"));
	ck_assert_ptr_null(ex_key_iser_value("headerdigest"));
	/* what the initiator offers is a single None, never a list */
	ck_assert_ptr_null(strchr(none, ','));
	/* the target: a CRC32C-only offer is refused, a list gives None */
	ck_assert_str_eq(respond("HeaderDigest", "CRC32C", none, &rc), "Reject");
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_str_eq(respond("DataDigest", "CRC32C,None", none, &rc), "None");
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(respond("HeaderDigest", "None,CRC32C", none, &rc), "None");
	ck_assert_str_eq(respond("HeaderDigest", "None", none, &rc), "None");
	/* the initiator: a target answering CRC32C to None is an error */
	ck_assert_int_eq(ex_key_accept(hd, none, "CRC32C", out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(ex_key_accept(hd, none, "None", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "None");
}
END_TEST

START_TEST(keys_accept)
{
	const struct ex_key *mbl = ex_key_find("MaxBurstLength");
	const struct ex_key *hd = ex_key_find("HeaderDigest");
	const struct ex_key *id = ex_key_find("ImmediateData");
	char out[64];

	ck_assert_int_eq(ex_key_accept(mbl, "262144", "65536", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "65536");
	/* a minimum function can never answer more than was offered */
	ck_assert_int_eq(ex_key_accept(mbl, "65536", "262144", out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(ex_key_accept(hd, "CRC32C,None", "None", out, sizeof(out)), 0);
	ck_assert_int_eq(ex_key_accept(hd, "None", "CRC32C", out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(ex_key_accept(hd, "None", "NotUnderstood", out, sizeof(out)), -ENOENT);
	ck_assert_int_eq(ex_key_accept(id, "No", "Yes", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "No");
}
END_TEST

START_TEST(params_values)
{
	struct ex_params p;
	struct ex_textbuf tb;
	char kv[1024], buf[16];
	const char *bursts[] = { "FirstBurstLength=65536", "MaxBurstLength=8192" };
	char why[160];

	ex_params_default(&p);
	ck_assert_uint_eq(p.max_burst, 262144);
	ck_assert(p.initial_r2t && p.immediate_data);
	ck_assert(ex_params_apply(&p, "MaxBurstLength", "65536"));
	ck_assert(ex_params_apply(&p, "InitialR2T", "No"));
	ck_assert(ex_params_apply(&p, "HeaderDigest", "CRC32C"));
	ck_assert(!ex_params_apply(&p, "MaxBurstLength", "lots"));
	/* declarative and directional: the caller's to place */
	ck_assert(!ex_params_apply(&p, "MaxRecvDataSegmentLength", "4096"));
	ck_assert_uint_eq(p.max_burst, 65536);
	ck_assert(!p.initial_r2t && p.header_digest);
	ck_assert_str_eq(ex_params_value(&p, "MaxBurstLength", buf, sizeof(buf)), "65536");
	ck_assert_str_eq(ex_params_value(&p, "OFMarker", buf, sizeof(buf)), "No");
	ck_assert_ptr_null(ex_params_value(&p, "HeaderDigest", buf, sizeof(buf)));
	ck_assert_str_eq(ex_params_session_key(0), "MaxConnections");
	ck_assert_str_eq(ex_params_session_key(10), "ErrorRecoveryLevel");
	ck_assert_ptr_null(ex_params_session_key(11));

	ex_textbuf_init(&tb, kv, sizeof(kv));
	ck_assert_int_eq(ex_params_notice(&p, 4096, &tb), 0);
	ck_assert(memmem(kv, tb.len, "MaxBurstLength=65536", 21));
	ck_assert(memmem(kv, tb.len, "HeaderDigest=CRC32C", 20));
	ck_assert(memmem(kv, tb.len, "MaxRecvDataSegmentLength=4096", 30));
	ck_assert(!memmem(kv, tb.len, "RDMAExtensions", 14));

	ck_assert_int_eq(ex_params_check_bursts(bursts, 2, why, sizeof(why)), -EINVAL);
	ck_assert(strstr(why, "13.14"));
	ck_assert_int_eq(ex_params_check_bursts(bursts, 1, why, sizeof(why)), 0);
}
END_TEST

START_TEST(url_parse)
{
	struct ex_url u;

	ck_assert_int_eq(ex_url_parse("iscsi://127.0.0.1:3261/iqn.2026-11.x:t/1", &u), 0);
	ck_assert_str_eq(u.scheme, "iscsi");
	ck_assert_str_eq(u.host, "127.0.0.1");
	ck_assert_str_eq(u.port, "3261");
	ck_assert_str_eq(u.target, "iqn.2026-11.x:t");
	ck_assert_int_eq(u.lun, 1);
	ck_assert_int_eq(ex_url_parse("iser://h/iqn.x", &u), 0);
	ck_assert_str_eq(u.scheme, "iser");
	ck_assert_str_eq(u.port, "3260");
	ck_assert_int_eq(u.lun, -1);
	ck_assert_int_eq(ex_url_parse("iscsi://user%secret@[::1]:3262/iqn.y/0", &u), 0);
	ck_assert_str_eq(u.user, "user");
	ck_assert_str_eq(u.password, "secret");
	ck_assert_str_eq(u.host, "::1");
	ck_assert_str_eq(u.port, "3262");
	ck_assert_int_eq(u.lun, 0);
	ck_assert_int_eq(ex_url_parse("iscsi://127.0.0.1", &u), 0);
	ck_assert_str_eq(u.target, "");
	/* any scheme parses: which provider serves it is libidm's to say */
	ck_assert_int_eq(ex_url_parse("Fake+1.x-y://h/x/1", &u), 0);
	ck_assert_str_eq(u.scheme, "fake+1.x-y");
	ck_assert_int_eq(ex_url_parse("1fake://h/x/1", &u), -EINVAL);
	ck_assert_int_eq(ex_url_parse("://h/x/1", &u), -EINVAL);
	ck_assert_int_eq(ex_url_parse("iscsi:/h/x/1", &u), -EINVAL);
	ck_assert_int_eq(ex_url_parse("a234567890123456789012345678901234://h", &u), -EINVAL);
	ck_assert_int_eq(ex_url_parse("iscsi://h:99999/x/1", &u), -EINVAL);
	ck_assert_int_eq(ex_url_parse("iscsi://h:/x/1", &u), -EINVAL);
	ck_assert_int_eq(ex_url_parse("iscsi:///x/1", &u), -EINVAL);
	ck_assert_int_eq(ex_url_parse("iscsi://h/x/1a", &u), -EINVAL);
	ck_assert_int_eq(ex_url_parse("iscsi://h/x/-1", &u), -EINVAL);
}
END_TEST

static void setting_bad(const char *kv, const char *msg)
{
	char why[256] = "";

	ck_assert_msg(ex_key_check_setting(kv, why, sizeof(why)) == -EINVAL, "%s accepted", kv);
	ck_assert_msg(strstr(why, msg), "%s: got '%s', want '%s'", kv, why, msg);
}

START_TEST(keys_check_setting)
{
	char why[256];
	static const char *const good[] = {
		"ImmediateData=No", "InitialR2T=Yes", "MaxBurstLength=512",
		"MaxBurstLength=16777215", "FirstBurstLength=0x2000",
		"HeaderDigest=CRC32C,None", "DataDigest=None", "AuthMethod=CHAP",
		"MaxOutstandingR2T=65535", "ErrorRecoveryLevel=2",
		"DefaultTime2Wait=3600", "TaskReporting=ResponseFence",
		"TargetRecvDataSegmentLength=4096", "iSERHelloRequired=Yes",
		"RDMAExtensions=Yes", "X-org.example.anything=whatever", "X#1=2",
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(ex_key_check_setting(good[i], why, sizeof(why)) == 0,
			      "%s refused: %s", good[i], why);
	setting_bad("MaxBurstLength=abc", "must be a number from 512 to 16777215");
	setting_bad("MaxBurstLength=1", "must be a number from 512 to 16777215");
	setting_bad("MaxBurstLength=16777216", "from 512 to 16777215");
	setting_bad("MaxBurstLength=-512", "from 512 to 16777215");
	setting_bad("MaxConnections=0", "from 1 to 65535");
	setting_bad("ImmediateData=maybe", "must be Yes or No");
	setting_bad("ImmediateData=yes", "must be Yes or No");
	setting_bad("HeaderDigest=CRC32C,,None", "comma list of CRC32C,None");
	setting_bad("AuthMethod=SRP", "comma list of CHAP,None");
	setting_bad("Bogus=1", "unknown key 'Bogus'");
	setting_bad("SessionType=Normal", "declared by the program");
	setting_bad("IFMarkInt=1", "obsolete");
	setting_bad("NoEquals", "expected NAME=VALUE");
	setting_bad("=1", "expected NAME=VALUE");
	setting_bad("MaxBurstLength=", "1 to 255 characters");
}
END_TEST

START_TEST(chap_responses)
{
	/* H(id || secret || challenge), the values of python3's hashlib:
	 * id 0x2a, secret "libidm-secret-1", challenge 00 01 02 ... of the
	 * digest's length */
	static const struct {
		int alg;
		size_t len;
		const char *want;
	} v[] = {
		{ 5, 16, "0x9e0d53e2a88bbfef76749e0edf13a123" },
		{ 6, 20, "0x57d40c777bdbc7b33422660516ca070927d10398" },
		{ 7, 32, "0xbbdc22a55e15ccfa34d8a0d8f638579630b41abc34d163485c30f1079583ca12" },
		{ 8, 32, "0x57ab5319d73c96c61530b06bca9368d2971ce4d2cc45a65be35c6261ae199d9c" },
	};
	uint8_t chal[EX_CHAP_MAX_DIGEST], d[EX_CHAP_MAX_DIGEST];
	char hex[2 * EX_CHAP_MAX_DIGEST + 3];

	for (size_t i = 0; i < sizeof(chal); i++)
		chal[i] = (uint8_t)i;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		ck_assert_uint_eq(ex_chap_digest_len(v[i].alg), v[i].len);
		ck_assert_int_eq(ex_chap_response(v[i].alg, 0x2a, "libidm-secret-1", chal,
						  v[i].len, d), (int)v[i].len);
		ex_hex_encode(d, v[i].len, hex, sizeof(hex));
		ck_assert_str_eq(hex, v[i].want);
		ck_assert(ex_chap_equal(d, d, v[i].len));
	}
	/* RFC 1321's MD5 of "message digest" through the same path: id
	 * 'm', secret "essage ", challenge "digest" */
	ck_assert_int_eq(ex_chap_response(EX_CHAP_MD5, 'm', "essage ",
					  (const uint8_t *)"digest", 6, d), 16);
	ex_hex_encode(d, 16, hex, sizeof(hex));
	ck_assert_str_eq(hex, "0xf96b697d7cb7938d525a2f31aaf161d0");
	/* unknown algorithm, oversized challenge */
	ck_assert_int_eq(ex_chap_response(4, 1, "s", chal, 16, d), -EINVAL);
	ck_assert_int_eq(ex_chap_response(9, 1, "s", chal, 16, d), -EINVAL);
	ck_assert_int_eq(ex_chap_response(EX_CHAP_MD5, 1, "s", chal, EX_CHAP_CHAL_MAX + 1, d),
			 -EINVAL);
	ck_assert_uint_eq(ex_chap_digest_len(4), 0);
	ck_assert(!ex_chap_equal("abcd", "abce", 4));
}
END_TEST

START_TEST(chap_algorithms)
{
	int a[EX_CHAP_MAX_ALGS];
	char buf[16];
	uint8_t c1[32], c2[32];

	ck_assert_int_eq(ex_chap_alg_list_parse("sha3-256,sha256,sha1,md5", a, 4), 4);
	ck_assert_int_eq(a[0], 8);
	ck_assert_int_eq(a[3], 5);
	ck_assert_int_eq(ex_chap_alg_list_format(a, 4, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "8,7,6,5");
	/* open-iscsi's spelling, numbers, spaces */
	ck_assert_int_eq(ex_chap_alg_list_parse("SHA3-256, SHA256", a, 4), 2);
	ck_assert_int_eq(a[1], 7);
	ck_assert_int_eq(ex_chap_alg_list_parse("7,5", a, 4), 2);
	ck_assert_int_eq(ex_chap_alg_list_parse("sha256,sha256", a, 4), -EINVAL);
	ck_assert_int_eq(ex_chap_alg_list_parse("sha512", a, 4), -EINVAL);
	ck_assert_int_eq(ex_chap_alg_list_parse("", a, 4), -EINVAL);
	ck_assert_int_eq(ex_chap_alg_list_parse("md5,", a, 4), -EINVAL);
	ck_assert_int_eq(ex_chap_alg_list_parse("md5,sha1", a, 1), -EINVAL);
	ck_assert_str_eq(ex_chap_alg_name(8), "sha3-256");
	/* our order decides; what we do not know or take is skipped */
	ck_assert_int_eq(ex_chap_alg_list_parse("sha256,md5", a, 4), 2);
	ck_assert_int_eq(ex_chap_alg_choose(a, 2, "5,7"), 7);
	ck_assert_int_eq(ex_chap_alg_choose(a, 2, "5"), 5);
	ck_assert_int_eq(ex_chap_alg_choose(a, 2, "x,8,6"), -1);
	ck_assert_int_eq(ex_chap_alg_choose(a, 2, "77,55,5"), 5);
	ck_assert_int_eq(ex_chap_alg_choose(a, 1, "5"), -1);
	ck_assert_int_eq(ex_chap_alg_choose(a, 2, ""), -1);
	/* two challenges differ */
	ck_assert_int_eq(ex_chap_random(c1, sizeof(c1), NULL), 0);
	ck_assert_int_eq(ex_chap_random(c2, sizeof(c2), NULL), 0);
	ck_assert(memcmp(c1, c2, sizeof(c1)) != 0);
}
END_TEST

START_TEST(chap_encodings)
{
	uint8_t b[64];

	ck_assert_int_eq(ex_bin_decode("0x0102ff", b, sizeof(b)), 3);
	ck_assert_int_eq(b[2], 0xff);
	ck_assert_int_eq(ex_bin_decode("0xabc", b, sizeof(b)), 2);
	ck_assert_int_eq(b[0], 0x0a);
	ck_assert_int_eq(ex_bin_decode("0bAQL/", b, sizeof(b)), 3);
	ck_assert_int_eq(b[0], 1);
	ck_assert_int_eq(b[2], 0xff);
	ck_assert_int_eq(ex_bin_decode("0xzz", b, sizeof(b)), -EINVAL);
	ck_assert_int_eq(ex_bin_decode("1234", b, sizeof(b)), -EINVAL);
	ck_assert_int_eq(ex_bin_decode("0x0102", b, 1), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("examples_common");
	TCase *tc = tcase_create("all");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, text_parse_pairs);
	tcase_add_test(tc, text_parse_bad);
	tcase_add_test(tc, text_build);
	tcase_add_test(tc, keys_respond);
	tcase_add_test(tc, keys_accept);
	tcase_add_test(tc, keys_check_setting);
	tcase_add_test(tc, keys_iser_digests);
	tcase_add_test(tc, url_parse);
	tcase_add_test(tc, chap_responses);
	tcase_add_test(tc, chap_algorithms);
	tcase_add_test(tc, chap_encodings);
	tcase_add_test(tc, params_values);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
