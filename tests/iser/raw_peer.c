/* SPDX-License-Identifier: BSD-2-Clause */
/* The raw-verbs iSER test peer (raw_peer.h). */
#include "raw_peer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libidm/iscsi.h>

#define RP_SQ 32

static int fail(struct raw_peer *p, int r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct raw_peer *p, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
	return r < 0 ? r : -EIO;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void rp_init(struct raw_peer *p, rp_pump_fn pump, void *pump_arg,
	     int timeout_ms)
{
	memset(p, 0, sizeof(*p));
	p->pump = pump;
	p->pump_arg = pump_arg;
	p->timeout_ms = timeout_ms;
}

static void pump(struct raw_peer *p)
{
	if (p->pump)
		p->pump(p->pump_arg);
}

static int make_channel(struct raw_peer *p)
{
	int fl;

	p->ech = rdma_create_event_channel();
	if (!p->ech)
		return fail(p, -errno, "rdma_create_event_channel: %s",
			    strerror(errno));
	/* never block: the libidm side must keep running while we wait */
	fl = fcntl(p->ech->fd, F_GETFL);
	if (fl < 0 || fcntl(p->ech->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return fail(p, -errno, "fcntl: %s", strerror(errno));
	return 0;
}

static int make_addr(struct raw_peer *p, const char *ip, int port,
		     struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, ip, &sa->sin_addr) != 1)
		return fail(p, -EINVAL, "bad IPv4 address %s", ip);
	return 0;
}

/* Events we are not waiting for only update the state. */
static void note_event(struct raw_peer *p, const struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
	    ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT)
		p->disconnected = true;
}

bool rp_poll_cm(struct raw_peer *p)
{
	struct rdma_cm_event *ev;

	while (p->ech && rdma_get_cm_event(p->ech, &ev) == 0) {
		note_event(p, ev);
		rdma_ack_cm_event(ev);
	}
	return p->disconnected;
}

/* Wait for `want`; the caller acks the event it gets. */
static int wait_event(struct raw_peer *p, enum rdma_cm_event_type want,
		      struct rdma_cm_event **out)
{
	double end = now_s() + p->timeout_ms / 1000.0;
	struct rdma_cm_event *ev;

	for (;;) {
		if (rdma_get_cm_event(p->ech, &ev) == 0) {
			if (ev->event == want) {
				*out = ev;
				return 0;
			}
			note_event(p, ev);
			if (ev->event == RDMA_CM_EVENT_REJECTED ||
			    ev->event == RDMA_CM_EVENT_CONNECT_ERROR ||
			    ev->event == RDMA_CM_EVENT_UNREACHABLE ||
			    ev->event == RDMA_CM_EVENT_ADDR_ERROR ||
			    ev->event == RDMA_CM_EVENT_ROUTE_ERROR) {
				int st = ev->status;

				rdma_ack_cm_event(ev);
				return fail(p, -ECONNREFUSED, "waiting for %s: %s (%d)",
					    rdma_event_str(want),
					    rdma_event_str(ev->event), st);
			}
			rdma_ack_cm_event(ev);
			continue;
		}
		if (errno != EAGAIN)
			return fail(p, -errno, "rdma_get_cm_event: %s",
				    strerror(errno));
		if (now_s() > end)
			return fail(p, -ETIMEDOUT, "timed out waiting for %s",
				    rdma_event_str(want));
		pump(p);
	}
}

static int post_rx(struct raw_peer *p, uint32_t slot)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(p->mem + slot * RP_MSG),
			      .length = RP_MSG, .lkey = p->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad;
	int r = ibv_post_recv(p->qp, &wr, &bad);

	return r ? fail(p, -r, "ibv_post_recv: %s", strerror(r)) : 0;
}

