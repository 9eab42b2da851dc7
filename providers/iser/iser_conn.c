/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The life of a connection once it exists: failing it (raised by any
 * layer through iser_fail.c, handled here), the teardown that takes every
 * WR, buffer and task back, and the final free. Its tasks are released
 * through the core (idm_prov_conn_release_tasks), which calls our
 * task_free op: the role's data mover (ic->role->task_release).
 */
#include "iser_conn.h"
#include "iser_msgpool.h"
#include "iser_mw.h"
#include "iser_park.h"
#include "iser_qp.h"
#include "iser_sq.h"
#include "iser_srq.h"
#include "iser_stage.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void conn_failed(struct iser_conn *ic, int reason, const char *msg);

struct iser_conn *iser_conn_new(struct iser_prov *ip, struct idm_ctx *ctx,
				const struct iser_role *role)
{
	struct iser_conn *ic = calloc(1, sizeof(*ic));

	if (!ic)
		return NULL;
	ic->ip = ip;
	ic->ctx = ctx;
	ic->role = role;
	ic->on_fail = conn_failed;
	ic->timer_fd = -1;
	ic->ech = rdma_create_event_channel();
	if (!ic->ech || iser_nonblock(ic->ech->fd) < 0) {
		if (ic->ech)
			rdma_destroy_event_channel(ic->ech);
		free(ic);
		return NULL;
	}
	return ic;
}

/* What must not outlive the end of a connection even while its QP still
 * exists: the event sources (no callback after it) and the memory windows
 * (every one is back on the free list once the tasks are released). A
 * type-2 window that is still bound holds a reference on its QP in rxe:
 * destroying the QP first made rxe_destroy_qp wait 50 s for it (then
 * warn at rxe_pool.c __rxe_cleanup), whenever a peer vanished with a
 * command's windows bound. And the caller may destroy its buffers right
 * after the notification: an MR with windows bound cannot be
 * deregistered. */
static void quiesce(struct iser_conn *ic)
{
	idm_prov_watch_del(ic->ctx, &ic->timer_w);
	idm_prov_watch_del(ic->ctx, &ic->scq_w);
	idm_prov_watch_del(ic->ctx, &ic->rcq_w);
	idm_prov_defer_cancel(ic->ctx, &ic->cq_more);
	ic->more_send = ic->more_recv = false;
	iser_mws_dealloc(ic, false);
}

/* Close the transport and take back every WR, buffer and task. After
 * this no completion or callback of the connection happens and the
 * device touches none of its memory (the QP is in the error state with
 * every WR flushed, no window is left).
 *
 * The QP itself is destroyed later, in conn_destroy(): destroying a QP
 * may block in the kernel, and the Connection_Terminate_Notify that
 * follows a teardown must not wait for that. */
static void teardown(struct iser_conn *ic)
{
	enum iser_state was = ic->state;

	if (was == ISER_DOWN)
		return;
	ic->state = ISER_DOWN;
	/* The passive side must disconnect too: that sends the DREP (else
	 * the peer waits for the DREQ timeout). Not while the port is down:
	 * that DREQ would break the CM's QP on soft-RoCE (iser_park.c); it
	 * goes out when the connection is freed and the port is back. */
	if (ic->id && ic->qp && (was == ISER_UP || was == ISER_ACCEPTING)) {
		if (iser_port_active(ic->id))
			rdma_disconnect(ic->id);
		else
			ic->disc_deferred = true;
	}
	iser_drain(ic);
	/* the core runs our task_free for each task (the role's
	 * task_release) and forgets their recorded transfers */
	if (ic->conn)
		idm_prov_conn_release_tasks(ic->conn);
	quiesce(ic);
}

/* ic->on_fail: a layer raised a failure (iser_conn_fail, iser_fail.c)
 * while the connection was not down yet: record why, tear down, tell the
 * core once. */
static void conn_failed(struct iser_conn *ic, int reason, const char *msg)
{
	struct idm_conn *c = ic->conn;
	bool connecting;

	if (reason >= 0)
		reason = -EIO;
	if (!c) {
		teardown(ic);
		return;
	}
	idm_prov_conn_set_error(c, "iser: %s", msg);
	idm_prov_info(ic->ctx, "iser: connection %s failed: %s",
		      idm_conn_peer_name(c), msg);
	connecting = idm_prov_conn_phase(c) == IDM_CONN_PHASE_CONNECTING;
	teardown(ic);
	if (connecting)
		idm_prov_conn_connected(c, reason);
	else
		idm_prov_conn_failed(c, reason);
}

void iser_conn_terminate(struct idm_conn *c)
{
	struct iser_conn *ic = iser_conn(c);

	if (ic)
		teardown(ic);
}

void iser_conn_destroy(struct iser_conn *ic)
{
	teardown(ic);
	iser_qp_destroy(ic);
	/* no window is bound on it once the QP is gone */
	iser_stage_close(ic);
	if (ic->cm_w.added)
		idm_prov_watch_del(ic->ctx, &ic->cm_w);
	if (ic->id && ic->disc_deferred && !iser_port_active(ic->id)) {
		/* destroying it would send the DREQ now: later */
		iser_park_id(ic->ip, ic->id, ic->ech);
		ic->id = NULL;
		ic->ech = NULL;
	}
	if (ic->id)
		rdma_destroy_id(ic->id);
	if (ic->ech)
		rdma_destroy_event_channel(ic->ech);
	/* message memory and op slots last: a handler that ran a callback
	 * which terminated the connection may still give a message back */
	iser_pools_fini(ic);
	iser_sq_fini(ic);
	/* after every buffer of the queue the connection held came back,
	 * and after its QP (a queue with a QP attached cannot go) */
	iser_srq_detach(ic);
	free(ic);
}

void iser_conn_free(struct idm_conn *c)
{
	struct iser_conn *ic = iser_conn(c);

	if (!ic)
		return;
	iser_conn_destroy(ic);
	idm_prov_conn_set_priv(c, NULL);
}
