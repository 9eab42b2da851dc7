/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ops->conn_move: the connection changes context (idm_conn_move()). Its
 * socket watch and its deferred items (receive resume, send kick, each
 * task's Get_Data completion) go to the new context's loop; nothing else
 * is per context (no memory registration: any buffer works anywhere).
 */
#include "tcp.h"
#include "tcp_move.h"
#include "tcp_live.h"
#include "tcp_engine.h"

#include <errno.h>

struct move_arg {
	struct idm_ctx *src, *dst;
};

/* A Get_Data's deferred completion lives in its transfer record (the
 * core's, struct tcp_get in the priv area). */
static int xfer_move(struct idm_task *t, const struct idm_prov_xfer *x,
		     void *arg)
{
	struct move_arg *m = arg;

	(void)t;
	if (x->dir == IDM_DATA_OUT)
		idm_prov_defer_move(m->src, m->dst, &tcp_get_of(x)->done_defer);
	return 0;
}

static int task_move(struct idm_task *t, void *arg)
{
	struct tcp_task *tt = tcp_task(t);

	if (tt->task != t)
		return 0; /* provider area never set up */
	return idm_prov_task_foreach_xfer(t, xfer_move, arg);
}

int tcp_conn_move(struct idm_conn *conn, struct idm_ctx *src)
{
	struct tcp_conn *tc = tcp_conn(conn);
	struct idm_ctx *dst = idm_prov_conn_ctx(conn);
	struct move_arg m = { src, dst };
	int r;

	if (!tc || tc->connecting || tc->tw.added)
		return -EBUSY; /* still connecting: its timer is per context */
	if (tc->w.added) {
		idm_prov_watch_fn fn = tc->w.fn;

		/* an fd may sit in both epoll sets at once, but the watch's
		 * epoll data is its own address: drop the old one first */
		idm_prov_watch_del(src, &tc->w);
		r = idm_prov_watch_add(dst, &tc->w, tc->fd, tc->wevents, fn);
		if (r < 0) {
			if (idm_prov_watch_add(src, &tc->w, tc->fd, tc->wevents,
					       fn) < 0)
				idm_prov_err(src, "tcp: connection lost its "
					     "socket watch moving: %s",
					     idm_strerror(r));
			return r;
		}
	}
	tc->ctx = dst;
	tcp_live_move(tc);
	tcp_engine_move(tc);
	idm_prov_defer_move(src, dst, &tc->rx_defer);
	idm_prov_defer_move(src, dst, &tc->tx_defer);
	idm_prov_defer_move(src, dst, &tc->fail_defer);
	return idm_prov_conn_foreach_task(conn, task_move, &m);
}
