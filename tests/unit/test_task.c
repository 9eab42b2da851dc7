/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Tasks and buffers: the per-connection task pool (create, lookup,
 * -EEXIST, free, reuse without new memory, growth past one chunk, the
 * provider's private area), task data ranges, and buffer objects.
 */
#include "unit.h"
#include "core.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

START_TEST(pool_create_lookup_free_reuse)
{
	idm_ctx *ctx;
	idm_conn *conn;
	idm_task *a, *b, *c, *again;

	unit_use_providers("good", "fake");
	ctx = unit_ctx();
	conn = unit_initiator(ctx, true);

	ck_assert_int_eq(idm_task_create(conn, 0x10, &a), 0);
	ck_assert_int_eq(idm_task_create(conn, 0x11, &b), 0);
	ck_assert_ptr_ne(a, b);
	ck_assert_uint_eq(idm_task_itt(a), 0x10);
	ck_assert_ptr_eq(idm_task_conn(a), conn);
	ck_assert_ptr_eq(idm_prov_task_find(conn, 0x10), a);
	ck_assert_ptr_eq(idm_prov_task_find(conn, 0x11), b);
	ck_assert_ptr_null(idm_prov_task_find(conn, 0x12));

	/* an active ITT cannot be used twice */
	c = (idm_task *)conn;
	ck_assert_int_eq(idm_task_create(conn, 0x10, &c), -EEXIST);
	ck_assert_ptr_null(c);
	/* the reserved tag is no ITT */
	ck_assert_int_lt(idm_task_create(conn, 0xffffffffu, &c), 0);

	idm_task_set_arg(a, &a);
	ck_assert_ptr_eq(idm_task_get_arg(a), &a);
	ck_assert_uint_eq(idm_task_data_received(a), 0);

	/* free, then the ITT is free again and the memory is reused */
	idm_deallocate_task_resources(a);
	ck_assert_ptr_null(idm_prov_task_find(conn, 0x10));
	ck_assert_int_eq(idm_task_create(conn, 0x10, &again), 0);
	ck_assert_ptr_eq(again, a);
	ck_assert_ptr_null(idm_task_get_arg(again)); /* fresh state */
	ck_assert_uint_eq(idm_task_data_received(again), 0);
	ck_assert_ptr_eq(idm_prov_task_find(conn, 0x11), b);

	idm_deallocate_task_resources(again);
	idm_deallocate_task_resources(b);
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(pool_grows_and_recycles)
{
	enum { N = 300 };
	static idm_task *t[N];
	idm_ctx *ctx;
	idm_conn *conn;
	size_t chunks;

	unit_use_providers("good", "fake");
	ctx = unit_ctx();
	conn = unit_initiator(ctx, true);
	for (uint32_t i = 0; i < N; i++) {
		ck_assert_int_eq(idm_task_create(conn, i * 7919u, &t[i]), 0);
		/* the provider's area is 16-byte aligned and ours alone */
		ck_assert_uint_eq((uintptr_t)idm_prov_task_priv(t[i]) % 16, 0);
	}
	for (uint32_t i = 0; i < N; i++)
		ck_assert_ptr_eq(idm_prov_task_find(conn, i * 7919u), t[i]);
	chunks = conn->n_task_chunks;
	ck_assert_uint_ge(chunks, 1);
	/* steady state: free and create again, the pool does not grow */
	for (int round = 0; round < 5; round++) {
		for (uint32_t i = 0; i < N; i++)
			idm_deallocate_task_resources(t[i]);
		for (uint32_t i = 0; i < N; i++)
			ck_assert_int_eq(idm_task_create(conn, i + round * 1000u, &t[i]), 0);
	}
	ck_assert_uint_eq(conn->n_task_chunks, chunks);
	/* destroying the connection with tasks active frees them all (ASan
	 * reports a leak otherwise) */
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(target_tasks_from_provider)
{
	idm_ctx *ctx;
	idm_portal *portal;
	idm_conn *conn;
	idm_task *t, *dup = NULL;

	unit_use_providers("good", "fake");
	ctx = unit_ctx();
	conn = unit_target(ctx, &portal, true);
	/* idm_task_create is for initiators; targets get tasks with commands */
	ck_assert_int_eq(idm_task_create(conn, 5, &t), -EINVAL);
	ck_assert_int_eq(idm_prov_task_new(conn, 5, &t), 0);
	ck_assert_int_eq(idm_prov_task_new(conn, 5, &dup), -EEXIST);
	ck_assert_ptr_null(dup);
	ck_assert_ptr_eq(idm_prov_task_find(conn, 5), t);
	idm_deallocate_task_resources(t);
	ck_assert_ptr_null(idm_prov_task_find(conn, 5));
	idm_portal_destroy(portal);
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(task_set_data_ranges)
{
	static uint8_t mem[4096];
	idm_ctx *ctx;
	idm_conn *conn;
	idm_buf *in, *out;
	idm_task *t;

	unit_use_providers("good", "fake");
	ctx = unit_ctx();
	conn = unit_initiator(ctx, true);
	ck_assert_int_eq(idm_buf_create(ctx, mem, sizeof(mem), &in), 0);
	ck_assert_int_eq(idm_buf_alloc(ctx, 8192, &out), 0);
	ck_assert_int_eq(idm_task_create(conn, 1, &t), 0);

	ck_assert_int_eq(idm_task_set_data(t, in, 0, 4096, out, 0, 8192), 0);
	ck_assert_int_eq(idm_task_set_data(t, in, 4095, 1, NULL, 0, 0), 0);
	ck_assert_int_eq(idm_task_set_data(t, in, 4096, 0, NULL, 0, 0), 0);
	ck_assert_int_eq(idm_task_set_data(t, NULL, 0, 0, NULL, 0, 0), 0);
	/* outside the buffer */
	ck_assert_int_eq(idm_task_set_data(t, in, 0, 4097, NULL, 0, 0), -ERANGE);
	ck_assert_int_eq(idm_task_set_data(t, in, 4096, 1, NULL, 0, 0), -ERANGE);
	ck_assert_int_eq(idm_task_set_data(t, in, SIZE_MAX, 2, NULL, 0, 0), -ERANGE);
	ck_assert_int_eq(idm_task_set_data(t, NULL, 0, 0, out, 1, 8192), -ERANGE);
	/* a length without a buffer */
	ck_assert_int_eq(idm_task_set_data(t, NULL, 0, 1, NULL, 0, 0), -EINVAL);
	ck_assert_int_eq(idm_task_set_data(NULL, in, 0, 1, NULL, 0, 0), -EINVAL);

	idm_deallocate_task_resources(t);
	idm_buf_destroy(in);
	idm_buf_destroy(out);
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(buffers)
{
	static uint8_t mem[100];
	idm_ctx *ctx = unit_ctx();
	idm_buf *b = (idm_buf *)mem;
	size_t sizes[] = {1, 4096, 1u << 20, (1u << 20) + 1, 3u << 20};

	ck_assert_int_eq(idm_buf_create(ctx, mem, sizeof(mem), &b), 0);
	ck_assert_ptr_eq(idm_buf_addr(b), mem);
	ck_assert_uint_eq(idm_buf_len(b), sizeof(mem));
	idm_buf_destroy(b);
	ck_assert_uint_eq(mem[0], 0); /* caller memory untouched */

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint8_t *p;

		ck_assert_int_eq(idm_buf_alloc(ctx, sizes[i], &b), 0);
		p = idm_buf_addr(b);
		ck_assert_ptr_nonnull(p);
		ck_assert_uint_eq(idm_buf_len(b), sizes[i]);
		ck_assert_uint_eq((uintptr_t)p % 4096, 0); /* page aligned */
		memset(p, 0xa5, sizes[i]); /* all of it is writable */
		idm_buf_destroy(b);
	}

	b = (idm_buf *)mem;
	ck_assert_int_eq(idm_buf_create(NULL, mem, 1, &b), -EINVAL);
	ck_assert_ptr_null(b);
	ck_assert_int_eq(idm_buf_create(ctx, NULL, 1, &b), -EINVAL);
	ck_assert_int_eq(idm_buf_create(ctx, mem, 0, &b), -EINVAL);
	ck_assert_int_eq(idm_buf_create(ctx, (void *)(UINTPTR_MAX - 10), 100, &b), -EINVAL);
	ck_assert_int_eq(idm_buf_create(ctx, mem, 1, NULL), -EINVAL);
	ck_assert_int_eq(idm_buf_alloc(ctx, 0, &b), -EINVAL);
	ck_assert_int_eq(idm_buf_alloc(ctx, SIZE_MAX, &b), -EINVAL);
	ck_assert_int_eq(idm_buf_alloc(NULL, 1, &b), -EINVAL);
	ck_assert_int_eq(idm_buf_alloc(ctx, 1, NULL), -EINVAL);
	ck_assert_ptr_null(idm_buf_addr(NULL));
	ck_assert_uint_eq(idm_buf_len(NULL), 0);
	idm_buf_destroy(NULL);
	idm_ctx_destroy(ctx);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { pool_create_lookup_free_reuse,
				       pool_grows_and_recycles,
				       target_tasks_from_provider,
				       task_set_data_ranges,
				       buffers,
				       NULL };

	return test_suite_run_case("task", "task", 0, tests);
}