/* QP, CQs (polled, no channel) and one registered area on `id`. */
static int setup_qp(struct raw_peer *p, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa;
	size_t size = (size_t)(RP_RX_N + RP_TX_N) * RP_MSG + RP_DATA;
	uint32_t i;
	int r;

	p->id = id;
	p->pd = ibv_alloc_pd(id->verbs);
	if (!p->pd)
		return fail(p, -ENOMEM, "ibv_alloc_pd failed");
	p->scq = ibv_create_cq(id->verbs, RP_SQ, NULL, NULL, 0);
	p->rcq = ibv_create_cq(id->verbs, RP_RX_N, NULL, NULL, 0);
	if (!p->scq || !p->rcq)
		return fail(p, -ENOMEM, "ibv_create_cq failed");
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = p->scq;
	qa.recv_cq = p->rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = RP_SQ;
	qa.cap.max_recv_wr = RP_RX_N;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, p->pd, &qa))
		return fail(p, -errno, "rdma_create_qp: %s", strerror(errno));
	p->qp = id->qp;
	if (posix_memalign((void **)&p->mem, 4096, size))
		return fail(p, -ENOMEM, "out of memory");
	memset(p->mem, 0, size);
	p->data = p->mem + (size_t)(RP_RX_N + RP_TX_N) * RP_MSG;
	/* No remote access on the MR itself: only windows bound on it
	 * (rp_mw_bind) give the other side any. */
	p->mr = ibv_reg_mr(p->pd, p->mem, size,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	if (!p->mr)
		return fail(p, -errno, "ibv_reg_mr: %s", strerror(errno));
	for (i = 0; i < RP_RX_N; i++) {
		r = post_rx(p, i);
		if (r < 0)
			return r;
	}
	return 0;
}

static uint8_t cap_rd(struct rdma_cm_id *id, uint8_t want, bool init)
{
	struct ibv_device_attr a;
	int max;

	if (ibv_query_device(id->verbs, &a))
		return want;
	max = init ? a.max_qp_init_rd_atom : a.max_qp_rd_atom;
	return want > max ? (uint8_t)max : want;
}

int rp_listen(struct raw_peer *p, const char *ip, int *port)
{
	struct sockaddr_in sa;
	int r;

	r = make_channel(p);
	if (r == 0)
		r = make_addr(p, ip, 0, &sa);
	if (r < 0)
		return r;
	if (rdma_create_id(p->ech, &p->lid, p, RDMA_PS_TCP))
		return fail(p, -errno, "rdma_create_id: %s", strerror(errno));
	if (rdma_bind_addr(p->lid, (struct sockaddr *)&sa) ||
	    rdma_listen(p->lid, 4))
		return fail(p, -errno, "listen on %s: %s", ip, strerror(errno));
	*port = ntohs(rdma_get_src_port(p->lid));
	return 0;
}

int rp_accept(struct raw_peer *p, int rep_flags)
{
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	struct rdma_cm_id *id;
	uint8_t word[ISER_CM_WORD_LEN];
	int r;

	r = wait_event(p, RDMA_CM_EVENT_CONNECT_REQUEST, &ev);
	if (r < 0)
		return r;
	id = ev->id;
	/* A12 Table 2: only the first 4 bytes (the CM zero-pads) */
	p->req_flags = iser_cm_word_flags(ev->param.conn.private_data,
					  ev->param.conn.private_data_len);
	/* the passive side sees the REQ's values from its own point of
	 * view: initiator_depth is what the peer serves (its IRD) */
	p->peer_ird = ev->param.conn.initiator_depth;
	p->peer_ord = ev->param.conn.responder_resources;
	rdma_ack_cm_event(ev);
	r = setup_qp(p, id);
	if (r < 0) {
		rdma_reject(id, NULL, 0);
		return r;
	}
	p->rep_flags = rep_flags < 0 ? iser_cm_rep_flags(p->req_flags, true)
				     : (uint8_t)rep_flags;
	iser_cm_word_encode(word, p->rep_flags);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = word;
	cp.private_data_len = sizeof(word);
	cp.initiator_depth = cap_rd(id, p->peer_ird, true);
	cp.responder_resources = cap_rd(id, p->peer_ord ? p->peer_ord : 1, false);
	cp.retry_count = 6;
	cp.rnr_retry_count = 6;
	if (rdma_accept(id, &cp))
		return fail(p, -errno, "rdma_accept: %s", strerror(errno));
	r = wait_event(p, RDMA_CM_EVENT_ESTABLISHED, &ev);
	if (r < 0)
		return r;
	rdma_ack_cm_event(ev);
	p->established = true;
	return 0;
}

