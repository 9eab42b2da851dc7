/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Notice_Key_Values: idm_prov_params_parse() and idm_notice_key_values().
 * Good values land; a bad value of a known key fails with -EINVAL and
 * changes nothing; unknown keys are ignored; every key's range follows
 * RFC 7143 section 13 and RFC 7145 section 6.
 */
#include "unit.h"
#include "core.h"

#include <libidm/keys.h>

#include <stdio.h>
#include <string.h>

/* Parse text of len bytes into defaults; returns the result, *out the params. */
static int parse_n(const char *kv, size_t len, enum idm_role role,
		   struct idm_conn_params *out)
{
	char err[128] = "";
	int r;

	idm_prov_params_default(out);
	r = idm_prov_params_parse(out, role, kv, len, err, sizeof(err));
	if (r < 0)
		ck_assert_msg(err[0], "no reason given for %s", kv);
	return r;
}

/* String literals only: their size covers every "\0"-separated pair. */
#define parse1(kv, role, out) parse_n(kv, sizeof(kv), role, out)
#define expect_unchanged(kv) expect_unchanged_n(kv, sizeof(kv))
#define U32(kv, field) u32_of(kv, sizeof(kv), offsetof(struct idm_conn_params, field))

static void expect_unchanged_n(const char *kv, size_t len)
{
	struct idm_conn_params p, d;

	idm_prov_params_default(&d);
	ck_assert_msg(parse_n(kv, len, IDM_ROLE_TARGET, &p) == -EINVAL, "%s accepted", kv);
	ck_assert_msg(!memcmp(&p, &d, sizeof(p)), "%s changed the params", kv);
}

static uint32_t u32_of(const char *kv, size_t len, size_t field_off)
{
	struct idm_conn_params p;

	ck_assert_msg(parse_n(kv, len, IDM_ROLE_TARGET, &p) == 0, "%s refused", kv);
	return *(const uint32_t *)((const char *)&p + field_off);
}

START_TEST(defaults_are_rfc7143)
{
	struct idm_conn_params p;

	idm_prov_params_default(&p);
	ck_assert(!p.header_digest && !p.data_digest);
	ck_assert(p.immediate_data && p.initial_r2t);
	ck_assert(p.data_pdu_in_order && p.data_seq_in_order);
	ck_assert_uint_eq(p.max_burst_length, 262144);
	ck_assert_uint_eq(p.first_burst_length, 65536);
	ck_assert_uint_eq(p.max_outstanding_r2t, 1);
	ck_assert_uint_eq(p.error_recovery_level, 0);
	ck_assert_uint_eq(p.initiator_recv_dsl, 8192);
	ck_assert_uint_eq(p.target_recv_dsl, 8192);
	ck_assert(!p.rdma_extensions && !p.iser_hello_required);
	ck_assert(!p.tagged_buffer_solicited_only);
	ck_assert_uint_eq(p.max_outstanding_unexpected_pdus, 0);
	ck_assert_uint_eq(p.max_ahs_length, 256);
}
END_TEST

/* The core's defaults are the ones <libidm/keys.h> publishes, the one
 * definition the examples and test harnesses use too: a key default
 * changed in one place and not the other fails here. The test above pins
 * the numbers themselves to the RFCs. */
