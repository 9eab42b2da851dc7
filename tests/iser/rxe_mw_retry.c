/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rxe-mw-retry: does a memory window bind that was already executed survive
 * a rewind of the send queue (a transport retry or an RNR retry)?
 *
 *   rxe-mw-retry IPV4 [CASE...]     (default: every case)
 *
 * No libidm here, only verbs and rdma_cm, in one process: a responder and
 * a requester connected over the RDMA device that owns IPV4 (rxe: not
 * 127.0.0.1). The responder posts no receive at first, so the requester's
 * first Send is answered with an RNR NAK; while the Send waits, the
 * requester goes on with the WRs behind it. When the RNR timer fires the
 * requester rewinds to the oldest unacknowledged WR and walks the queue
 * again: the same thing a lost ACK does, only deterministic. 200 ms later
 * the responder posts its receives and everything must complete.
 *
 * Cases (each on a fresh connection), the send queue of the requester:
 *   mr              Send, Send*                  no local operation: control
 *   bind-first      Bind*, Send, Send*           the bind runs at the head
 *   bind-in-window  Send, Bind*, Send*           the bind runs while the
 *                                                first Send is unacknowledged
 *   bind-fenced     Send, Bind* (fence), Send*   the same with IBV_SEND_FENCE
 *   inv-in-window   Bind*, Send, LocalInv*, Send*
 * (* = signalled). A case passes when every signalled WR completes with
 * success within 10 s. Otherwise it prints what came back and the QP's
 * state: "stall" is no completion at all while the QP still says RTS.
 *
 * Exit status: 0 all cases passed, 1 some failed, 77 no RDMA device at
 * IPV4, 2 usage.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "cm_event.h"

#define MSG 64
#define RECVS 8

struct side {
	struct rdma_event_channel *ech;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t buf[RECVS * MSG];
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int side_qp(struct side *s, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa;

	s->id = id;
	s->pd = ibv_alloc_pd(id->verbs);
	s->cq = s->pd ? ibv_create_cq(id->verbs, 64, NULL, NULL, 0) : NULL;
	if (!s->cq)
		return -1;
	s->mr = ibv_reg_mr(s->pd, s->buf, sizeof(s->buf),
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	if (!s->mr)
		return -1;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = s->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = RECVS;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	return rdma_create_qp(id, s->pd, &qa);
}

static void side_free(struct side *s)
{
	if (s->id && s->id->qp)
		rdma_destroy_qp(s->id);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->id)
		rdma_destroy_id(s->id);
	memset(s, 0, sizeof(*s));
}

/* Connect a requester to a responder over ip; both in this process. */
static int connect_pair(const char *ip, struct side *rsp, struct side *req,
			struct rdma_event_channel *lech, struct rdma_cm_id *lid)
{
	struct sockaddr_in sa;
	struct rdma_conn_param cp;
	struct rdma_cm_id *cid;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	inet_pton(AF_INET, ip, &sa.sin_addr);
	sa.sin_port = rdma_get_src_port(lid);
	req->ech = rdma_create_event_channel();
	if (!req->ech || rdma_create_id(req->ech, &req->id, NULL, RDMA_PS_TCP))
		return -1;
	if (rdma_resolve_addr(req->id, NULL, (struct sockaddr *)&sa, 2000) ||
	    cm_event_wait(req->ech, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, 5000) ||
	    rdma_resolve_route(req->id, 2000) ||
	    cm_event_wait(req->ech, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, 5000))
		return -1;
	if (side_qp(req, req->id))
		return -1;
	memset(&cp, 0, sizeof(cp));
	cp.retry_count = 7;
	cp.rnr_retry_count = 7; /* RNR: retry until the receive is there */
	cp.responder_resources = cp.initiator_depth = 1;
	if (rdma_connect(req->id, &cp))
		return -1;
	if (cm_event_wait(lech, RDMA_CM_EVENT_CONNECT_REQUEST, &cid, 5000) ||
	    side_qp(rsp, cid))
		return -1;
	rsp->ech = NULL;
	if (rdma_accept(cid, &cp))
		return -1;
	if (cm_event_wait(req->ech, RDMA_CM_EVENT_ESTABLISHED, NULL, 5000) ||
	    cm_event_wait(lech, RDMA_CM_EVENT_ESTABLISHED, NULL, 5000))
		return -1;
	return 0;
}

enum wr_kind { W_SEND, W_BIND, W_BIND_FENCE, W_INV, W_END };

struct rcase {
	const char *name;
	enum wr_kind wr[5];
	bool sig[5];
};

static const struct rcase cases[] = {
	{"mr", {W_SEND, W_SEND, W_END}, {false, true}},
	{"bind-first", {W_BIND, W_SEND, W_SEND, W_END}, {true, false, true}},
	{"bind-in-window", {W_SEND, W_BIND, W_SEND, W_END}, {false, true, true}},
	{"bind-fenced", {W_SEND, W_BIND_FENCE, W_SEND, W_END}, {false, true, true}},
	{"inv-in-window", {W_BIND, W_SEND, W_INV, W_SEND, W_END},
	 {true, false, true, true}},
};

static const char *qp_state_str(struct ibv_qp *qp)
{
	static const char *names[] = {"RESET", "INIT", "RTR", "RTS", "SQD",
				      "SQE", "ERR"};
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) ||
	    a.qp_state > IBV_QPS_ERR)
		return "?";
	return names[a.qp_state];
}