int rp_connect(struct raw_peer *p, const char *ip, int port, uint8_t req_flags,
	       uint8_t ird)
{
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	struct sockaddr_in sa;
	uint8_t word[ISER_CM_WORD_LEN];
	int r;

	r = make_channel(p);
	if (r == 0)
		r = make_addr(p, ip, port, &sa);
	if (r < 0)
		return r;
	if (rdma_create_id(p->ech, &p->id, p, RDMA_PS_TCP))
		return fail(p, -errno, "rdma_create_id: %s", strerror(errno));
	if (rdma_resolve_addr(p->id, NULL, (struct sockaddr *)&sa, 5000))
		return fail(p, -errno, "rdma_resolve_addr: %s", strerror(errno));
	r = wait_event(p, RDMA_CM_EVENT_ADDR_RESOLVED, &ev);
	if (r < 0)
		return r;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(p->id, 5000))
		return fail(p, -errno, "rdma_resolve_route: %s", strerror(errno));
	r = wait_event(p, RDMA_CM_EVENT_ROUTE_RESOLVED, &ev);
	if (r < 0)
		return r;
	rdma_ack_cm_event(ev);
	r = setup_qp(p, p->id);
	if (r < 0)
		return r;
	p->req_flags = req_flags;
	iser_cm_word_encode(word, req_flags);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = word;
	cp.private_data_len = sizeof(word);
	cp.responder_resources = cap_rd(p->id, ird, false);
	cp.initiator_depth = 1;
	cp.retry_count = 6;
	cp.rnr_retry_count = 6;
	if (rdma_connect(p->id, &cp))
		return fail(p, -errno, "rdma_connect: %s", strerror(errno));
	r = wait_event(p, RDMA_CM_EVENT_ESTABLISHED, &ev);
	if (r < 0)
		return r;
	p->rep_flags = iser_cm_word_flags(ev->param.conn.private_data,
					  ev->param.conn.private_data_len);
	rdma_ack_cm_event(ev);
	p->established = true;
	return 0;
}

int rp_recv(struct raw_peer *p, struct rp_msg *m)
{
	double end = now_s() + p->timeout_ms / 1000.0;
	struct ibv_wc wc;
	int n;

	for (;;) {
		n = ibv_poll_cq(p->rcq, 1, &wc);
		if (n < 0)
			return fail(p, -EIO, "ibv_poll_cq failed");
		if (n == 1)
			break;
		/* nothing more will come: fail now, not at the timeout */
		if (rp_poll_cm(p))
			return fail(p, -ECONNRESET, "disconnected while waiting "
				    "for a Send");
		if (now_s() > end)
			return fail(p, -ETIMEDOUT, "timed out waiting for a Send");
		pump(p);
	}
	if (wc.status != IBV_WC_SUCCESS)
		return fail(p, -EIO, "receive failed: %s",
			    ibv_wc_status_str(wc.status));
	if (wc.wr_id >= RP_RX_N || wc.byte_len > RP_MSG)
		return fail(p, -EIO, "bad receive completion");
	memcpy(m->buf, p->mem + wc.wr_id * RP_MSG, wc.byte_len);
	m->len = wc.byte_len;
	m->wc = wc;
	return post_rx(p, (uint32_t)wc.wr_id);
}

/* Post one signalled WR and wait for its completion: the peer keeps
 * exactly one send-queue WR outstanding, so nothing needs tracking. */
static int post_wait(struct raw_peer *p, struct ibv_send_wr *wr)
{
	double end = now_s() + p->timeout_ms / 1000.0;
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int r, n;

	wr->wr_id = 0x5a;
	wr->send_flags |= IBV_SEND_SIGNALED;
	r = ibv_post_send(p->qp, wr, &bad);
	if (r)
		return fail(p, -r, "ibv_post_send: %s", strerror(r));
	for (;;) {
		n = ibv_poll_cq(p->scq, 1, &wc);
		if (n < 0)
			return fail(p, -EIO, "ibv_poll_cq failed");
		if (n == 1)
			break;
		/* A retry-exhausted WR takes ~7 ACK timeouts: allow that. */
		if (now_s() > end)
			return fail(p, -ETIMEDOUT, "timed out waiting for a "
				    "send-queue completion");
		pump(p);
	}
	if (wc.status != IBV_WC_SUCCESS)
		snprintf(p->err, sizeof(p->err), "completion: %s (vendor %#x)",
			 ibv_wc_status_str(wc.status), wc.vendor_err);
	return (int)wc.status;
}

/* The next send slot; one Send at a time, so any slot is free. */
static uint8_t *tx_slot(struct raw_peer *p)
{
	uint8_t *slot = p->mem + (RP_RX_N + p->tx_next) * RP_MSG;

	p->tx_next = (p->tx_next + 1) % RP_TX_N;
	return slot;
}

static int send_slot(struct raw_peer *p, uint8_t *slot, uint32_t len,
		     bool with_inv, uint32_t inv_rkey)
{
	struct ibv_sge sge = {.addr = (uintptr_t)slot, .length = len,
			      .lkey = p->mr->lkey};
	struct ibv_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = with_inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND;
	wr.invalidate_rkey = inv_rkey;
	return post_wait(p, &wr);
}

