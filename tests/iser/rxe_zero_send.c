/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rxe-zero-send: a stream of RC Sends across a link whose ACKs are mostly
 * lost. Does the requester's device send only what was posted?
 *
 *   rxe-zero-send server IPV4 PORT SECONDS
 *   rxe-zero-send client IPV4 PORT SECONDS SIZE[,SIZE...] [ACK_TIMEOUT]
 *
 * No libidm here, only verbs and rdma_cm: the pattern of the iSER
 * provider with IDM_ISER_STAG=mr, where the initiator's send queue holds
 * nothing but Sends, some of several packets (a command with immediate
 * data), some of one. The server (in one host) posts receives and checks
 * every message it gets: its sequence number, its length and its bytes.
 * The client (in the other) posts the sizes in turn, 16 in flight, all
 * signalled, with a short local ACK timeout (ACK_TIMEOUT, default 10:
 * 4.096 us x 2^10, about 4 ms), so that lost ACKs make its device
 * retransmit again and again. The test drops most ACKs on the way
 * (tests/rdma-pair/rxe_zero_send.sh).
 *
 * Every message carries a 16-byte header (magic, sequence number,
 * length) and a pattern, so no correct message has 0 bytes. The server
 * counts what it should never see:
 *   zero   a message of 0 bytes (the client posts none)
 *   bad    a message out of sequence, of the wrong length or content
 * and the client the completion that ended it (a fatal NAK from the
 * server, "remote invalid request", comes back as IBV_WC_REM_INV_REQ_ERR).
 * Each prints one summary line, "server: ..." / "client: ...".
 *
 * Exit status: 0 when the run was clean (server: every message good;
 * client: every Send completed with success), 1 when it was not, 77 no
 * RDMA device at IPV4, 2 usage or set-up failure.
 */
#include <errno.h>
#include <inttypes.h>
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

#define MAGIC 0x5a534e44u /* "ZSND" */
#define MAX_MSG (128u * 1024u)
#define DEPTH 16u  /* Sends in flight */
#define RECVS 64u  /* receives posted */
#define MAX_SIZES 16