START_TEST(defaults_are_keys_h)
{
	struct idm_conn_params p;

	idm_prov_params_default(&p);
	ck_assert_int_eq(p.immediate_data, IDM_ISCSI_DEFAULT_IMMEDIATE_DATA);
	ck_assert_int_eq(p.initial_r2t, IDM_ISCSI_DEFAULT_INITIAL_R2T);
	ck_assert_int_eq(p.data_pdu_in_order, IDM_ISCSI_DEFAULT_DATA_PDU_IN_ORDER);
	ck_assert_int_eq(p.data_seq_in_order, IDM_ISCSI_DEFAULT_DATA_SEQUENCE_IN_ORDER);
	ck_assert_uint_eq(p.max_burst_length, IDM_ISCSI_DEFAULT_MAX_BURST_LENGTH);
	ck_assert_uint_eq(p.first_burst_length, IDM_ISCSI_DEFAULT_FIRST_BURST_LENGTH);
	ck_assert_uint_eq(p.max_outstanding_r2t, IDM_ISCSI_DEFAULT_MAX_OUTSTANDING_R2T);
	ck_assert_uint_eq(p.error_recovery_level, IDM_ISCSI_DEFAULT_ERROR_RECOVERY_LEVEL);
	ck_assert_uint_eq(p.initiator_recv_dsl, IDM_ISCSI_DEFAULT_MAX_RECV_DATA_SEGMENT_LENGTH);
	ck_assert_uint_eq(p.target_recv_dsl, IDM_ISCSI_DEFAULT_MAX_RECV_DATA_SEGMENT_LENGTH);
	ck_assert_int_eq(p.rdma_extensions, IDM_ISER_DEFAULT_RDMA_EXTENSIONS);
	ck_assert_uint_eq(p.max_outstanding_unexpected_pdus,
			  IDM_ISER_DEFAULT_MAX_OUTSTANDING_UNEXPECTED_PDUS);
	ck_assert_uint_eq(p.max_ahs_length, IDM_ISER_DEFAULT_MAX_AHS_LENGTH);
	/* RFC 7143 13.12 and RFC 7145: the same 8192 bytes on both transports */
	ck_assert_uint_eq(IDM_ISER_DEFAULT_INITIATOR_RECV_DATA_SEGMENT_LENGTH,
			  IDM_ISCSI_DEFAULT_MAX_RECV_DATA_SEGMENT_LENGTH);
	ck_assert_uint_eq(IDM_ISER_DEFAULT_TARGET_RECV_DATA_SEGMENT_LENGTH,
			  IDM_ISCSI_DEFAULT_MAX_RECV_DATA_SEGMENT_LENGTH);
	/* keys the core does not carry, pinned to the RFC here */
	ck_assert_uint_eq(IDM_ISCSI_DEFAULT_MAX_CONNECTIONS, 1);
	ck_assert_uint_eq(IDM_ISCSI_DEFAULT_TIME2WAIT, 2);
	ck_assert_uint_eq(IDM_ISCSI_DEFAULT_TIME2RETAIN, 20);
}
END_TEST

START_TEST(good_values)
{
	static const char kv[] = "HeaderDigest=CRC32C\0DataDigest=CRC32C\0"
				 "MaxBurstLength=1048576\0FirstBurstLength=131072\0"
				 "ImmediateData=No\0InitialR2T=No\0"
				 "MaxOutstandingR2T=4\0ErrorRecoveryLevel=1\0"
				 "DataPDUInOrder=No\0DataSequenceInOrder=No\0"
				 "InitiatorRecvDataSegmentLength=65536\0"
				 "TargetRecvDataSegmentLength=32768\0"
				 "RDMAExtensions=Yes\0MaxOutstandingUnexpectedPDUs=16\0"
				 "MaxAHSLength=1024\0TaggedBufferForSolicitedDataOnly=Yes\0"
				 "iSERHelloRequired=Yes";
	struct idm_conn_params p;

	idm_prov_params_default(&p);
	ck_assert_int_eq(idm_prov_params_parse(&p, IDM_ROLE_TARGET, kv, sizeof(kv), NULL, 0), 0);
	ck_assert(p.header_digest && p.data_digest);
	ck_assert_uint_eq(p.max_burst_length, 1048576);
	ck_assert_uint_eq(p.first_burst_length, 131072);
	ck_assert(!p.immediate_data && !p.initial_r2t);
	ck_assert_uint_eq(p.max_outstanding_r2t, 4);
	ck_assert_uint_eq(p.error_recovery_level, 1);
	ck_assert(!p.data_pdu_in_order && !p.data_seq_in_order);
	ck_assert_uint_eq(p.initiator_recv_dsl, 65536);
	ck_assert_uint_eq(p.target_recv_dsl, 32768);
	ck_assert(p.rdma_extensions && p.iser_hello_required);
	ck_assert(p.tagged_buffer_solicited_only);
	ck_assert_uint_eq(p.max_outstanding_unexpected_pdus, 16);
	ck_assert_uint_eq(p.max_ahs_length, 1024);

	/* and back */
	ck_assert_int_eq(parse1("HeaderDigest=None", IDM_ROLE_TARGET, &p), 0);
	ck_assert(!p.header_digest);
}
END_TEST

