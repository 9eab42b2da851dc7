/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Connection management with librdmacm. RDMA_PS_TCP makes the Service ID
 * 0x0000000001060000 | port (Annex A12 CA12-3) without building it by hand.
 * The CM REQ/REP private data carry the 4-byte iSER word (ZBVA never used,
 * Send with Invalidate per connection); IRD/ORD travel as the CM's
 * responder_resources/initiator_depth. Every connection gets its own event
 * channel (accepted ids are migrated off the listener's) whose fd is in
 * the context's epoll set.
 */
#include "iser_cm.h"
#include "iser_conn.h"
#include "iser_cq.h"
#include "iser_fail.h"
#include "iser_qp.h"
#include "iser_recv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

static int neg_errno(int fallback)
{
	return errno > 0 ? -errno : -fallback;
}

/* The local ACK timeout. Transport retries stay finite (IDM_ISER_RETRY
 * <= 6; 7 means "forever" on rxe), RNR ones do not (ISER_RNR_RETRY): the
 * keepalive probe's liveness deadline bounds both (iser_timer_watch). */
static void set_timeouts(struct iser_conn *ic)
{
	uint8_t t = (uint8_t)ic->ip->ack_timeout;

	if (rdma_set_option(ic->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			    &t, sizeof(t)))
		idm_prov_dbg(ic->ctx, "iser: cannot set the ACK timeout: %s",
			 strerror(errno));
}

/* ---- events of one connection ------------------------------------------ */

static void established(struct iser_conn *ic, const void *priv, size_t len)
{
	struct idm_conn *c = ic->conn;
	struct iser_cm_nego nego;

	if (idm_conn_role(c) == IDM_ROLE_INITIATOR) {
		ic->rep_flags = iser_cm_word_flags(priv, len);
		if (!(ic->rep_flags & ISER_CM_ZBVA_NOT_USED))
			/* we said we cannot do ZBVA (A12.6): a peer that
			 * still wants it is tgt sending no private data; it
			 * uses virtual addresses all the same. */
			idm_prov_dbg(ic->ctx, "iser: target REP without ZBVA exception");
	}
	iser_cm_negotiate(ic->req_flags, ic->rep_flags, &nego);
	ic->send_inv = nego.send_inv;
	ic->state = ISER_UP;
	idm_prov_conn_set_names(c, rdma_get_local_addr(ic->id),
			    rdma_get_peer_addr(ic->id));
	idm_prov_dbg(ic->ctx, "iser: %s connected (REQ %#x REP %#x, SendInv %s, ORD %u)",
		 idm_conn_peer_name(c), ic->req_flags, ic->rep_flags,
		 ic->send_inv ? "yes" : "no", ic->ord);
	if (idm_conn_role(c) == IDM_ROLE_INITIATOR)
		idm_prov_conn_connected(c, 0);
	iser_cq_poll(ic, true);
	iser_cq_poll(ic, false);
}

static void route_resolved(struct iser_conn *ic)
{
	struct rdma_conn_param cp;
	uint8_t pd[ISER_CM_WORD_LEN];
	int r;

	r = iser_qp_create(ic);
	if (r < 0) {
		iser_conn_fail(ic, r, "cannot create the QP: %s", strerror(-r));
		return;
	}
	/* Our STags are memory windows when the device has them: those the
	 * target may invalidate remotely. Plain MRs cannot be (rxe fails the
	 * receive), so then say Send with Invalidate is not supported. */
	ic->use_mw = ic->dev->has_mw;
	ic->req_flags = ISER_CM_ZBVA_NOT_SUP |
			(ic->use_mw ? 0 : ISER_CM_SEND_INV_NOT_SUP);
	iser_cm_word_encode(pd, ic->req_flags);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pd;
	cp.private_data_len = sizeof(pd);
	/* We serve the target's RDMA Reads (IRD); we issue none. */
	cp.responder_resources = (uint8_t)(ic->dev->max_rd_atom > 255
						   ? 255 : ic->dev->max_rd_atom);
	cp.initiator_depth = 1;
	cp.retry_count = (uint8_t)ic->ip->retry_count;
	cp.rnr_retry_count = ISER_RNR_RETRY;
	ic->ird = cp.responder_resources;
	if (rdma_connect(ic->id, &cp)) {
		r = neg_errno(EIO);
		iser_conn_fail(ic, r, "rdma_connect: %s", strerror(-r));
	}
}

static void conn_event(struct iser_conn *ic, struct rdma_cm_event *ev,
		       const uint8_t *priv, size_t priv_len)
{
	int r;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		set_timeouts(ic);
		if (rdma_resolve_route(ic->id, ic->timeout_ms)) {
			r = neg_errno(EHOSTUNREACH);
			iser_conn_fail(ic, r, "rdma_resolve_route: %s", strerror(-r));
		}
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		route_resolved(ic);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		established(ic, priv, priv_len);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		iser_conn_fail(ic, -EHOSTUNREACH, "no RDMA route to the peer (%s)",
			       rdma_event_str(ev->event));
		break;
	case RDMA_CM_EVENT_REJECTED:
		/* e.g. "Invalid Service ID": no iSER there; "auto" then
		 * falls back to TCP */
		iser_conn_fail(ic, -ECONNREFUSED, "connection rejected (status %d)",
			       ev->status);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		iser_conn_fail(ic, -ETIMEDOUT, "%s (status %d)",
			       rdma_event_str(ev->event), ev->status);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		iser_conn_fail(ic, -ECONNRESET, "peer disconnected");
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		iser_conn_fail(ic, -ENODEV, "RDMA device removed");
		break;
	default:
		break;
	}
}

