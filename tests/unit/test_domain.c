/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Domains: creation arguments, contexts joining one, the provider state
 * shared by its contexts (ops->dom_open once per domain, dom_close when
 * the last context or buffer goes), buffers used across its contexts and
 * released after them, and the refusal of another domain's buffers by a
 * provider that registers memory.
 */
#include "unit.h"
#include "core.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

static idm_ctx *ctx_in(idm_domain *dom)
{
	struct idm_ctx_attr attr = {.size = sizeof(attr), .log_level = -1,
				    .domain = dom};
	idm_ctx *ctx;

	ck_assert_int_eq(idm_ctx_create(&attr, &ctx), 0);
	return ctx;
}

/* The fake's counters, kept mapped by a reference of the test's own so
 * that they stay readable after the last context and domain let go of
 * the module. */
static struct fake_stats *hold_fake(void **handle)
{
	char path[4200];
	struct fake_stats *st;

	snprintf(path, sizeof(path), "%s/libidm-fake.so", unit_fake_dir("good"));
	*handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	ck_assert_msg(*handle != NULL, "fake provider not loaded: %s", dlerror());
	st = dlsym(*handle, "fake_stats");
	ck_assert_ptr_nonnull(st);
	return st;
}

START_TEST(create_arguments)
{
	struct idm_domain_attr attr = {.size = sizeof(attr)};
	idm_domain *dom = (idm_domain *)&attr;

	ck_assert_int_eq(idm_domain_create(NULL, NULL), -EINVAL);
	attr.size = 4;
	ck_assert_int_eq(idm_domain_create(&attr, &dom), -EINVAL);
	ck_assert_ptr_null(dom);
	attr.size = sizeof(attr);
	attr.flags = 1;
	ck_assert_int_eq(idm_domain_create(&attr, &dom), -EINVAL);
	attr.flags = 0;
	ck_assert_int_eq(idm_domain_create(&attr, &dom), 0);
	idm_domain_destroy(dom);
	ck_assert_int_eq(idm_domain_create(NULL, &dom), 0);
	idm_domain_destroy(dom);
	idm_domain_destroy(NULL);
	ck_assert_ptr_null(idm_ctx_get_domain(NULL));
}
END_TEST

START_TEST(contexts_join_a_domain)
{
	/* the 1.2 layout ends before `domain`: whatever follows is not read */
	struct {
		struct idm_ctx_attr attr;
	} old = {{.size = offsetof(struct idm_ctx_attr, domain), .log_level = -1,
		  .domain = (idm_domain *)&old}};
	idm_domain *dom;
	idm_ctx *a, *b, *own, *old_ctx;

	ck_assert_int_eq(idm_domain_create(NULL, &dom), 0);
	a = ctx_in(dom);
	b = ctx_in(dom);
	ck_assert_int_eq(idm_ctx_create(NULL, &own), 0);
	ck_assert_int_eq(idm_ctx_create(&old.attr, &old_ctx), 0);
	ck_assert_ptr_eq(idm_ctx_get_domain(a), dom);
	ck_assert_ptr_eq(idm_ctx_get_domain(b), dom);
	ck_assert_ptr_nonnull(idm_ctx_get_domain(own));
	ck_assert_ptr_ne(idm_ctx_get_domain(own), dom);
	ck_assert_ptr_ne(idm_ctx_get_domain(old_ctx), dom);
	ck_assert_ptr_ne(idm_ctx_get_domain(old_ctx), idm_ctx_get_domain(own));
	/* the creator's reference may go first: the contexts hold theirs */
	idm_domain_destroy(dom);
	ck_assert_ptr_eq(idm_ctx_get_domain(b), idm_ctx_get_domain(a));
	idm_ctx_destroy(a);
	idm_ctx_destroy(b);
	idm_ctx_destroy(own);
	idm_ctx_destroy(old_ctx);
}
END_TEST

/* A target connection in FFP on ctx with a task, for Put_Data. */
static idm_task *ffp_task(idm_ctx *ctx, idm_conn **conn, idm_portal **portal,
			  uint8_t din[IDM_ISCSI_BHS_LEN])
{
	idm_task *t;

	*conn = unit_target(ctx, portal, true);
	ck_assert_int_eq(idm_prov_task_new(*conn, 0x42, &t), 0);
	unit_bhs(din, IDM_ISCSI_OP_DATA_IN, 0x42);
	return t;
}