START_TEST(length_without_final_nul)
{
	static const char kv[] = "MaxOutstandingR2T=7\0ErrorRecoveryLevel=bad";
	struct idm_conn_params p;

	/* `len` counts the text; a last pair need not be NUL-terminated */
	idm_prov_params_default(&p);
	ck_assert_int_eq(idm_prov_params_parse(&p, IDM_ROLE_TARGET, kv, strlen(kv), NULL, 0), 0);
	ck_assert_uint_eq(p.max_outstanding_r2t, 7);
	/* and bytes past `len` are not read: the bad pair after it is unseen */
	idm_prov_params_default(&p);
	ck_assert_int_eq(idm_prov_params_parse(&p, IDM_ROLE_TARGET, kv, strlen(kv) + 1, NULL, 0), 0);
	ck_assert_int_eq(idm_prov_params_parse(&p, IDM_ROLE_TARGET, kv, sizeof(kv), NULL, 0), -EINVAL);
}
END_TEST

START_TEST(boundaries_rfc7143)
{
	/* MaxBurstLength, FirstBurstLength, *RecvDataSegmentLength: 512..2^24-1 */
	ck_assert_uint_eq(U32("MaxBurstLength=512\0FirstBurstLength=512", max_burst_length), 512);
	ck_assert_uint_eq(U32("MaxBurstLength=16777215", max_burst_length), 16777215);
	expect_unchanged("MaxBurstLength=511");
	expect_unchanged("MaxBurstLength=16777216");
	ck_assert_uint_eq(U32("FirstBurstLength=512", first_burst_length), 512);
	expect_unchanged("FirstBurstLength=511");
	expect_unchanged("FirstBurstLength=16777216");
	ck_assert_uint_eq(U32("InitiatorRecvDataSegmentLength=512", initiator_recv_dsl), 512);
	ck_assert_uint_eq(U32("InitiatorRecvDataSegmentLength=16777215", initiator_recv_dsl),
			  16777215);
	expect_unchanged("InitiatorRecvDataSegmentLength=511");
	expect_unchanged("InitiatorRecvDataSegmentLength=16777216");
	ck_assert_uint_eq(U32("TargetRecvDataSegmentLength=512", target_recv_dsl), 512);
	expect_unchanged("TargetRecvDataSegmentLength=16777216");
	expect_unchanged("MaxRecvDataSegmentLength=511");
	expect_unchanged("MaxRecvDataSegmentLength=16777216");
	/* MaxOutstandingR2T: 1..65535 */
	ck_assert_uint_eq(U32("MaxOutstandingR2T=1", max_outstanding_r2t), 1);
	ck_assert_uint_eq(U32("MaxOutstandingR2T=65535", max_outstanding_r2t), 65535);
	expect_unchanged("MaxOutstandingR2T=0");
	expect_unchanged("MaxOutstandingR2T=65536");
	/* ErrorRecoveryLevel: 0..2 */
	ck_assert_uint_eq(U32("ErrorRecoveryLevel=0", error_recovery_level), 0);
	ck_assert_uint_eq(U32("ErrorRecoveryLevel=2", error_recovery_level), 2);
	expect_unchanged("ErrorRecoveryLevel=3");
	/* FirstBurstLength must not exceed MaxBurstLength (13.14) */
	expect_unchanged("MaxBurstLength=65536\0FirstBurstLength=65537");
	ck_assert_uint_eq(U32("MaxBurstLength=65536\0FirstBurstLength=65536", first_burst_length),
			  65536);
	/* hex constants are numbers too (RFC 7143 6.1) */
	ck_assert_uint_eq(U32("MaxBurstLength=0x40000", max_burst_length), 262144);
	ck_assert_uint_eq(U32("MaxBurstLength=0X100000", max_burst_length), 1048576);
}
END_TEST