static void conn_cm_watch(struct idm_prov_watch *w, uint32_t revents)
{
	struct iser_conn *ic = IDM_PROV_CONTAINER_OF(w, struct iser_conn, cm_w);
	struct rdma_cm_event *ev;

	(void)revents;
	while (rdma_get_cm_event(ic->ech, &ev) == 0) {
		struct rdma_cm_event copy = *ev;
		uint8_t priv[ISER_CM_WORD_LEN] = {0};
		size_t plen = 0;

		/* private data lives only until the ack */
		if (ev->param.conn.private_data &&
		    ev->param.conn.private_data_len >= ISER_CM_WORD_LEN) {
			memcpy(priv, ev->param.conn.private_data, sizeof(priv));
			plen = sizeof(priv);
		}
		rdma_ack_cm_event(ev);
		if (ic->state != ISER_DOWN)
			conn_event(ic, &copy, priv, plen);
		if (ic->state == ISER_DOWN && copy.event == RDMA_CM_EVENT_DISCONNECTED)
			break;
	}
}

/* ---- initiator ------------------------------------------------------------ */

int iser_conn_is_capable(struct idm_prov *prov, const struct sockaddr *sa,
			 socklen_t salen)
{
	struct ibv_device **list;
	int n = 0;

	(void)prov;
	(void)sa;
	(void)salen;
	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	return n > 0 ? 0 : -ENODEV;
}

int iser_connect(struct idm_conn *c, const struct sockaddr *sa, socklen_t salen,
		 int timeout_ms)
{
	struct iser_prov *ip = idm_prov_priv(idm_prov_conn_provider(c));
	struct iser_conn *ic;
	int r;

	(void)salen;
	ic = iser_conn_new(ip, idm_prov_conn_ctx(c), ip->ini_role);
	if (!ic)
		return -ENOMEM;
	iser_conn_bind(ic, c, IDM_ROLE_INITIATOR);
	ic->timeout_ms = timeout_ms > 0 ? timeout_ms : 10000;
	idm_prov_conn_set_priv(c, ic);
	ic->state = ISER_RESOLVING;
	if (rdma_create_id(ic->ech, &ic->id, ic, RDMA_PS_TCP))
		return neg_errno(ENOMEM);
	r = idm_prov_watch_add(idm_prov_conn_ctx(c), &ic->cm_w, ic->ech->fd, EPOLLIN, conn_cm_watch);
	if (r < 0)
		return r;
	if (rdma_resolve_addr(ic->id, NULL, (struct sockaddr *)sa, ic->timeout_ms))
		return neg_errno(EHOSTUNREACH);
	return 0;
}

/* ---- target ------------------------------------------------------------------ */

/* accept_request: the QP and the first login buffer, then the answer to
 * the initiator's request with the RDMA Read depths both ends can serve
 * and the iSER CM word (RFC 7145 Annex A12 flags). */
static void accept_request(struct iser_conn *ic, struct rdma_cm_id *id,
			   const struct rdma_conn_param *req)
{
	struct rdma_conn_param cp;
	uint8_t pd[ISER_CM_WORD_LEN];
	int r;

	/* RDMA CM wants the QP at rdma_accept(), which comes next */
	r = iser_qp_create(ic);
	if (r < 0) {
		rdma_reject(id, NULL, 0);
		iser_conn_fail(ic, r, "QP creation: %s", strerror(-r));
		return;
	}
	/* The first Login Request needs a buffer before we accept (on a
	 * shared receive queue it has one already). */
	if (iser_expect_login_pdu(ic) < 0) {
		rdma_reject(id, NULL, 0);
		iser_conn_fail(ic, -ENOMEM, "cannot post the login buffer");
		return;
	}
	/* RDMA Read depth: what the initiator serves, capped by the device */
	ic->ord = req->initiator_depth;
	if (ic->ord > ic->dev->max_rd_atom)
		ic->ord = ic->dev->max_rd_atom;
	ic->ird = req->responder_resources < ic->dev->max_rd_atom
			  ? req->responder_resources : ic->dev->max_rd_atom;
	ic->rep_flags = iser_cm_rep_flags(ic->req_flags, true);
	iser_cm_word_encode(pd, ic->rep_flags);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pd;
	cp.private_data_len = sizeof(pd);
	cp.initiator_depth = (uint8_t)ic->ord;
	cp.responder_resources = (uint8_t)ic->ird;
	cp.retry_count = (uint8_t)ic->ip->retry_count;
	cp.rnr_retry_count = ISER_RNR_RETRY;
	if (rdma_accept(id, &cp)) {
		r = neg_errno(EIO);
		iser_conn_fail(ic, r, "rdma_accept: %s", strerror(-r));
	}
}

