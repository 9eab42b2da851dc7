/* SPDX-License-Identifier: BSD-2-Clause */
/* Building and running a Check suite: see check_suite.h. */
#include "check_suite.h"

#include <stdlib.h>

void test_case_add_tests(TCase *tc, const TTest *const tests[])
{
	for (size_t i = 0; tests[i]; i++)
		tcase_add_test(tc, tests[i]);
}

TCase *test_case_add(Suite *s, const char *name, unsigned timeout_s,
		     const TTest *const tests[])
{
	TCase *tc = tcase_create(name);

	if (timeout_s)
		tcase_set_timeout(tc, timeout_s);
	test_case_add_tests(tc, tests);
	suite_add_tcase(s, tc);
	return tc;
}

int test_suite_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

int test_suite_run_case(const char *suite, const char *tcase,
			unsigned timeout_s, const TTest *const tests[])
{
	Suite *s = suite_create(suite);

	test_case_add(s, tcase, timeout_s, tests);
	return test_suite_run(s);
}