START_TEST(boundaries_rfc7145)
{
	/* MaxOutstandingUnexpectedPDUs, MaxAHSLength: 0 or 2..2^32-1 */
	ck_assert_uint_eq(U32("MaxOutstandingUnexpectedPDUs=0", max_outstanding_unexpected_pdus), 0);
	ck_assert_uint_eq(U32("MaxOutstandingUnexpectedPDUs=2", max_outstanding_unexpected_pdus), 2);
	ck_assert_uint_eq(U32("MaxOutstandingUnexpectedPDUs=4294967295",
			      max_outstanding_unexpected_pdus), 4294967295u);
	expect_unchanged("MaxOutstandingUnexpectedPDUs=1");
	expect_unchanged("MaxOutstandingUnexpectedPDUs=4294967296");
	ck_assert_uint_eq(U32("MaxAHSLength=0", max_ahs_length), 0);
	ck_assert_uint_eq(U32("MaxAHSLength=2", max_ahs_length), 2);
	expect_unchanged("MaxAHSLength=1");
	expect_unchanged("MaxAHSLength=4294967296");
}
END_TEST

START_TEST(bad_values)
{
	expect_unchanged("HeaderDigest=crc32c");
	expect_unchanged("HeaderDigest=");
	expect_unchanged("DataDigest=MD5");
	expect_unchanged("ImmediateData=yes");
	expect_unchanged("InitialR2T=1");
	expect_unchanged("DataPDUInOrder=");
	expect_unchanged("RDMAExtensions=Maybe");
	expect_unchanged("MaxBurstLength=");
	expect_unchanged("MaxBurstLength=-1");
	expect_unchanged("MaxBurstLength=+65536");
	expect_unchanged("MaxBurstLength=65536x");
	expect_unchanged("MaxBurstLength= 65536");
	expect_unchanged("MaxBurstLength=\t65536");
	expect_unchanged("MaxBurstLength=18446744073709551617");
	expect_unchanged("MaxOutstandingR2T=Irrelevant");
	/* hex needs digits, and only digits */
	expect_unchanged("MaxAHSLength=0x");
	expect_unchanged("MaxBurstLength=0x+10000");
	expect_unchanged("MaxBurstLength=0x 10000");
	expect_unchanged("MaxBurstLength=0x-10000");
	/* malformed pairs */
	expect_unchanged("MaxBurstLength");
	expect_unchanged("=65536");
	/* a bad value after good ones: nothing of the batch applies */
	expect_unchanged("MaxBurstLength=65536\0ImmediateData=No\0ErrorRecoveryLevel=9");
}
END_TEST

START_TEST(leading_zero_is_not_octal)
{
	struct idm_conn_params p;

	/* "010" is no iSCSI decimal-constant; it must never mean 8 */
	if (parse1("MaxOutstandingR2T=010", IDM_ROLE_TARGET, &p) == 0)
		ck_assert_uint_eq(p.max_outstanding_r2t, 10);
}
END_TEST

START_TEST(unknown_keys_ignored)
{
	static const char kv[] = "TargetName=iqn.2026-11.org.libidm:t1\0"
				 "X-com.example.Vendor=whatever\0"
				 "MaxConnections=4\0DefaultTime2Wait=2\0"
				 "MaxOutstandingR2T=3\0AuthMethod=None";
	struct idm_conn_params p;

	idm_prov_params_default(&p);
	ck_assert_int_eq(idm_prov_params_parse(&p, IDM_ROLE_TARGET, kv, sizeof(kv), NULL, 0), 0);
	ck_assert_uint_eq(p.max_outstanding_r2t, 3);
}
END_TEST

START_TEST(unknown_key_with_long_value_ignored)
{
	/* A caller may pass the whole login text: CHAP_C and CHAP_R are
	 * binary values of up to 1024 bytes, over 2000 hex characters. */
	char kv[4096];
	struct idm_conn_params p;
	size_t n = (size_t)sprintf(kv, "CHAP_C=0x");

	memset(kv + n, 'a', 2048);
	n += 2048;
	kv[n++] = '\0';
	n += (size_t)sprintf(kv + n, "MaxOutstandingR2T=5") + 1;
	idm_prov_params_default(&p);
	ck_assert_int_eq(idm_prov_params_parse(&p, IDM_ROLE_TARGET, kv, n, NULL, 0), 0);
	ck_assert_uint_eq(p.max_outstanding_r2t, 5);
}
END_TEST