START_TEST(provider_state_shared_and_released_last)
{
	uint8_t din[IDM_ISCSI_BHS_LEN];
	struct fake_stats *st;
	idm_domain *dom;
	idm_ctx *a, *b;
	idm_conn *conn;
	idm_portal *portal;
	idm_buf *buf;
	idm_task *t;
	void *fake;

	unit_use_providers("good", "fake");
	ck_assert_int_eq(idm_domain_create(NULL, &dom), 0);
	a = ctx_in(dom);
	b = ctx_in(dom);
	ck_assert_int_eq(idm_buf_alloc(a, 4096, &buf), 0);
	/* a connection on b registers a's buffer (the fake's Put_Data) */
	t = ffp_task(b, &conn, &portal, din);
	st = hold_fake(&fake);
	st->reg_bufs = 1;
	ck_assert_int_eq(idm_put_data(t, din, buf, 0, 0, 512, 0), 0);
	ck_assert(unit_progress_until(b, &unit_ev.completions));
	/* the provider loaded on both contexts, its domain state made once */
	{
		const struct idm_provider_info *list;
		size_t n;

		ck_assert_int_eq(idm_get_providers(a, &list, &n), 0);
	}
	ck_assert_int_eq(st->init, 2);
	ck_assert_int_eq(st->dom_open, 1);
	idm_deallocate_task_resources(t);
	idm_portal_destroy(portal);
	idm_conn_destroy(conn);

	/* the contexts go, then the domain's creator: the buffer keeps the
	 * domain, and its registration, alive */
	idm_ctx_destroy(a);
	idm_ctx_destroy(b);
	idm_domain_destroy(dom);
	ck_assert_int_eq(st->fini, 2);
	ck_assert_int_eq(st->dom_close, 0);
	ck_assert_int_eq(st->buf_release, 0);
	/* released through the domain's own instance, then the domain */
	idm_buf_destroy(buf);
	ck_assert_int_eq(st->buf_release, 1);
	ck_assert_int_eq(st->released_in_domain, 1);
	ck_assert_int_eq(st->dom_close, 1);
	dlclose(fake);
}
END_TEST

/* Contexts a and b in one domain, `alone` in its own, a buffer of each
 * domain (`same` made through b, `other` through alone); the domain's
 * creator reference is dropped at once. */
struct two_domains {
	idm_ctx *a, *b, *alone;
	idm_buf *same, *other;
};

static void two_domains_setup(struct two_domains *w)
{
	idm_domain *dom;

	unit_use_providers("good", "fake");
	ck_assert_int_eq(idm_domain_create(NULL, &dom), 0);
	w->a = ctx_in(dom);
	w->b = ctx_in(dom);
	idm_domain_destroy(dom);
	ck_assert_int_eq(idm_ctx_create(NULL, &w->alone), 0);
	ck_assert_int_eq(idm_buf_alloc(w->b, 4096, &w->same), 0);
	ck_assert_int_eq(idm_buf_alloc(w->alone, 4096, &w->other), 0);
}

START_TEST(buffer_of_another_domain_refused)
{
	uint8_t din[IDM_ISCSI_BHS_LEN];
	struct two_domains w;
	idm_conn *conn;
	idm_portal *portal;
	idm_task *t;

	two_domains_setup(&w);
	t = ffp_task(w.a, &conn, &portal, din);
	/* the fake has buf_release: it registers, per domain */
	ck_assert_int_eq(idm_put_data(t, din, w.other, 0, 0, 1, 0), -EINVAL);
	ck_assert_int_eq(idm_put_data(t, din, w.same, 0, 0, 1, 0), 0);
	ck_assert(unit_progress_until(w.a, &unit_ev.completions));
	idm_deallocate_task_resources(t);
	idm_portal_destroy(portal);
	idm_conn_destroy(conn);
	/* buffers and contexts in yet another order */
	idm_ctx_destroy(w.a);
	idm_buf_destroy(w.same);
	idm_ctx_destroy(w.b);
	idm_ctx_destroy(w.alone);
	idm_buf_destroy(w.other);
}
END_TEST

START_TEST(initiator_data_of_another_domain_refused)
{
	struct two_domains w;
	idm_conn *conn;
	idm_task *t;

	two_domains_setup(&w);
	conn = unit_initiator(w.a, true);
	ck_assert_int_eq(idm_task_create(conn, 0x10, &t), 0);
	ck_assert_int_eq(idm_task_set_data(t, w.other, 0, 16, NULL, 0, 0), -EINVAL);
	ck_assert_int_eq(idm_task_set_data(t, NULL, 0, 0, w.other, 0, 16), -EINVAL);
	ck_assert_int_eq(idm_task_set_data(t, w.same, 0, 16, w.same, 16, 16), 0);
	idm_deallocate_task_resources(t);
	idm_conn_destroy(conn);
	idm_buf_destroy(w.other);
	idm_buf_destroy(w.same);
	idm_ctx_destroy(w.alone);
	idm_ctx_destroy(w.b);
	idm_ctx_destroy(w.a);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { create_arguments,
				       contexts_join_a_domain,
				       provider_state_shared_and_released_last,
				       buffer_of_another_domain_refused,
				       initiator_data_of_another_domain_refused,
				       NULL };

	return test_suite_run_case("domain", "domain", 0, tests);
}
