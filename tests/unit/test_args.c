/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Argument validation: every public function given NULL handles or
 * pointers returns a negative errno (or the documented neutral value) and
 * never crashes. Wrong roles and states are in test_conn.c.
 */
#include "unit.h"
#include "core.h"

#include <string.h>

START_TEST(null_everywhere)
{
	uint8_t bhs[IDM_ISCSI_BHS_LEN] = {0};
	const struct idm_provider_info *list = NULL;
	size_t n = 0;
	void *out = NULL;
	idm_ctx *ctx = unit_ctx();

	ck_assert_ptr_nonnull(idm_version());
	ck_assert_ptr_nonnull(idm_strerror(-EINVAL));

	/* context */
	ck_assert_int_eq(idm_ctx_create(NULL, NULL), -EINVAL);
	idm_ctx_destroy(NULL);
	ck_assert_int_lt(idm_ctx_get_fd(NULL), 0);
	ck_assert_int_eq(idm_ctx_progress(NULL, 0), -EINVAL);
	ck_assert_int_eq(idm_ctx_start_progress_thread(NULL), -EINVAL);
	ck_assert_int_eq(idm_ctx_stop_progress_thread(NULL), -EINVAL);
	ck_assert_int_eq(idm_get_providers(NULL, &list, &n), -EINVAL);
	ck_assert_int_eq(idm_get_providers(ctx, NULL, &n), -EINVAL);
	ck_assert_int_eq(idm_get_providers(ctx, &list, NULL), -EINVAL);

	/* portals */
	ck_assert_int_eq(idm_portal_create(NULL, NULL, NULL, NULL, NULL), -EINVAL);
	ck_assert_int_eq(idm_portal_create(ctx, NULL, NULL, NULL, (idm_portal **)&out), -EINVAL);
	ck_assert_ptr_null(out);
	ck_assert_int_lt(idm_portal_port(NULL), 0);
	idm_portal_destroy(NULL);

	/* connections */
	ck_assert_int_eq(idm_conn_connect(NULL, NULL, NULL, NULL, NULL), -EINVAL);
	ck_assert_int_eq(idm_conn_connect(ctx, NULL, NULL, NULL, (idm_conn **)&out), -EINVAL);
	ck_assert_ptr_null(out);
	ck_assert_int_eq(idm_conn_set_cbs(NULL, &unit_cbs, NULL), -EINVAL);
	idm_conn_destroy(NULL);
	ck_assert_int_eq(idm_conn_role(NULL), 0);
	ck_assert_ptr_nonnull(idm_conn_provider(NULL));
	ck_assert_ptr_null(idm_conn_get_arg(NULL));
	ck_assert_ptr_nonnull(idm_conn_error(NULL));
	ck_assert_ptr_nonnull(idm_conn_peer_name(NULL));
	ck_assert_ptr_nonnull(idm_conn_local_name(NULL));

	/* buffers */
	ck_assert_int_eq(idm_buf_create(NULL, NULL, 0, NULL), -EINVAL);
	ck_assert_int_eq(idm_buf_alloc(NULL, 0, NULL), -EINVAL);
	idm_buf_destroy(NULL);
	ck_assert_ptr_null(idm_buf_addr(NULL));
	ck_assert_uint_eq(idm_buf_len(NULL), 0);

	/* tasks */
	ck_assert_int_eq(idm_task_create(NULL, 1, NULL), -EINVAL);
	ck_assert_int_eq(idm_task_create(NULL, 1, (idm_task **)&out), -EINVAL);
	ck_assert_ptr_null(out);
	ck_assert_int_eq(idm_task_set_data(NULL, NULL, 0, 0, NULL, 0, 0), -EINVAL);
	ck_assert_uint_eq(idm_task_itt(NULL), 0xffffffffu);
	ck_assert_ptr_null(idm_task_conn(NULL));
	idm_task_set_arg(NULL, &n);
	ck_assert_ptr_null(idm_task_get_arg(NULL));
	ck_assert_uint_eq(idm_task_data_received(NULL), 0);

	/* PDUs */
	ck_assert_ptr_null(idm_pdu_bhs(NULL));
	n = 5;
	ck_assert_ptr_null(idm_pdu_ahs(NULL, &n));
	ck_assert_uint_eq(n, 0);
	n = 5;
	ck_assert_ptr_null(idm_pdu_data(NULL, &n));
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(idm_pdu_ahs(NULL, NULL));
	ck_assert_ptr_null(idm_pdu_data(NULL, NULL));
	ck_assert_ptr_null(idm_pdu_task(NULL));
	(void)idm_pdu_opcode(NULL);

	/* the primitives */
	ck_assert_int_eq(idm_send_control(NULL, bhs, NULL, 0, NULL, 0, NULL, 0), -EINVAL);
	ck_assert_int_eq(idm_put_data(NULL, bhs, NULL, 0, 0, 1, 0), -EINVAL);
	ck_assert_int_eq(idm_get_data(NULL, bhs, NULL, 0, 0, 1, 0), -EINVAL);
	ck_assert_int_eq(idm_allocate_connection_resources(NULL), -EINVAL);
	ck_assert_int_eq(idm_conn_set_cmd_window(NULL, 128), -EINVAL);
	idm_deallocate_connection_resources(NULL);
	ck_assert_int_eq(idm_enable_datamover(NULL, bhs, NULL, 0), -EINVAL);
	idm_connection_terminate(NULL);
	ck_assert_int_eq(idm_notice_key_values(NULL, "a=b", 4), -EINVAL);
	idm_deallocate_task_resources(NULL);

	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(pdu_accessors)
{
	/* The PDU object as a provider fills it. */
	static const uint8_t data[] = "abc";
	uint8_t bhs[IDM_ISCSI_BHS_LEN];
	size_t n = 99;
	struct idm_pdu raw = {.bhs = bhs, .data = data, .data_len = 3};
	idm_pdu *pdu = &raw;

	unit_bhs(bhs, IDM_ISCSI_OP_TEXT_RSP | IDM_ISCSI_OP_IMMEDIATE, 1);
	ck_assert_ptr_eq(idm_pdu_bhs(pdu), bhs);
	ck_assert_uint_eq(idm_pdu_opcode(pdu), IDM_ISCSI_OP_TEXT_RSP);
	ck_assert_ptr_null(idm_pdu_ahs(pdu, &n));
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_eq(idm_pdu_data(pdu, &n), data);
	ck_assert_uint_eq(n, 3);
	ck_assert_ptr_null(idm_pdu_task(pdu));
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { null_everywhere, pdu_accessors, NULL };

	return test_suite_run_case("args", "args", 0, tests);
}
