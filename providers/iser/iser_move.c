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
 *    domain of ic->dev. A QP cannot change its PD, so the connection
 *    keeps the PD it was made in, wherever it goes:
 *     . when the destination uses that same PD for the device (contexts
 *       sharing their memory registration, the coming "domain"), the
 *       connection takes the destination's device entry, and anything
 *       may move: login or full feature phase, with data in flight (its
 *       windows and MRs stay valid, the buffers of any context of the
 *       domain are registered in that PD);
 *     . otherwise (today: a PD per context) the destination borrows the
 *       source's PD (iser_dev_borrow(): a copy of the device entry,
 *       counted as a holder of the PD, so the PD outlives the source
 *       context for as long as the destination has it). Buffers of the
 *       destination's context used on the connection are then
 *       registered in that borrowed PD, which is correct on verbs. This
 *       is allowed only before the connection registered any caller
 *       buffer (ic->caller_mem), i.e. in practice in the login phase,
 *       where a target places a connection. A connection whose data
 *       path has begun may have tasks whose buffers are the source
 *       context's: their registration records (one per buffer and
 *       provider slot) are written by the source's thread under the
 *       source's lock for its other connections, and this connection
 *       would go on reading and extending them from the destination's
 *       thread; and each buffer of the destination would be pinned and
 *       registered twice (in its own PD for the destination's
 *       connections, in the borrowed one for this). Narrower than verbs
 *       require, on purpose: what a shared domain settles (one PD, its
 *       registrations under the domain's rule) stays out until then.
 *       Refused with -EXDEV. This is the one rule that changes with the
 *       domain: iser_move_allowed().
 * So a live full-feature connection cannot move today because of memory
 * registration, not verbs: nothing of a QP, CQ or completion channel is
 * bound to a thread or an epoll set.
 * The order follows the op's contract: the check and the destination's
 * device first (nothing changed on failure), then each watch (one that
 * cannot be added puts the others back on the source), then the rest,
 * which cannot fail. Both contexts' locks are held and no callback of
 * the connection runs, so no completion is handled meanwhile.
 */
#include "iser_move.h"
#include "iser_mem.h"

#include <errno.h>

struct move_ctxs {
	struct idm_ctx *src, *dst;
};

/* Whether ic may go to the context of dst_ip; 0, or a negative errno
 * with *why set. The one place that says what may move: once contexts
 * share a domain (one PD per device for all of them) the PD comparison
 * is that of the domains, and the caller_mem rule goes. */
static int iser_move_allowed(const struct iser_conn *ic,
			     struct iser_prov *dst_ip, const char **why)
{
	const struct iser_dev *there;

	if (ic->srq) {
		*why = "it takes its receive buffers from the shared receive "
		       "queue of its context (IDM_CTX_SHARED_RECV)";
		return -EOPNOTSUPP;
	}
	there = iser_dev_find(dst_ip, ic->dev->verbs);
	if (there && there->pd == ic->dev->pd)
		return 0;
	if (ic->caller_mem) {
		*why = "buffers are registered for it in its context's "
		       "protection domain, which the destination does not "
		       "share (data already moved: move it before the login "
		       "ends)";
		return -EXDEV;
	}
	return 0;
}

/* The device entry of dst_ip the connection uses there: the
 * destination's own when it holds the same PD, else a borrowed one. */
static struct iser_dev *dst_dev(const struct iser_conn *ic,
				struct iser_prov *dst_ip)
{
	struct iser_dev *there = iser_dev_find(dst_ip, ic->dev->verbs);

	if (there && there->pd == ic->dev->pd)
		return there;
	return iser_dev_borrow(dst_ip, ic->dev);
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
static int move_check(const struct iser_conn *ic, struct iser_prov *dst_ip,
		      struct idm_ctx *src)
{
	const char *why = NULL;
	int r;

	if (!ic || ic->state == ISER_DOWN)
		return -ENOTCONN;
	if (ic->state == ISER_RESOLVING || !ic->dev)
		return -EBUSY; /* still connecting: no QP yet */
	r = iser_move_allowed(ic, dst_ip, &why);
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
	struct iser_dev *dev;
	int r;

	r = move_check(ic, dst_ip, src);
	if (r < 0)
		return r;
	dev = dst_dev(ic, dst_ip);
	if (!dev) {
		idm_prov_info(src, "iser: connection %s cannot move: the "
			      "destination has no device slot left for its "
			      "protection domain", idm_conn_peer_name(conn));
		return -EXDEV;
	}
	r = watches_move(ic, src, dst);
	if (r < 0)
		return r;
	ic->ctx = dst;
	ic->ip = dst_ip;
	ic->dev = dev;
	return idm_prov_conn_foreach_task(conn, task_move, &m);
}
