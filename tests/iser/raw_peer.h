/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A raw-verbs iSER peer for the RDMA tests: librdmacm (RDMA_PS_TCP, so the
 * Annex A12 Service ID) and an RC QP, speaking just enough iSER to play
 * the other side of a libidm connection while the test checks what libidm
 * cannot see about itself: which STags it advertised, whether a peer can
 * still reach them afterwards, how the SCSI Response arrived.
 *
 * Single-threaded: every call that waits (for a CM event, a receive, a
 * send completion) calls the `pump` function between polls, which runs
 * the libidm side (idm_ctx_progress) so both ends advance in one thread.
 * Every wait is bounded by `timeout_ms`; a failure leaves the reason in
 * `err` and returns < 0.
 */
#ifndef TESTS_ISER_RAW_PEER_H
#define TESTS_ISER_RAW_PEER_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iser_wire.h"

#define RP_MSG 8448u   /* 28 + 48 + 8192 data, rounded: one Send */
#define RP_RX_N 16u
#define RP_TX_N 4u
#define RP_DATA (256u * 1024u)

typedef void (*rp_pump_fn)(void *arg);

struct rp_msg {
	uint8_t buf[RP_MSG];
	uint32_t len;
	struct ibv_wc wc; /* the receive completion, for its flags */
};

struct raw_peer {
	rp_pump_fn pump;
	void *pump_arg;
	int timeout_ms;
	char err[256];

	struct rdma_event_channel *ech;
	struct rdma_cm_id *lid; /* listener (target role) */
	struct rdma_cm_id *id;  /* the connection */
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	uint8_t *mem;           /* rx slots | tx slots | data */
	struct ibv_mr *mr;
	uint8_t *data;          /* RP_DATA bytes for RDMA and STags */
	bool established, disconnected;

	/* CM outcome */
	uint8_t req_flags, rep_flags; /* first byte of each iSER word */
	/* target role, from the REQ: RDMA Reads the initiator serves for us
	 * (its IRD) and may issue to us */
	uint8_t peer_ird, peer_ord;
	uint32_t tx_next;
	struct ibv_mw *mws[16]; /* windows of rp_mw_bind, freed at close */
	int n_mws;
};

void rp_init(struct raw_peer *p, rp_pump_fn pump, void *pump_arg,
	     int timeout_ms);

/* Target role: listen on ip, port chosen by the system. */
int rp_listen(struct raw_peer *p, const char *ip, int *port);
/* Wait for the REQ, accept it with the iSER word `rep_flags` (< 0: what
 * libidm's target would answer) and wait until established. */
int rp_accept(struct raw_peer *p, int rep_flags);
/* Initiator role: connect with the iSER word `req_flags`, serving up to
 * `ird` RDMA Reads of the target. */
int rp_connect(struct raw_peer *p, const char *ip, int port, uint8_t req_flags,
	       uint8_t ird);
/* Wait for one received Send (the slot is reposted at once). */
int rp_recv(struct raw_peer *p, struct rp_msg *m);
/* Send `len` bytes and wait for the completion. With `with_inv` the
 * Send carries Send with Invalidate of `inv_rkey`. Returns the completion
 * status (IBV_WC_SUCCESS = 0, > 0 an error status) or < 0. */
int rp_send(struct raw_peer *p, const void *msg, uint32_t len, bool with_inv,
	    uint32_t inv_rkey);
/* iSER control-type message: header `h`, a 48-byte BHS with data. */
int rp_send_pdu(struct raw_peer *p, const struct iser_hdr *h,
		const uint8_t *bhs, const void *data, uint32_t dlen,
		bool with_inv, uint32_t inv_rkey);
/* One RDMA Write (from p->data + off) or Read (into it) against the
 * other side's rkey/va; waits for the completion and returns its status
 * as rp_send does. */
int rp_rdma(struct raw_peer *p, bool write, uint32_t rkey, uint64_t va,
	    uint32_t off, uint32_t len);
/* Advertise p->data[off, off+len) through a type-2 memory window bound
 * now (remote write for a Read STag, remote read for a Write STag). */
int rp_mw_bind(struct raw_peer *p, uint32_t off, uint32_t len,
	       bool remote_write, struct ibv_mw **mw, uint32_t *rkey);
/* Did this receive carry a remote invalidation, and of which rkey?
 * rxe reports the kernel's IB_WC_WITH_INVALIDATE bit, which user space
 * reads as IBV_WC_IP_CSUM_OK (see wc_invalidated() in the provider). */
bool rp_wc_invalidated(const struct ibv_wc *wc, uint32_t *rkey);
/* Drain pending CM events; true once the other side disconnected. */
bool rp_poll_cm(struct raw_peer *p);
void rp_close(struct raw_peer *p);

#endif