struct hdr {
	uint32_t magic, seq, len, pad;
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct side {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t len;
};

static int side_qp(struct side *s, struct rdma_cm_id *id, size_t len)
{
	struct ibv_qp_init_attr qa;

	s->len = len;
	s->buf = calloc(1, len);
	s->pd = s->buf ? ibv_alloc_pd(id->verbs) : NULL;
	s->cq = s->pd ? ibv_create_cq(id->verbs, (int)(RECVS + DEPTH), NULL, NULL, 0) : NULL;
	s->mr = s->cq ? ibv_reg_mr(s->pd, s->buf, len, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!s->mr)
		return -1;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = s->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = DEPTH;
	qa.cap.max_recv_wr = RECVS;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	return rdma_create_qp(id, s->pd, &qa);
}

static void side_free(struct side *s, struct rdma_cm_id *id)
{
	if (id && id->qp)
		rdma_destroy_qp(id);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

static void fill(uint8_t *p, uint32_t seq, uint32_t len)
{
	struct hdr h = {MAGIC, seq, len, 0};
	uint32_t i;

	memcpy(p, &h, sizeof(h));
	for (i = sizeof(h); i < len; i++)
		p[i] = (uint8_t)(seq + i);
}

/* What a received message is: 0 good, else why not (for the first one). */
static const char *check(const uint8_t *p, uint32_t got, uint32_t want_seq)
{
	struct hdr h;
	uint32_t i;

	if (got == 0)
		return "0 bytes";
	if (got < sizeof(h))
		return "shorter than its header";
	memcpy(&h, p, sizeof(h));
	if (h.magic != MAGIC)
		return "no header (a message's middle?)";
	if (h.seq != want_seq)
		return "out of sequence";
	if (h.len != got)
		return "length differs from its header";
	for (i = sizeof(h); i < got; i++)
		if (p[i] != (uint8_t)(h.seq + i))
			return "content differs";
	return NULL;
}

static int post_recv(struct rdma_cm_id *id, struct side *s, uint32_t slot)
{
	struct ibv_sge sge = {(uintptr_t)(s->buf + (size_t)slot * MAX_MSG), MAX_MSG, s->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *bad;

	return ibv_post_recv(id->qp, &wr, &bad);
}

static int server(const struct sockaddr_in *sa, int seconds)
{
	struct rdma_event_channel *ech = rdma_create_event_channel();
	struct rdma_cm_id *lid = NULL, *id = NULL;
	struct rdma_conn_param cp;
	struct side s = {0};
	struct ibv_wc wc[16];
	uint64_t good = 0, zero = 0, bad = 0;
	uint32_t seq = 0, i;
	const char *first_bad = NULL;
	char first_at[64] = "";
	enum ibv_wc_status end = IBV_WC_SUCCESS;
	double t0, deadline;
	bool disconnected = false;

	if (!ech || rdma_create_id(ech, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, (struct sockaddr *)sa) || rdma_listen(lid, 1)) {
		fprintf(stderr, "rxe-zero-send: cannot listen: %s\n", strerror(errno));
		return 2;
	}
	printf("server: listening\n");
	fflush(stdout);
	if (cm_event_wait(ech, RDMA_CM_EVENT_CONNECT_REQUEST, &id, seconds * 1000) ||
	    side_qp(&s, id, (size_t)RECVS * MAX_MSG))
		return 2;
	for (i = 0; i < RECVS; i++)
		if (post_recv(id, &s, i))
			return 2;
	memset(&cp, 0, sizeof(cp));
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if (rdma_accept(id, &cp) || cm_event_wait(ech, RDMA_CM_EVENT_ESTABLISHED, NULL, 5000))
		return 2;
	t0 = now_s();
	deadline = t0 + seconds;
	while (now_s() < deadline && !disconnected) {
		struct pollfd p = {.fd = ech->fd, .events = POLLIN};
		int n = ibv_poll_cq(s.cq, 16, wc), k;

		for (k = 0; k < n; k++) {
			const char *why;

			if (wc[k].status != IBV_WC_SUCCESS) {
				if (end == IBV_WC_SUCCESS)
					end = wc[k].status;
				continue;
			}
			why = check(s.buf + wc[k].wr_id * MAX_MSG, wc[k].byte_len, seq);
			if (!why) {
				good++;
			} else if (wc[k].byte_len == 0) {
				zero++;
			} else {
				bad++;
			}
			if (why && !first_bad) {
				first_bad = why;
				snprintf(first_at, sizeof(first_at), "message %" PRIu32 " at +%.2f s",
					 seq, now_s() - t0);
			}
			/* a good or bad message with a header moves the
			 * expected number on; a 0-byte one carries none */
			if (wc[k].byte_len >= sizeof(struct hdr)) {
				struct hdr h;

				memcpy(&h, s.buf + wc[k].wr_id * MAX_MSG, sizeof(h));
				seq = h.magic == MAGIC ? h.seq + 1 : seq + 1;
			}
			if (post_recv(id, &s, (uint32_t)wc[k].wr_id))
				end = IBV_WC_GENERAL_ERR;
		}
		if (n > 0)
			continue;
		if (poll(&p, 1, 1) == 1) {
			struct rdma_cm_event *ev;

			if (!rdma_get_cm_event(ech, &ev)) {
				disconnected = ev->event == RDMA_CM_EVENT_DISCONNECTED;
				rdma_ack_cm_event(ev);
			}
		}
	}
	printf("server: %" PRIu64 " good, %" PRIu64 " zero-byte, %" PRIu64 " bad message(s)"
	       " in %.1f s%s%s%s%s; receive queue %s\n",
	       good, zero, bad, now_s() - t0, first_bad ? "; first: " : "",
	       first_bad ? first_bad : "", first_bad ? ", " : "", first_at,
	       end == IBV_WC_SUCCESS ? "ok" : ibv_wc_status_str(end));
	fflush(stdout);
	if (!disconnected)
		rdma_disconnect(id);
	side_free(&s, id);
	rdma_destroy_id(id);
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(ech);
	return good > 0 && !zero && !bad && end == IBV_WC_SUCCESS ? 0 : 1;
}

static const char *qp_state_str(struct ibv_qp *qp)
{
	static const char *names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) || a.qp_state > IBV_QPS_ERR)
		return "?";
	return names[a.qp_state];
}

static int parse_sizes(char *arg, uint32_t *sizes)
{
	int n = 0;
	char *tok, *save = NULL;

	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long v = strtoul(tok, &end, 0);

		if (*end == 'k' || *end == 'K') {
			v *= 1024;
			end++;
		}
		if (*end || v < sizeof(struct hdr) || v > MAX_MSG || n == MAX_SIZES)
			return -1;
		sizes[n++] = (uint32_t)v;
	}
	return n;
}

