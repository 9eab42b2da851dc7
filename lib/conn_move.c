/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm_conn_move(): hand a connection, with its tasks, transfers in flight
 * and callbacks, from one context (one event loop, one core) to another
 * between PDUs. The provider moves its own watches and deferred items
 * (ops->conn_move); the core moves the connection's list membership, its
 * provider instance and its own deferred items, all under both contexts'
 * locks, so that no event of the connection is handled by both loops or
 * by neither.
 */
#include "core.h"
#include "conn.h"
#include "conn_move.h"
#include "last_error.h"
#include "lock.h"
#include "progress.h"
#include "provider_loader.h"

#include <errno.h>

void idm_prov_defer_move(struct idm_ctx *src, struct idm_ctx *dst,
			 struct idm_prov_defer *d)
{
	if (!d->queued)
		return;
	idm_prov_defer_cancel(src, d);
	idm_prov_defer(dst, d, d->fn);
}

/* Lock the context conn is on, even while another thread may move it:
 * the mover holds both locks, so once we hold the one conn still names,
 * it stays there until we unlock. For the calls documented as callable
 * from any thread (idm_conn_get_stats()). */
struct idm_ctx *idmp_conn_lock(const struct idm_conn *c)
{
	for (;;) {
		struct idm_ctx *ctx = __atomic_load_n(&c->ctx, __ATOMIC_ACQUIRE);

		idmp_ctx_lock(ctx);
		if (__atomic_load_n(&c->ctx, __ATOMIC_RELAXED) == ctx)
			return ctx;
		idmp_ctx_unlock(ctx);
	}
}

/* Both locks held. */
static int move_locked(struct idm_conn *c, struct idm_ctx *dst)
{
	struct idm_ctx *src = c->ctx;
	struct idm_prov *old_prov = c->prov, *prov;
	int r;

	if (c->state != IDM_CONN_PHASE_LOGIN && c->state != IDM_CONN_PHASE_FFP)
		return -ENOTCONN;
	if (!IDM_PROV_OPS_HAS(c->ops, conn_move)) {
		idmp_last_error_set("provider %s cannot move a connection "
				    "between contexts", c->ops->name);
		return -EOPNOTSUPP;
	}
	idmp_providers_load(dst);
	prov = idmp_provider_by_name(dst, c->ops->name);
	if (!prov)
		return idmp_provider_unusable(dst, c->ops->name);
	if (prov->ops->conn_move != c->ops->conn_move)
		return -EOPNOTSUPP; /* another build of the provider there */
	if (dst->dom != src->dom && c->ops->buf_release) {
		idmp_last_error_set("provider %s registers memory per domain: "
				    "a connection moves between contexts of "
				    "one domain only", c->ops->name);
		return -EXDEV;
	}
	/* atomic: idmp_conn_lock() reads it without a lock */
	__atomic_store_n(&c->ctx, dst, __ATOMIC_RELEASE);
	c->prov = prov;
	c->ops = prov->ops;
	r = c->ops->conn_move(c, src);
	if (r < 0) {
		__atomic_store_n(&c->ctx, src, __ATOMIC_RELEASE);
		c->prov = old_prov;
		c->ops = old_prov->ops;
		/* the provider logged why, on the source's log */
		idmp_last_error_set("provider %s cannot move this connection "
				    "now: %s (its context's log says why)",
				    c->ops->name, idm_strerror(r));
		return r;
	}
	idmp_conn_list_del(src, c);
	idmp_conn_list_add(dst, c);
	idm_prov_defer_move(src, dst, &c->notify_defer);
	idm_prov_defer_move(src, dst, &c->connect_defer);
	src->moved_out++;
	return 0;
}

/* Lock two contexts in address order: deadlock-free between threads that
 * hold neither beforehand (every thread outside a progress pass). */
static void lock_both(struct idm_ctx *a, struct idm_ctx *b)
{
	if (a > b) {
		struct idm_ctx *t = a;

		a = b;
		b = t;
	}
	idmp_ctx_lock(a);
	idmp_ctx_lock(b);
}

/* From a callback, in the source's pass, holding its lock: taking the
 * destination's lock could deadlock against a move the other way, so
 * only try; a busy destination is tried again in the next pass. */
static void move_deferred(struct idm_prov_defer *d)
{
	struct idm_conn *c = IDM_PROV_CONTAINER_OF(d, struct idm_conn, move_defer);
	struct idm_ctx *src = c->ctx, *dst = c->move_dst;
	int r;

	if (!dst)
		return;
	if (pthread_mutex_trylock(&dst->lock) != 0) {
		idm_prov_defer(src, d, move_deferred);
		return;
	}
	c->move_dst = NULL;
	r = move_locked(c, dst);
	idmp_ctx_unlock(dst);
	if (r < 0)
		idm_prov_warn(src, "connection %s: cannot move to another "
			      "context: %s", c->peer_name, idm_strerror(r));
}

IDM_API int idm_conn_move(idm_conn *c, idm_ctx *dst)
{
	struct idm_ctx *src, *pass;
	int r;

	if (!c || !dst)
		return -EINVAL;
	idmp_last_error_clear();
	src = __atomic_load_n(&c->ctx, __ATOMIC_ACQUIRE);
	if (src == dst)
		return 0;
	pass = idmp_pass_ctx();
	if (pass) {
		/* A callback: the provider may still be inside this
		 * connection's event (more PDUs of this wakeup), so the move
		 * waits for the end of the pass. Only the source's own
		 * callbacks may ask: any other pass holds a lock that the
		 * source's thread may be waiting for. */
		if (pass != src)
			return -EDEADLK;
		if (c->state != IDM_CONN_PHASE_LOGIN &&
		    c->state != IDM_CONN_PHASE_FFP)
			return -ENOTCONN;
		if (!IDM_PROV_OPS_HAS(c->ops, conn_move))
			return -EOPNOTSUPP;
		if (c->move_defer.queued)
			return -EALREADY;
		c->move_dst = dst;
		idm_prov_defer(src, &c->move_defer, move_deferred);
		return 0;
	}
	lock_both(src, dst);
	if (c->ctx != src) { /* moved meanwhile by the source's thread */
		idmp_ctx_unlock(dst);
		idmp_ctx_unlock(src);
		return -EAGAIN;
	}
	if (c->move_defer.queued) {
		/* a move asked from a callback is pending: this one wins */
		idm_prov_defer_cancel(src, &c->move_defer);
		c->move_dst = NULL;
	}
	r = move_locked(c, dst);
	idmp_ctx_unlock(dst);
	idmp_ctx_unlock(src);
	return r;
}
