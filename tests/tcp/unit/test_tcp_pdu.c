/* SPDX-License-Identifier: BSD-2-Clause */
/* PDU framing: lengths a BHS announces and their limits, and the headers
 * the provider builds (the opcode table is the core's, tests/unit/test_dm.c). */
#include <check.h>
#include "check_suite.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_pdu.h"

START_TEST(lens_plain)
{
	uint8_t bhs[48] = { 0 };
	struct tcp_pdu_lens l;

	bhs[4] = 2; /* 8 bytes of AHS */
	idm_iscsi_bhs_set_data_len(bhs, 5);
	ck_assert_int_eq(tcp_pdu_lens(bhs, false, false, 8192, &l), 0);
	ck_assert_uint_eq(l.ahs, 8);
	ck_assert_uint_eq(l.dsl, 5);
	ck_assert_uint_eq(l.pad, 3);
	ck_assert_uint_eq(l.hdr, 56);
	ck_assert_uint_eq(l.trailer, 3);
	ck_assert_uint_eq(l.total, 64);

	ck_assert_int_eq(tcp_pdu_lens(bhs, true, true, 8192, &l), 0);
	ck_assert_uint_eq(l.hdr, 60);
	ck_assert_uint_eq(l.trailer, 7);
	ck_assert_uint_eq(l.total, 72);

	/* no data segment: no pad and no data digest */
	idm_iscsi_bhs_set_data_len(bhs, 0);
	bhs[4] = 0;
	ck_assert_int_eq(tcp_pdu_lens(bhs, true, true, 8192, &l), 0);
	ck_assert_uint_eq(l.trailer, 0);
	ck_assert_uint_eq(l.total, 52);

	/* aligned data: digest only */
	idm_iscsi_bhs_set_data_len(bhs, 8192);
	ck_assert_int_eq(tcp_pdu_lens(bhs, false, true, 8192, &l), 0);
	ck_assert_uint_eq(l.pad, 0);
	ck_assert_uint_eq(l.trailer, 4);
}
END_TEST

START_TEST(lens_limits)
{
	uint8_t bhs[48] = { 0 };
	struct tcp_pdu_lens l;

	idm_iscsi_bhs_set_data_len(bhs, 8193);
	ck_assert_int_eq(tcp_pdu_lens(bhs, false, false, 8192, &l), -EMSGSIZE);
	idm_iscsi_bhs_set_data_len(bhs, 0xffffff);
	ck_assert_int_eq(tcp_pdu_lens(bhs, false, false, 8192, &l), -EMSGSIZE);
	ck_assert_uint_eq(l.dsl, 0xffffff);
	idm_iscsi_bhs_set_data_len(bhs, 0);
	bhs[4] = 255;
	ck_assert_int_eq(tcp_pdu_lens(bhs, false, false, 8192, &l), -EMSGSIZE);
	bhs[4] = TCP_MAX_AHS_LEN / 4;
	ck_assert_int_eq(tcp_pdu_lens(bhs, false, false, 8192, &l), 0);
	bhs[4] = TCP_MAX_AHS_LEN / 4 + 1;
	ck_assert_int_eq(tcp_pdu_lens(bhs, false, false, 8192, &l), -EMSGSIZE);
}
END_TEST

START_TEST(datain)
{
	uint8_t tmpl[48], out[48];

	memset(tmpl, 0, sizeof(tmpl));
	tmpl[0] = IDM_ISCSI_OP_DATA_IN;
	tmpl[1] =
		IDM_ISCSI_FLAG_FINAL | IDM_ISCSI_DATAIN_STATUS | IDM_ISCSI_DATAIN_UNDERFLOW;
	tmpl[3] = 0x02; /* CHECK CONDITION */
	idm_iscsi_put64(tmpl + 8, 0x0001000000000000ull);
	idm_iscsi_put32(tmpl + 16, 0x1234);
	idm_iscsi_put32(tmpl + 24, 77);  /* StatSN */
	idm_iscsi_put32(tmpl + 28, 100); /* ExpCmdSN */
	idm_iscsi_put32(tmpl + 32, 200); /* MaxCmdSN */
	idm_iscsi_put32(tmpl + 44, 512); /* residual */

	/* a middle PDU: no status fields, no F */
	tcp_pdu_datain(out, tmpl, 8192, IDM_ISCSI_RESERVED_TAG, 3, 24576, false,
		       false, false);
	ck_assert_uint_eq(out[0], IDM_ISCSI_OP_DATA_IN);
	ck_assert_uint_eq(out[1], 0);
	ck_assert_uint_eq(out[3], 0);
	ck_assert_uint_eq(idm_iscsi_bhs_data_len(out), 8192);
	ck_assert_uint_eq(idm_iscsi_get64(out + 8), 0x0001000000000000ull);
	ck_assert_uint_eq(idm_iscsi_bhs_itt(out), 0x1234);
	ck_assert_uint_eq(idm_iscsi_get32(out + 20), IDM_ISCSI_RESERVED_TAG);
	ck_assert_uint_eq(idm_iscsi_get32(out + 24), 0);
	ck_assert_uint_eq(idm_iscsi_get32(out + 28), 100);
	ck_assert_uint_eq(idm_iscsi_get32(out + 32), 200);
	ck_assert_uint_eq(idm_iscsi_get32(out + 36), 3);
	ck_assert_uint_eq(idm_iscsi_get32(out + 40), 24576);
	ck_assert_uint_eq(idm_iscsi_get32(out + 44), 0);

	/* end of a burst */
	tcp_pdu_datain(out, tmpl, 100, IDM_ISCSI_RESERVED_TAG, 4, 0, true, false,
		       false);
	ck_assert_uint_eq(out[1], IDM_ISCSI_FLAG_FINAL);

	/* the last one, with status and the A bit */
	tcp_pdu_datain(out, tmpl, 100, 0x55, 5, 32768, true, true, true);
	ck_assert_uint_eq(out[1], IDM_ISCSI_FLAG_FINAL | IDM_ISCSI_DATAIN_ACK |
					  IDM_ISCSI_DATAIN_STATUS |
					  IDM_ISCSI_DATAIN_UNDERFLOW);
	ck_assert_uint_eq(out[3], 0x02);
	ck_assert_uint_eq(idm_iscsi_get32(out + 20), 0x55);
	ck_assert_uint_eq(idm_iscsi_get32(out + 24), 77);
	ck_assert_uint_eq(idm_iscsi_get32(out + 44), 512);
}
END_TEST

