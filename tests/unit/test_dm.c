/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The shared datamover layer of <libidm/provider.h>: the opcode table
 * (who sends what in which phase), unsolicited and immediate data
 * accounting, and the core's record of a task's in-flight Put_Data /
 * Get_Data ranges.
 */
#include "unit.h"
#include "core.h"

#include <string.h>

START_TEST(opcodes_login_phase)
{
	const enum idm_conn_phase L = IDM_CONN_PHASE_LOGIN;

	/* received by a target: only the Login Request */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, ISCSI_OP_LOGIN_REQ, L,
					       IDM_PROV_OP_DATA), 0);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, ISCSI_OP_SCSI_CMD, L,
					       IDM_PROV_OP_DATA), -ENOTCONN);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, ISCSI_OP_DATA_OUT, L,
					       IDM_PROV_OP_DATA), -ENOTCONN);
	/* received by an initiator: Login Response and Reject */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, ISCSI_OP_LOGIN_RSP, L,
					       IDM_PROV_OP_DATA), 0);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, ISCSI_OP_REJECT, L,
					       IDM_PROV_OP_DATA), 0);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, ISCSI_OP_DATA_IN, L,
					       IDM_PROV_OP_DATA), -ENOTCONN);
	/* sent by the caller during login */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, ISCSI_OP_REJECT, L, 0), 0);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, ISCSI_OP_NOP_OUT, L, 0),
			 -ENOTCONN);
}
END_TEST

START_TEST(opcodes_full_feature_phase)
{
	const enum idm_conn_phase F = IDM_CONN_PHASE_FFP;
	static const uint8_t ini_ops[] = { 0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x10 };
	static const uint8_t tgt_ops[] = { 0x20, 0x21, 0x22, 0x24, 0x25,
					   0x26, 0x31, 0x32, 0x3f };

	for (unsigned op = 0; op < 256; op++) {
		bool by_i = memchr(ini_ops, (int)(op & 0x3f), sizeof(ini_ops)) != NULL;
		bool by_t = memchr(tgt_ops, (int)(op & 0x3f), sizeof(tgt_ops)) != NULL;
		bool data = (op & 0x3f) == ISCSI_OP_DATA_OUT || (op & 0x3f) == ISCSI_OP_DATA_IN ||
			    (op & 0x3f) == ISCSI_OP_R2T;

		/* what a provider receives: the datamover's PDUs included */
		ck_assert_msg((idm_prov_opcode_check(IDM_ROLE_INITIATOR, (uint8_t)op, F,
						     IDM_PROV_OP_DATA) == 0) == by_i,
			      "from the initiator, opcode 0x%02x", op);
		ck_assert_msg((idm_prov_opcode_check(IDM_ROLE_TARGET, (uint8_t)op, F,
						     IDM_PROV_OP_DATA) == 0) == by_t,
			      "from the target, opcode 0x%02x", op);
		/* what a caller sends: not the datamover's */
		ck_assert_msg((idm_prov_opcode_check(IDM_ROLE_INITIATOR, (uint8_t)op, F, 0) ==
			       0) == (by_i && !data),
			      "Send_Control by the initiator, opcode 0x%02x", op);
		ck_assert_msg((idm_prov_opcode_check(IDM_ROLE_TARGET, (uint8_t)op, F, 0) ==
			       0) == (by_t && !data),
			      "Send_Control by the target, opcode 0x%02x", op);
	}
	/* a Login PDU in full feature phase is a protocol error */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, ISCSI_OP_LOGIN_REQ, F, 0),
			 -EPROTO);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, ISCSI_OP_LOGIN_RSP, F,
					       IDM_PROV_OP_DATA), -EPROTO);
	/* wrong direction */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_TARGET, ISCSI_OP_SCSI_CMD, F, 0),
			 -EINVAL);
	/* other phases: nothing */
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, ISCSI_OP_NOP_OUT,
					       IDM_CONN_PHASE_FAILED, 0), -ENOTCONN);
	ck_assert_int_eq(idm_prov_opcode_check(IDM_ROLE_INITIATOR, ISCSI_OP_NOP_OUT,
					       IDM_CONN_PHASE_CONNECTING, 0), -ENOTCONN);
}
END_TEST

static Suite *dm_suite(void)
{
	Suite *s = suite_create("dm");
	TCase *tc = tcase_create("opcode");

	tcase_add_test(tc, opcodes_login_phase);
	tcase_add_test(tc, opcodes_full_feature_phase);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(dm_suite());
}
