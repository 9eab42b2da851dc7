/* SPDX-License-Identifier: BSD-2-Clause */
/* idm_strerror() and idm_version(). */
#include "unit.h"

#include <stdio.h>
#include <string.h>

START_TEST(strerror_libidm_codes)
{
	static const int codes[] = {EPROTO, EBADMSG, EMSGSIZE, ENOENT, ELIBBAD,
				    ENOTCONN, ECONNRESET, ECANCELED, EEXIST,
				    ENOSYS, ETIMEDOUT, ERANGE, EINVAL, ENOMEM};

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *neg = idm_strerror(-codes[i]);
		const char *pos = idm_strerror(codes[i]);

		ck_assert_ptr_nonnull(neg);
		ck_assert_str_eq(neg, pos); /* sign does not matter */
		ck_assert_msg(strlen(neg) > 3, "short text for %d", codes[i]);
		ck_assert_str_ne(neg, "Unknown error");
	}
	ck_assert_str_eq(idm_strerror(0), "Success");
	ck_assert(strstr(idm_strerror(-EBADMSG), "igest") != NULL);
	ck_assert(strstr(idm_strerror(-ELIBBAD), "rovider") != NULL);
}
END_TEST

START_TEST(strerror_never_null)
{
	static const int odd[] = {-1, 1, 4095, -4095, 100000, -100000, INT32_MAX,
				  -INT32_MAX, INT32_MIN};

	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		const char *s = idm_strerror(odd[i]);
		ck_assert_ptr_nonnull(s);
		ck_assert_uint_gt(strlen(s), 0);
	}
}
END_TEST

START_TEST(version_matches_headers)
{
	char want[32];

	snprintf(want, sizeof(want), "%d.%d.%d", IDM_VERSION_MAJOR, IDM_VERSION_MINOR,
		 IDM_VERSION_PATCH);
	ck_assert_str_eq(idm_version(), want);
	ck_assert_str_eq(idm_version(), PROJECT_VERSION);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { strerror_libidm_codes,
				       strerror_never_null,
				       version_matches_headers, NULL };

	return test_suite_run_case("errors", "errors", 0, tests);
}