static int run_case(const char *ip, const struct rcase *rc,
		    struct rdma_event_channel *lech, struct rdma_cm_id *lid)
{
	struct side rsp = {0}, req = {0};
	struct ibv_send_wr wr[5], *bad;
	struct ibv_sge sge[5];
	struct ibv_mw *mw = NULL;
	struct ibv_wc wc;
	int i, n = 0, want = 0, got = 0, errors = 0, ok = 0, rcvd = 0, sends = 0;
	uint32_t rkey = 0;
	double t0, posted_recv = 0;
	bool recv_posted = false;

	if (connect_pair(ip, &rsp, &req, lech, lid)) {
		printf("%-15s SETUP FAILED: %s\n", rc->name, strerror(errno));
		side_free(&req);
		side_free(&rsp);
		return 1;
	}
	memset(wr, 0, sizeof(wr));
	for (i = 0; rc->wr[i] != W_END; i++) {
		struct ibv_send_wr *w = &wr[i];

		w->wr_id = (uint64_t)i + 1;
		if (rc->sig[i]) {
			w->send_flags = IBV_SEND_SIGNALED;
			want++;
		}
		switch (rc->wr[i]) {
		case W_SEND:
			sge[i].addr = (uintptr_t)req.buf;
			sge[i].length = MSG;
			sge[i].lkey = req.mr->lkey;
			w->sg_list = &sge[i];
			w->num_sge = 1;
			w->opcode = IBV_WR_SEND;
			sends++;
			break;
		case W_BIND:
		case W_BIND_FENCE:
			if (!mw)
				mw = ibv_alloc_mw(req.pd, IBV_MW_TYPE_2);
			if (!mw) {
				printf("%-15s SKIP: no type-2 memory windows\n", rc->name);
				side_free(&req);
				side_free(&rsp);
				return 0;
			}
			rkey = ibv_inc_rkey(mw->rkey);
			w->opcode = IBV_WR_BIND_MW;
			w->bind_mw.mw = mw;
			w->bind_mw.rkey = rkey;
			w->bind_mw.bind_info.mr = req.mr;
			w->bind_mw.bind_info.addr = (uintptr_t)req.buf;
			w->bind_mw.bind_info.length = MSG;
			w->bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
			if (rc->wr[i] == W_BIND_FENCE)
				w->send_flags |= IBV_SEND_FENCE;
			break;
		case W_INV:
			w->opcode = IBV_WR_LOCAL_INV;
			w->invalidate_rkey = rkey;
			break;
		default:
			break;
		}
		if (i)
			wr[i - 1].next = w;
		n++;
	}
	t0 = now_s();
	if (ibv_post_send(req.id->qp, wr, &bad)) {
		printf("%-15s POST FAILED\n", rc->name);
		errors++;
	}
	while (!errors && got < want && now_s() - t0 < 10) {
		int k;

		/* 200 ms of RNR NAKs first, then the receives */
		if (!recv_posted && now_s() - t0 > 0.2) {
			for (k = 0; k < RECVS; k++) {
				struct ibv_sge rs = {(uintptr_t)(rsp.buf + k * MSG),
						     MSG, rsp.mr->lkey};
				struct ibv_recv_wr rw = {.wr_id = 100 + (uint64_t)k,
							 .sg_list = &rs, .num_sge = 1};
				struct ibv_recv_wr *rb;

				ibv_post_recv(rsp.id->qp, &rw, &rb);
			}
			recv_posted = true;
			posted_recv = now_s() - t0;
		}
		while (ibv_poll_cq(rsp.cq, 1, &wc) > 0)
			rcvd += wc.status == IBV_WC_SUCCESS;
		k = ibv_poll_cq(req.cq, 1, &wc);
		if (k <= 0) {
			usleep(1000);
			continue;
		}
		got++;
		printf("%-15s   +%.3f s completion wr %d (%s): %s\n", rc->name,
		       now_s() - t0, (int)wc.wr_id,
		       rc->wr[wc.wr_id - 1] == W_SEND ? "Send" :
		       rc->wr[wc.wr_id - 1] == W_INV ? "LocalInv" : "Bind",
		       ibv_wc_status_str(wc.status));
		if (wc.status != IBV_WC_SUCCESS)
			errors++;
		else
			ok++;
	}
	while (ibv_poll_cq(rsp.cq, 1, &wc) > 0)
		rcvd += wc.status == IBV_WC_SUCCESS;
	if (!errors && ok == want)
		printf("%-15s PASS: %d of %d WRs signalled, all completed, "
		       "%d of %d Sends received (receives posted at +%.3f s)\n",
		       rc->name, want, n, rcvd, sends, posted_recv);
	else
		printf("%-15s %s: %d of %d signalled WRs completed in 10 s, "
		       "%d with an error; %d of %d Sends received; requester "
		       "QP state %s\n", rc->name, errors ? "FAIL" : "STALL",
		       got, want, errors, rcvd, sends, qp_state_str(req.id->qp));
	fflush(stdout);
	rdma_disconnect(req.id);
	if (mw)
		ibv_dealloc_mw(mw);
	side_free(&req);
	if (req.ech)
		rdma_destroy_event_channel(req.ech);
	side_free(&rsp);
	return !errors && ok == want ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct rdma_event_channel *lech;
	struct rdma_cm_id *lid;
	struct sockaddr_in sa;
	struct ibv_context **devs;
	int n = 0, i, j, fails = 0, ran = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s IPV4 [CASE...]\n", argv[0]);
		return 2;
	}
	devs = rdma_get_devices(&n);
	if (devs)
		rdma_free_devices(devs);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	if (n <= 0 || inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1) {
		printf("SKIP: no RDMA device, or %s is not an IPv4 address\n", argv[1]);
		return 77;
	}
	lech = rdma_create_event_channel();
	if (!lech || rdma_create_id(lech, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, (struct sockaddr *)&sa) || rdma_listen(lid, 4)) {
		printf("SKIP: cannot listen on %s over RDMA: %s\n", argv[1],
		       strerror(errno));
		return 77;
	}
	for (i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); i++) {
		bool pick = argc == 2;

		for (j = 2; j < argc; j++)
			pick |= !strcmp(argv[j], cases[i].name);
		if (!pick)
			continue;
		ran++;
		fails += run_case(argv[1], &cases[i], lech, lid);
	}
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(lech);
	if (!ran) {
		fprintf(stderr, "no such case\n");
		return 2;
	}
	return fails ? 1 : 0;
}