START_TEST(max_recv_dsl_is_directional)
{
	struct idm_conn_params p;

	/* on the target, the peer's MaxRecvDataSegmentLength is the initiator's */
	ck_assert_int_eq(parse1("MaxRecvDataSegmentLength=65536", IDM_ROLE_TARGET, &p), 0);
	ck_assert_uint_eq(p.initiator_recv_dsl, 65536);
	ck_assert_uint_eq(p.target_recv_dsl, 8192);
	ck_assert_int_eq(parse1("MaxRecvDataSegmentLength=65536", IDM_ROLE_INITIATOR, &p), 0);
	ck_assert_uint_eq(p.target_recv_dsl, 65536);
	ck_assert_uint_eq(p.initiator_recv_dsl, 8192);
	/* role 0: ignored */
	ck_assert_int_eq(parse1("MaxRecvDataSegmentLength=65536", 0, &p), 0);
	ck_assert_uint_eq(p.target_recv_dsl, 8192);
	ck_assert_uint_eq(p.initiator_recv_dsl, 8192);
}
END_TEST

START_TEST(empty_and_padding)
{
	static const char kv[] = "\0\0MaxOutstandingR2T=2\0\0\0";
	struct idm_conn_params p;

	idm_prov_params_default(&p);
	ck_assert_int_eq(idm_prov_params_parse(&p, IDM_ROLE_TARGET, "", 0, NULL, 0), 0);
	ck_assert_int_eq(idm_prov_params_parse(&p, IDM_ROLE_TARGET, NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(idm_prov_params_parse(&p, IDM_ROLE_TARGET, kv, sizeof(kv), NULL, 0), 0);
	ck_assert_uint_eq(p.max_outstanding_r2t, 2);
	ck_assert_int_eq(idm_prov_params_parse(&p, IDM_ROLE_TARGET, NULL, 5, NULL, 0), -EINVAL);
}
END_TEST

/* Through the public call on a live connection of the fake provider. */
START_TEST(notice_key_values_on_conn)
{
	static const char good[] = "MaxBurstLength=131072\0MaxRecvDataSegmentLength=16384";
	static const char bad[] = "MaxBurstLength=65536\0DataDigest=Sometimes";
	struct idm_conn_params before;
	struct fake_stats *st;
	idm_ctx *ctx;
	idm_conn *conn;

	unit_use_providers("good", "fake");
	ctx = unit_ctx();
	conn = unit_initiator(ctx, false);
	st = unit_fake_stats();

	ck_assert_int_eq(idm_notice_key_values(conn, good, sizeof(good)), 0);
	ck_assert_uint_eq(conn->params.max_burst_length, 131072);
	ck_assert_uint_eq(conn->params.target_recv_dsl, 16384);
	ck_assert_int_eq(st->notice_key_values, 1);

	before = conn->params;
	ck_assert_int_eq(idm_notice_key_values(conn, bad, sizeof(bad)), -EINVAL);
	ck_assert(!memcmp(&before, &conn->params, sizeof(before)));
	ck_assert_int_eq(st->notice_key_values, 1); /* provider not told */
	/* the refused key is named, not only "Invalid argument" */
	ck_assert_ptr_nonnull(strstr(idm_last_error(), "DataDigest"));
	ck_assert_int_eq(idm_notice_key_values(conn, good, sizeof(good)), 0);
	ck_assert_str_eq(idm_last_error(), "");
	ck_assert(!memcmp(&before, &conn->params, sizeof(before)));

	/* the provider refusing rolls the values back too */
	st->notice_fail = -ENOTSUP;
	ck_assert_int_eq(idm_notice_key_values(conn, "MaxBurstLength=65536", 21), -ENOTSUP);
	ck_assert(!memcmp(&before, &conn->params, sizeof(before)));

	ck_assert_int_eq(idm_notice_key_values(NULL, good, sizeof(good)), -EINVAL);
	ck_assert_int_eq(idm_notice_key_values(conn, NULL, 4), -EINVAL);

	/* not on a terminated connection */
	idm_connection_terminate(conn);
	ck_assert_int_lt(idm_notice_key_values(conn, good, sizeof(good)), 0);
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { defaults_are_rfc7143,
				       defaults_are_keys_h,
				       good_values,
				       length_without_final_nul,
				       boundaries_rfc7143,
				       boundaries_rfc7145,
				       bad_values,
				       leading_zero_is_not_octal,
				       unknown_keys_ignored,
				       unknown_key_with_long_value_ignored,
				       max_recv_dsl_is_directional,
				       empty_and_padding,
				       notice_key_values_on_conn,
				       NULL };

	return test_suite_run_case("params", "params", 0, tests);
}