static void connect_request(struct iser_listener *il, struct rdma_cm_id *id,
			    const struct rdma_conn_param *req, uint8_t req_flags)
{
	struct iser_prov *ip = il->ip;
	struct idm_ctx *ctx = idm_prov_listener_ctx(il->l);
	struct iser_conn *ic;
	struct idm_conn *c = NULL;
	const char *why = NULL;
	int r;

	ic = iser_conn_new(ip, ctx, ip->tgt_role);
	if (!ic) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return;
	}
	ic->id = id;
	id->context = ic;
	ic->state = ISER_ACCEPTING;
	ic->req_flags = req_flags;
	if (rdma_migrate_id(id, ic->ech)) {
		why = "rdma_migrate_id";
		goto refuse;
	}
	if (idm_prov_watch_add(ctx, &ic->cm_w, ic->ech->fd, EPOLLIN, conn_cm_watch)) {
		why = "epoll";
		goto refuse;
	}
	set_timeouts(ic);

	/* Ask the caller first: a request it refuses (over a login budget,
	 * say) costs no CQ, QP or login buffer. */
	r = idm_prov_conn_accepted(il->l, ic, rdma_get_local_addr(id),
			       rdma_get_peer_addr(id), &c);
	if (r < 0) {
		why = "refused by the caller";
		goto refuse;
	}
	iser_conn_bind(ic, c, IDM_ROLE_TARGET);
	if (ic->state != ISER_ACCEPTING) {
		/* terminated from the accept callback: the core frees ic
		 * with its connection */
		rdma_reject(id, NULL, 0);
		return;
	}
	accept_request(ic, id, req);
	return;

refuse:
	idm_prov_info(ctx, "iser: connection request refused: %s", why);
	rdma_reject(id, NULL, 0);
	iser_conn_destroy(ic);
}

static void listener_watch(struct idm_prov_watch *w, uint32_t revents)
{
	struct iser_listener *il = IDM_PROV_CONTAINER_OF(w, struct iser_listener, w);
	struct rdma_cm_event *ev;

	(void)revents;
	while (rdma_get_cm_event(il->ech, &ev) == 0) {
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			struct rdma_cm_id *id = ev->id;
			struct rdma_conn_param req = ev->param.conn;
			/* REQ private data is zero-padded by the CM: only the
			 * iSER word is read, never the length (A12 Table 2). */
			uint8_t flags = iser_cm_word_flags(
				req.private_data, req.private_data_len);

			req.private_data = NULL;
			rdma_ack_cm_event(ev);
			connect_request(il, id, &req, flags);
			continue;
		}
		rdma_ack_cm_event(ev);
	}
}

int iser_listen(struct idm_prov_listener *l, const struct sockaddr *sa,
		socklen_t salen, int backlog)
{
	struct iser_prov *ip = idm_prov_priv(idm_prov_listener_provider(l));
	struct iser_listener *il;
	int r;

	(void)salen;
	il = calloc(1, sizeof(*il));
	if (!il)
		return -ENOMEM;
	il->ip = ip;
	il->l = l;
	il->ech = rdma_create_event_channel();
	if (!il->ech) {
		r = neg_errno(ENODEV);
		goto fail;
	}
	r = iser_nonblock(il->ech->fd);
	if (r < 0)
		goto fail;
	if (rdma_create_id(il->ech, &il->id, il, RDMA_PS_TCP)) {
		r = neg_errno(ENODEV);
		goto fail;
	}
	if (rdma_bind_addr(il->id, (struct sockaddr *)sa) ||
	    rdma_listen(il->id, backlog)) {
		r = neg_errno(EADDRNOTAVAIL);
		goto fail;
	}
	il->port = ntohs(rdma_get_src_port(il->id));
	r = idm_prov_watch_add(idm_prov_listener_ctx(l), &il->w, il->ech->fd, EPOLLIN,
			   listener_watch);
	if (r < 0)
		goto fail;
	idm_prov_listener_set_priv(l, il);
	return 0;
fail:
	if (il->id)
		rdma_destroy_id(il->id);
	if (il->ech)
		rdma_destroy_event_channel(il->ech);
	free(il);
	return r;
}

void iser_unlisten(struct idm_prov_listener *l)
{
	struct iser_listener *il = idm_prov_listener_priv(l);

	if (!il)
		return;
	if (il->w.added)
		idm_prov_watch_del(idm_prov_listener_ctx(l), &il->w);
	rdma_destroy_id(il->id);
	rdma_destroy_event_channel(il->ech);
	free(il);
	idm_prov_listener_set_priv(l, NULL);
}

int iser_listener_port(struct idm_prov_listener *l)
{
	struct iser_listener *il = idm_prov_listener_priv(l);

	return il ? il->port : -EINVAL; /* provider.h: a negative errno */
}
