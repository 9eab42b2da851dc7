/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One buffer, two contexts. Two harnesses (each an initiator and a target
 * connection on a context of its own, with its progress thread) whose
 * contexts share one domain, and whose targets serve their disks from one
 * buffer made through the first context: verified I/O runs on both at
 * once, each target on its own half of the buffer. Over TCP the provider
 * registers nothing and the test is about threads (ThreadSanitizer runs
 * it); over iSER (IDM_TEST_PROVIDER=iser) the second context's connection
 * uses the registration the first context made, in the device's
 * protection domain the domain shares.
 */
#include "harness.h"

#include <check.h>
#include <pthread.h>
#include <string.h>

#define SLOT (256u << 10)
#define QD 8

static const struct h_io ios[] = {
	{ false, 4096 },   { true, 4096 },    { false, 1 },      { true, 65537 },
	{ false, 65537 },  { true, 262144 },  { false, 262144 }, { true, 8192 },
	{ false, 131072 }, { true, 131072 },  { false, 512 },    { true, 100000 },
};
#define N_IOS (sizeof(ios) / sizeof(ios[0]))
#define ROUNDS 16

struct io_run {
	struct h *h;
	int rc;
	struct h_io many[N_IOS * ROUNDS];
};

static void *io_main(void *arg)
{
	struct io_run *r = arg;
	size_t n = 0;

	for (unsigned k = 0; k < ROUNDS; k++)
		for (size_t i = 0; i < N_IOS; i++)
			r->many[n++] = ios[i];
	r->rc = h_run_io(r->h, r->many, n, QD, 120000);
	return NULL;
}

START_TEST(test_shared_buffer)
{
	static struct h a, b;
	static struct io_run ra = { .h = &a }, rb = { .h = &b };
	idm_domain *dom;
	pthread_t th;

	/* each harness opens its descriptors between its h_init and its
	 * h_fini (which counts them): a is up and logged in before b */
	ck_assert_int_eq(idm_domain_create(NULL, &dom), 0);
	/* a's disk has room for both: b serves the upper QD slots of it */
	ck_assert_msg(h_init_in(&a, SLOT, 2 * QD, dom) == 0, "%s", a.err);
	ck_assert_msg(h_start_thread(&a) == 0, "%s", a.err);
	ck_assert_msg(h_connect_login(&a, &a.p, 5000) == 0, "%s", a.err);
	ck_assert_msg(h_init_in(&b, SLOT, QD, dom) == 0, "%s", b.err);
	idm_domain_destroy(dom); /* the contexts hold it */
	ck_assert_ptr_eq(idm_ctx_get_domain(a.ctx), idm_ctx_get_domain(b.ctx));
	ck_assert_int_eq(h_disk_share(&b, &a, QD), 0);
	ck_assert_msg(h_start_thread(&b) == 0, "%s", b.err);
	ck_assert_msg(h_connect_login(&b, &b.p, 5000) == 0, "%s", b.err);

	ck_assert_int_eq(pthread_create(&th, NULL, io_main, &rb), 0);
	io_main(&ra);
	pthread_join(th, NULL);
	h_log("%zu verified I/Os on each of two contexts, one buffer",
	      N_IOS * ROUNDS);
	h_assert_io_clean(&a, ra.rc);
	h_assert_io_clean(&b, rb.rc);
	h_fini(&b);
	h_fini(&a);
}
END_TEST

int main(int argc, char **argv)
{
	const TTest *const tests[] = { test_shared_buffer, NULL };

	(void)argc;
	return h_main(argv[0], 300, "domain", "domain", 240, tests);
}