START_TEST(dataout_r2t_snack)
{
	uint8_t lun[8] = { 0, 1, 0, 0, 0, 0, 0, 0 }, out[48], tmpl[48];

	tcp_pdu_dataout(out, lun, 0x10, 0x20, 9, 2, 4096, 1000, true);
	ck_assert_uint_eq(out[0], IDM_ISCSI_OP_DATA_OUT);
	ck_assert_uint_eq(out[1], IDM_ISCSI_FLAG_FINAL);
	ck_assert_uint_eq(idm_iscsi_bhs_data_len(out), 1000);
	ck_assert(!memcmp(out + 8, lun, 8));
	ck_assert_uint_eq(idm_iscsi_bhs_itt(out), 0x10);
	ck_assert_uint_eq(idm_iscsi_get32(out + 20), 0x20);
	ck_assert_uint_eq(idm_iscsi_get32(out + 28), 9);
	ck_assert_uint_eq(idm_iscsi_get32(out + 36), 2);
	ck_assert_uint_eq(idm_iscsi_get32(out + 40), 4096);
	tcp_pdu_dataout(out, lun, 0x10, 0x20, 9, 2, 4096, 1000, false);
	ck_assert_uint_eq(out[1], 0);

	memset(tmpl, 0xee, sizeof(tmpl)); /* junk where libidm owns fields */
	tcp_pdu_r2t(out, tmpl, 0x77, 3, 65536, 262144);
	ck_assert_uint_eq(out[0], IDM_ISCSI_OP_R2T);
	ck_assert_uint_eq(out[1], IDM_ISCSI_FLAG_FINAL);
	ck_assert_uint_eq(out[4], 0);
	ck_assert_uint_eq(idm_iscsi_bhs_data_len(out), 0);
	ck_assert_uint_eq(idm_iscsi_get32(out + 20), 0x77);
	ck_assert_uint_eq(idm_iscsi_get32(out + 24), 0xeeeeeeeeu); /* StatSN kept */
	ck_assert_uint_eq(idm_iscsi_get32(out + 36), 3);
	ck_assert_uint_eq(idm_iscsi_get32(out + 40), 65536);
	ck_assert_uint_eq(idm_iscsi_get32(out + 44), 262144);

	tcp_pdu_dataack(out, lun, 0x99, 5, 12);
	ck_assert_uint_eq(out[0], IDM_ISCSI_OP_SNACK_REQ);
	ck_assert_uint_eq(out[1], IDM_ISCSI_FLAG_FINAL | IDM_ISCSI_SNACK_DATA_ACK);
	ck_assert_uint_eq(idm_iscsi_bhs_itt(out), IDM_ISCSI_RESERVED_TAG);
	ck_assert_uint_eq(idm_iscsi_get32(out + 20), 0x99);
	ck_assert_uint_eq(idm_iscsi_get32(out + 28), 5);
	ck_assert_uint_eq(idm_iscsi_get32(out + 40), 12); /* BegRun */
	ck_assert_uint_eq(idm_iscsi_get32(out + 44), 0);  /* RunLength */
}
END_TEST

START_TEST(login_final)
{
	uint8_t b[48] = { 0 };

	b[0] = IDM_ISCSI_OP_LOGIN_RSP;
	b[1] = IDM_ISCSI_LOGIN_TRANSIT | (IDM_ISCSI_STAGE_OPERATIONAL << 2) |
	       IDM_ISCSI_STAGE_FULL_FEATURE;
	ck_assert(tcp_pdu_login_final_ok(b));
	b[36] = 2; /* initiator error */
	ck_assert(!tcp_pdu_login_final_ok(b));
	b[36] = 0;
	b[1] &= (uint8_t)~IDM_ISCSI_LOGIN_TRANSIT;
	ck_assert(!tcp_pdu_login_final_ok(b));
	b[1] = IDM_ISCSI_LOGIN_TRANSIT | IDM_ISCSI_STAGE_OPERATIONAL;
	ck_assert(!tcp_pdu_login_final_ok(b));
	b[0] = IDM_ISCSI_OP_LOGIN_REQ;
	b[1] = IDM_ISCSI_LOGIN_TRANSIT | IDM_ISCSI_STAGE_FULL_FEATURE;
	ck_assert(!tcp_pdu_login_final_ok(b));
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { lens_plain,	  lens_limits, datain,
				       dataout_r2t_snack, login_final, NULL };

	return test_suite_run_case("tcp_pdu", "pdu", 0, tests);
}
