/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ops->conn_move: an iSER connection changes context (idm_conn_move()).
 *
 * What a connection has, and what moving it means:
 *  - event sources: its own rdma_cm event channel (cm_w; a target's id
 *    was migrated off the listener's channel at accept), a completion
 *    channel per CQ (scq_w, rcq_w) and the keepalive timerfd (timer_w).
 *    None is tied to a thread or a context: the watches leave the
 *    source's epoll set for the destination's, as tcp_move.c does with
 *    its socket. The CQs, the QP and the cm_id themselves stay as they
 *    are: verbs objects are not bound to the thread that polls them.
 *  - deferred items: a Put/Get_Data whose completion was deferred
 *    (struct iser_dop.done, in the core's transfer record) goes to the
 *    destination's queue; the core moves the connection's own.
 *  - provider state per context: ic->ip (settings read from the same
 *    environment in every context, the parked cm_ids of that context,
 *    which a live connection is not on) becomes the destination's; the
 *    shared receive queue (IDM_CTX_SHARED_RECV) is per context and
 *    device, posted to and refilled by the source's thread for all of
 *    its connections, so a connection attached to one cannot leave
 *    (-EOPNOTSUPP).
 *  - memory: the QP, the message pools, the memory windows and every
 *    caller buffer registered for the connection live in the protection
 *    domain of ic->dev, and a QP cannot change its PD. The core moves a
 *    connection of a provider that registers memory only between
 *    contexts of one libidm domain (idm_domain_create; -EXDEV otherwise,
 *    lib/conn_move.c), and the devices with their PDs are the domain's
 *    (struct iser_dom): ic->dev is the destination's entry for the
 *    device as well, and buffers of any context of the domain are
 *    registered in that PD. So anything may move: login or full feature
 *    phase, with data in flight.
 * Nothing of a QP, CQ or completion channel is bound to a thread or an
 * epoll set, so a live full-feature connection moves as well as one in
 * its login; only the shared receive queue, which is one context's,
 * holds a connection back.
 * The order follows the op's contract: the check first (nothing
 * changed on failure), then each watch (one that
 * cannot be added puts the others back on the source), then the rest,
 * which cannot fail. Both contexts' locks are held and no callback of
 * the connection runs, so no completion is handled meanwhile.
 */
#include "iser_move.h"

#include <errno.h>

struct move_ctxs {
	struct idm_ctx *src, *dst;
};

/* Whether ic may go to another context; 0, or a negative errno with
 * *why set. The one place that says what may move. */
static int iser_move_allowed(const struct iser_conn *ic, const char **why)
{
	if (ic->srq) {
		*why = "it takes its receive buffers from the shared receive "
		       "queue of its context (IDM_CTX_SHARED_RECV)";
		return -EOPNOTSUPP;
	}
	return 0;
}

/* One watch from `from` to `to`; on failure it is back on `from`. The
 * watch's epoll data is its own address, so it leaves one set before
 * it joins the other (as in tcp_move.c). */
static int watch_move(struct idm_ctx *from, struct idm_ctx *to,
		      struct idm_prov_watch *w)
{
	idm_prov_watch_fn fn = w->fn;
	uint32_t events = w->events;
	int fd = w->fd, r;

	if (!w->added)
		return 0;
	idm_prov_watch_del(from, w);
	r = idm_prov_watch_add(to, w, fd, events, fn);
	if (r < 0 && idm_prov_watch_add(from, w, fd, events, fn) < 0)
		idm_prov_err(from, "iser: a connection lost an event watch "
			     "moving: %s", idm_strerror(r));
	return r;
}

/* Every event source of the connection to dst, or (on failure) every
 * one still on src. */
static int watches_move(struct iser_conn *ic, struct idm_ctx *src,
			struct idm_ctx *dst)
{
	struct idm_prov_watch *ws[] = {
		&ic->cm_w, &ic->scq_w, &ic->rcq_w, &ic->timer_w,
	};
	size_t i, n = sizeof(ws) / sizeof(ws[0]);
	int r = 0;

	for (i = 0; i < n; i++) {
		r = watch_move(src, dst, ws[i]);
		if (r < 0)
			break;
	}
	if (r == 0)
		return 0;
	while (i-- > 0) /* ws[i] itself is back already */
		watch_move(dst, src, ws[i]);
	return r;
}

static int xfer_move(struct idm_task *t, const struct idm_prov_xfer *x,
		     void *arg)
{
	struct move_ctxs *m = arg;
	struct iser_dop *d = idm_prov_xfer_priv(x);

	(void)t;
	idm_prov_defer_move(m->src, m->dst, &d->done);
	return 0;
}

static int task_move(struct idm_task *t, void *arg)
{
	return idm_prov_task_foreach_xfer(t, xfer_move, arg);
}

/* Refused before anything changed: 0 when it may go on. */
static int move_check(const struct iser_conn *ic, struct idm_ctx *src)
{
	const char *why = NULL;
	int r;

	if (!ic || ic->state == ISER_DOWN)
		return -ENOTCONN;
	if (ic->state == ISER_RESOLVING || !ic->dev)
		return -EBUSY; /* still connecting: no QP yet */
	r = iser_move_allowed(ic, &why);
	if (r < 0)
		idm_prov_info(src, "iser: connection %s cannot move to another "
			      "context: %s", idm_conn_peer_name(ic->conn), why);
	return r;
}

int iser_conn_move(struct idm_conn *conn, struct idm_ctx *src)
{
	struct iser_conn *ic = iser_conn(conn);
	struct idm_ctx *dst = idm_prov_conn_ctx(conn);
	struct iser_prov *dst_ip = idm_prov_priv(idm_prov_conn_provider(conn));
	struct move_ctxs m = { src, dst };
	int r;

	r = move_check(ic, src);
	if (r < 0)
		return r;
	r = watches_move(ic, src, dst);
	if (r < 0)
		return r;
	/* a CQ poll to go on in the next pass (iser_cq.c) */
	idm_prov_defer_move(src, dst, &ic->cq_more);
	ic->ctx = dst;
	ic->ip = dst_ip; /* ic->dev is the domain's: the same there */
	return idm_prov_conn_foreach_task(conn, task_move, &m);
}
