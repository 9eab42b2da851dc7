/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iSER conformance in the soft-RoCE guest (suite 'rdma'): a libidm
 * initiator and target log in over an RC connection, then WRITEs (Get_Data
 * as RDMA Read, immediate data and unsolicited Data-Out as Sends) and READs
 * (Put_Data as RDMA Write) from 1 byte to 16 MiB, every byte compared and
 * every guard checked, across the keys that shape the data movement.
 */
#include <check.h>
#include "check_suite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iser_pair.h"
#include "rdma_env.h"

#define MIB (1024u * 1024u)
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *ip;

static void run(const struct p_keys *k, const uint32_t *sizes, size_t n,
		enum p_status sm, bool ack)
{
	struct pair p;
	uint32_t max = 0;

	for (size_t i = 0; i < n; i++)
		max = sizes[i] > max ? sizes[i] : max;
	ck_assert_msg(p_init(&p, ip, max) == 0, "init: %s", p.err);
	p.status_mode = sm;
	p.put_ack = ack;
	ck_assert_msg(p_login(&p, k, 10000) == 0, "login: %s", p.err);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(p_write_read_verify(&p, sizes[i], (uint32_t)i + 7) == 0,
			      "imm=%d ir2t=%d fbl=%u trdsl=%u size %u: %s",
			      k->immediate_data, k->initial_r2t, k->first_burst,
			      k->tgt_rdsl, sizes[i], p.err);
	ck_assert_int_eq(p.i_terminated + p.t_terminated, 0);
	ck_assert_int_eq(p.cb_after_end, 0);
	if (ack)
		ck_assert_int_eq(p.data_acks, (int)n);
	p_fini(&p);
}

START_TEST(sizes_1_to_16m)
{
	static const uint32_t sizes[] = {1, 3, 511, 512, 4096, 8191, 8192, 8193,
					 65535, 65536, 65537, 262144, 1000000,
					 4 * MIB, 16 * MIB};
	struct p_keys k;

	p_keys_default(&k);
	run(&k, sizes, N(sizes), P_STATUS_RSP, false);
}
END_TEST

/* Run with a shared receive queue (test_iser_loopback_srq)? Its buffers
 * take segments of at most IDM_SHARED_RECV_DSL. */
static bool shared_recv(void)
{
	const char *v = getenv("IDM_ISER_SRQ");

	return v && !strcmp(v, "1");
}

START_TEST(key_combinations)
{
	static const uint32_t sizes[] = {1, 8193, 70000, MIB + 1};
	static const uint32_t fbls[] = {512, 65536};
	static const uint32_t rdsls[] = {512, 8192, 262144};
	static const uint32_t srq_rdsls[] = {512, IDM_SHARED_RECV_DSL};
	const uint32_t *dsl = shared_recv() ? srq_rdsls : rdsls;
	size_t nd = shared_recv() ? N(srq_rdsls) : N(rdsls);
	struct p_keys k;

	for (int imm = 0; imm < 2; imm++)
		for (int ir2t = 0; ir2t < 2; ir2t++)
			for (size_t f = 0; f < N(fbls); f++)
				for (size_t d = 0; d < nd; d++) {
					p_keys_default(&k);
					k.immediate_data = imm;
					k.initial_r2t = ir2t;
					k.first_burst = fbls[f];
					k.tgt_rdsl = dsl[d];
					k.ini_rdsl = dsl[nd - 1 - d];
					run(&k, sizes, N(sizes), P_STATUS_RSP,
					    false);
				}
}
END_TEST

/* Status in the last Data-In becomes a SCSI Response (no phase collapse,
 * RFC 7145 3.3); the A bit is answered through a zero-length RDMA Read. */
START_TEST(status_in_datain_and_data_ack)
{
	static const uint32_t sizes[] = {1, 4096, 300000, 2 * MIB};
	struct p_keys k;

	p_keys_default(&k);
	run(&k, sizes, N(sizes), P_STATUS_IN_DATAIN, false);
	k.erl = 1;
	run(&k, sizes, N(sizes), P_STATUS_RSP, true);
}
END_TEST

START_TEST(throughput)
{
	struct pair p;
	struct p_keys k;
	const uint32_t len = 16 * MIB;
	const int rounds = 8;
	double t0, tw, tr;

	p_keys_default(&k);
	ck_assert_msg(p_init(&p, ip, len) == 0, "init: %s", p.err);
	ck_assert_msg(p_login(&p, &k, 10000) == 0, "login: %s", p.err);
	t0 = p_now();
	for (int i = 0; i < rounds; i++)
		ck_assert_msg(p_io(&p, true, len, 60000) == 0, "%s", p.err);
	tw = p_now() - t0;
	t0 = p_now();
	for (int i = 0; i < rounds; i++)
		ck_assert_msg(p_io(&p, false, len, 60000) == 0, "%s", p.err);
	tr = p_now() - t0;
	printf("iser throughput, QD1 16 MiB: WRITE (RDMA Read) %.1f MB/s, "
	       "READ (RDMA Write) %.1f MB/s\n",
	       rounds * (double)len / tw / 1e6, rounds * (double)len / tr / 1e6);
	fflush(stdout);
	p_fini(&p);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { sizes_1_to_16m, key_combinations,
				       status_in_datain_and_data_ack,
				       throughput, NULL };

	ip = rdma_test_ip();
	return test_suite_run_case("iser_loopback", "loopback", 300, tests);
}