int rp_send(struct raw_peer *p, const void *msg, uint32_t len, bool with_inv,
	    uint32_t inv_rkey)
{
	uint8_t *slot;

	if (len > RP_MSG)
		return fail(p, -EMSGSIZE, "message too long");
	slot = tx_slot(p);
	memcpy(slot, msg, len);
	return send_slot(p, slot, len, with_inv, inv_rkey);
}

int rp_send_pdu(struct raw_peer *p, const struct iser_hdr *h,
		const uint8_t *bhs, const void *data, uint32_t dlen,
		bool with_inv, uint32_t inv_rkey)
{
	uint32_t len = ISER_HDR_LEN + IDM_ISCSI_BHS_LEN + dlen;
	uint8_t *slot;

	if (len > RP_MSG)
		return fail(p, -EMSGSIZE, "PDU too long");
	slot = tx_slot(p);
	iser_hdr_encode(slot, h);
	memcpy(slot + ISER_HDR_LEN, bhs, IDM_ISCSI_BHS_LEN);
	idm_iscsi_bhs_set_data_len(slot + ISER_HDR_LEN, dlen);
	if (dlen)
		memcpy(slot + ISER_HDR_LEN + IDM_ISCSI_BHS_LEN, data, dlen);
	return send_slot(p, slot, len, with_inv, inv_rkey);
}

int rp_rdma(struct raw_peer *p, bool write, uint32_t rkey, uint64_t va,
	    uint32_t off, uint32_t len)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(p->data + off), .length = len,
			      .lkey = p->mr->lkey};
	struct ibv_send_wr wr;

	if ((uint64_t)off + len > RP_DATA)
		return fail(p, -ERANGE, "RDMA beyond the peer's data area");
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = va;
	wr.wr.rdma.rkey = rkey;
	return post_wait(p, &wr);
}

int rp_mw_bind(struct raw_peer *p, uint32_t off, uint32_t len,
	       bool remote_write, struct ibv_mw **out, uint32_t *rkey)
{
	struct ibv_send_wr wr;
	struct ibv_mw *mw;
	uint32_t key;
	int r;

	if (p->n_mws == (int)(sizeof(p->mws) / sizeof(p->mws[0])))
		return fail(p, -ENOSPC, "too many windows");
	mw = ibv_alloc_mw(p->pd, IBV_MW_TYPE_2);
	if (!mw)
		return fail(p, -errno, "ibv_alloc_mw: %s", strerror(errno));
	p->mws[p->n_mws++] = mw;
	key = ibv_inc_rkey(mw->rkey);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = key;
	wr.bind_mw.bind_info.mr = p->mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)(p->data + off);
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags =
		remote_write ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ;
	r = post_wait(p, &wr);
	if (r != IBV_WC_SUCCESS)
		return r < 0 ? r : fail(p, -EIO, "bind: %s", p->err);
	mw->rkey = key;
	*out = mw;
	*rkey = key;
	return 0;
}

bool rp_wc_invalidated(const struct ibv_wc *wc, uint32_t *rkey)
{
	bool inv = (wc->wc_flags & IBV_WC_WITH_INV) ||
		   ((wc->wc_flags & IBV_WC_IP_CSUM_OK) && wc->invalidated_rkey);

	*rkey = inv ? wc->invalidated_rkey : 0;
	return inv;
}

void rp_close(struct raw_peer *p)
{
	int i;

	if (p->id && p->established && !p->disconnected)
		rdma_disconnect(p->id);
	if (p->qp)
		rdma_destroy_qp(p->id);
	p->qp = NULL;
	/* windows before the MR they are bound on, after the QP */
	for (i = 0; i < p->n_mws; i++)
		ibv_dealloc_mw(p->mws[i]);
	p->n_mws = 0;
	if (p->mr)
		ibv_dereg_mr(p->mr);
	free(p->mem);
	if (p->scq)
		ibv_destroy_cq(p->scq);
	if (p->rcq)
		ibv_destroy_cq(p->rcq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->id)
		rdma_destroy_id(p->id);
	if (p->lid)
		rdma_destroy_id(p->lid);
	if (p->ech)
		rdma_destroy_event_channel(p->ech);
	p->id = p->lid = NULL;
	p->ech = NULL;
	p->mr = NULL;
	p->mem = p->data = NULL;
	p->scq = p->rcq = NULL;
	p->pd = NULL;
}
