/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the RDMA tests need from the machine: an RDMA device and the IPv4
 * address of its netdev (IDM_RDMA_IP, set by tests/rdma-vm). Without them a
 * test exits 77 (skipped) and says why; in CI they run in the soft-RoCE
 * guest where both exist. rxe does not work over 127.0.0.1.
 */
#ifndef TESTS_ISER_RDMA_ENV_H
#define TESTS_ISER_RDMA_ENV_H

#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <stdlib.h>

static inline const char *rdma_test_ip(void)
{
	struct ibv_context **l;
	int n = 0;
	const char *ip = getenv("IDM_RDMA_IP");

	/* librdmacm, not just libibverbs: the test then holds librdmacm
	 * loaded, so its process-wide state is not unmapped (and reported
	 * as leaks of an unknown module) when the context unloads the
	 * provider. */
	l = rdma_get_devices(&n);
	if (l)
		rdma_free_devices(l);
	if (n <= 0) {
		printf("SKIP: no RDMA device (run through tests/rdma-vm/ci.sh)\n");
		fflush(stdout);
		exit(77);
	}
	if (!ip || !*ip) {
		printf("SKIP: no RDMA device address: set IDM_RDMA_IP\n");
		fflush(stdout);
		exit(77);
	}
	return ip;
}

#endif
