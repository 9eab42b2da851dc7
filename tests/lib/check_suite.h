/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Building and running a Check suite, shared by every C test: each test
 * program lists its tests once, in a NULL-terminated array, instead of
 * repeating the tcase_add_test() and SRunner steps.
 */
#ifndef LIBIDM_TEST_CHECK_SUITE_H
#define LIBIDM_TEST_CHECK_SUITE_H

#include <check.h>

/* Add the NULL-terminated `tests` to `tc`, in order. */
void test_case_add_tests(TCase *tc, const TTest *const tests[]);

/* Create a test case called `name` holding `tests` and add it to `s`.
 * A `timeout_s` of 0 keeps Check's default timeout (CK_DEFAULT_TIMEOUT);
 * any other value sets it for this case. Returns the test case, for
 * tests added later. */
TCase *test_case_add(Suite *s, const char *name, unsigned timeout_s,
		     const TTest *const tests[]);

/* Run every test of `s` with Check's defaults (CK_FORK, CK_RUN_CASE...)
 * and free it; returns EXIT_SUCCESS when none failed, else EXIT_FAILURE. */
int test_suite_run(Suite *s);

/* Suite `suite` with the one test case `tcase` of `tests` (timeout as in
 * test_case_add()), run as test_suite_run() does. */
int test_suite_run_case(const char *suite, const char *tcase,
			unsigned timeout_s, const TTest *const tests[]);

#endif