static int client(const struct sockaddr_in *sa, int seconds, const uint32_t *sizes, int nsizes,
		  uint8_t ack_timeout)
{
	struct rdma_event_channel *ech = rdma_create_event_channel();
	struct rdma_cm_id *id = NULL;
	struct rdma_conn_param cp;
	struct side s = {0};
	struct ibv_wc wc[16];
	uint64_t posted = 0, done = 0, bytes = 0;
	enum ibv_wc_status end = IBV_WC_SUCCESS;
	double t0, deadline, end_at = 0;
	bool wedged = false;

	if (!ech || rdma_create_id(ech, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)sa, 2000) ||
	    cm_event_wait(ech, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, 5000) ||
	    rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &ack_timeout,
			    sizeof(ack_timeout)) ||
	    rdma_resolve_route(id, 2000) || cm_event_wait(ech, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, 5000) ||
	    side_qp(&s, id, (size_t)DEPTH * MAX_MSG))
		return 2;
	memset(&cp, 0, sizeof(cp));
	cp.retry_count = 7; /* rxe: retry for as long as ACKs keep getting lost */
	cp.rnr_retry_count = 7;
	if (rdma_connect(id, &cp) || cm_event_wait(ech, RDMA_CM_EVENT_ESTABLISHED, NULL, 5000))
		return 2;
	t0 = now_s();
	deadline = t0 + seconds;
	while (end == IBV_WC_SUCCESS) {
		int n, k;

		while (end == IBV_WC_SUCCESS && posted - done < DEPTH && now_s() < deadline) {
			uint32_t slot = (uint32_t)(posted % DEPTH);
			uint32_t len = sizes[posted % (uint64_t)nsizes];
			uint8_t *p = s.buf + (size_t)slot * MAX_MSG;
			struct ibv_sge sge = {(uintptr_t)p, len, s.mr->lkey};
			struct ibv_send_wr wr = {.wr_id = posted, .sg_list = &sge, .num_sge = 1,
						 .opcode = IBV_WR_SEND,
						 .send_flags = IBV_SEND_SIGNALED}, *bad;

			fill(p, (uint32_t)posted, len);
			if (ibv_post_send(id->qp, &wr, &bad)) {
				end = IBV_WC_GENERAL_ERR;
				break;
			}
			posted++;
		}
		if (posted == done)
			break;
		/* nothing completes for 20 s: the queue is wedged */
		if (now_s() > deadline + 20) {
			wedged = true;
			break;
		}
		n = ibv_poll_cq(s.cq, 16, wc);
		for (k = 0; k < n; k++) {
			if (wc[k].status != IBV_WC_SUCCESS) {
				if (end == IBV_WC_SUCCESS) {
					end = wc[k].status;
					end_at = now_s() - t0;
				}
				continue;
			}
			done++;
			bytes += sizes[wc[k].wr_id % (uint64_t)nsizes];
		}
		if (n == 0)
			usleep(200);
	}
	printf("client: %" PRIu64 " Sends posted, %" PRIu64 " completed (%.1f MB) in %.1f s",
	       posted, done, (double)bytes / 1e6, now_s() - t0);
	if (end != IBV_WC_SUCCESS)
		printf("; ended by %s at +%.2f s", ibv_wc_status_str(end), end_at);
	if (wedged)
		printf("; %" PRIu64 " still outstanding 20 s after the last was posted, "
		       "without an error (QP %s)", posted - done, qp_state_str(id->qp));
	printf("\n");
	fflush(stdout);
	rdma_disconnect(id);
	side_free(&s, id);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ech);
	return end == IBV_WC_SUCCESS && done == posted && posted > 0 ? 0 : 1;
}

static int usage(const char *me)
{
	fprintf(stderr,
		"usage: %s server IPV4 PORT SECONDS\n"
		"       %s client IPV4 PORT SECONDS SIZE[,SIZE...] [ACK_TIMEOUT]\n", me, me);
	return 2;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	struct ibv_context **devs;
	uint32_t sizes[MAX_SIZES];
	int n = 0, seconds, nsizes = 0;
	unsigned long t = 10;
	bool is_server;

	if (argc < 5)
		return usage(argv[0]);
	is_server = !strcmp(argv[1], "server");
	if (!is_server && (strcmp(argv[1], "client") || argc < 6))
		return usage(argv[0]);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)atoi(argv[3]));
	seconds = atoi(argv[4]);
	if (inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1 || seconds <= 0)
		return usage(argv[0]);
	if (!is_server) {
		nsizes = parse_sizes(argv[5], sizes);
		if (argc > 6)
			t = strtoul(argv[6], NULL, 0);
		if (nsizes <= 0 || t > 31)
			return usage(argv[0]);
	}
	devs = rdma_get_devices(&n);
	if (devs)
		rdma_free_devices(devs);
	if (n <= 0) {
		printf("SKIP: no RDMA device\n");
		return 77;
	}
	return is_server ? server(&sa, seconds) : client(&sa, seconds, sizes, nsizes, (uint8_t)t);
}
