/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Dead peer detection. RC retries end a connection only when something is
 * being sent; an idle connection to a vanished host would never notice.
 * So when nothing completed for a whole period, post a signalled
 * zero-length RDMA Write (no STag is checked for zero length): an ACK
 * proves the peer's QP is there, and if it is gone the retries
 * ((retry_count + 1) x ACK timeout) fail the WR and so the connection.
 * Retries are not trusted to end (7 means forever, a device may stretch
 * the timeout, a completion may be lost), so the probe also has a
 * deadline: still not completed after liveness_ms (counted in keepalive
 * ticks), the connection fails. The probe completes only after every WR
 * posted before it, so it bounds those too. Any completion proves the
 * peer alive and restarts the count. Detection takes at most
 * 2 x keepalive + min((retry_count + 1) x ACK timeout, liveness rounded
 * up to a keepalive tick); a peer whose process died sends a DREQ and is
 * seen at once. (iser_cq.c marks the activity and the probe's end.)
 */
#include "iser_keepalive.h"
#include "iser_fail.h"
#include "iser_sq.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* What the send queue holds when the peer went silent: which WRs the
 * device still owes a completion for, oldest first (info level: it is
 * what tells a dead peer from a wedged send queue). */
static void sq_report(struct iser_conn *ic)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct iser_op *op;
	char buf[900];
	size_t n = 0;
	uint32_t i = 0, waiting = 0;

	for (op = ic->sq_wait; op; op = op->next)
		waiting++;
	for (op = ic->posted; op && i < 60; op = op->next, i++) {
		int k = snprintf(buf + n, sizeof(buf) - n, "%s%s%s",
				 i ? "," : "", iser_op_name(op->kind),
				 (op->wr.send_flags & IBV_SEND_SIGNALED) ? "*" : "");
		if (k < 0 || (size_t)k >= sizeof(buf) - n)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	memset(&qa, 0, sizeof(qa));
	if (ibv_query_qp(ic->qp, &qa, IBV_QP_STATE, &qia))
		qa.qp_state = IBV_QPS_UNKNOWN;
	idm_prov_info(ic->ctx, "iser: send queue: QP state %d, %u posted (%s%s), "
		  "%u waiting, %llu WRs / %llu completions so far",
		  (int)qa.qp_state, ic->sq_posted, buf, ic->sq_posted > i ? ",..." : "",
		  waiting, (unsigned long long)ic->stat_wrs,
		  (unsigned long long)ic->stat_signalled);
}

static void timer_watch(struct idm_prov_watch *w, uint32_t revents)
{
	struct iser_conn *ic = IDM_PROV_CONTAINER_OF(w, struct iser_conn, timer_w);
	struct ibv_send_wr wr;
	struct iser_op *op;
	uint64_t ticks;
	int live = ic->ip->liveness_ms;

	(void)revents;
	if (read(ic->timer_fd, &ticks, sizeof(ticks)) < 0 ||
	    ic->state != ISER_UP)
		return;
	if (ic->activity) {
		ic->activity = false;
		ic->probe_wait_ms = 0;
		return;
	}
	if (ic->probe_out) {
		ic->probe_wait_ms += ic->ip->keepalive_ms;
		if (live > 0 && ic->probe_wait_ms >= live) {
			sq_report(ic);
			iser_conn_fail(ic, -ETIMEDOUT,
				       "peer silent: keepalive probe not "
				       "completed after %d ms", ic->probe_wait_ms);
		}
		return;
	}
	op = iser_op_get(ic, ISER_OP_PROBE);
	if (!op)
		return;
	idm_prov_dbg(ic->ctx, "iser: idle, probing the peer");
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = iser_op_wr_id(ic, op);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (iser_post(ic, &wr) < 0) {
		iser_op_put(ic, op);
		return;
	}
	ic->probe_out = true;
	ic->probe_wait_ms = 0;
}

int iser_keepalive_start(struct iser_conn *ic)
{
	struct iser_prov *ip = ic->ip;
	struct itimerspec its = {
		.it_interval = {ip->keepalive_ms / 1000,
				(ip->keepalive_ms % 1000) * 1000000L},
	};

	if (ip->keepalive_ms <= 0)
		return 0;
	its.it_value = its.it_interval;
	ic->timer_fd = timerfd_create(CLOCK_MONOTONIC,
				      TFD_NONBLOCK | TFD_CLOEXEC);
	if (ic->timer_fd < 0)
		return -errno;
	if (timerfd_settime(ic->timer_fd, 0, &its, NULL) < 0)
		return -errno;
	return idm_prov_watch_add(ic->ctx, &ic->timer_w, ic->timer_fd,
				  EPOLLIN, timer_watch);
}

void iser_keepalive_stop(struct iser_conn *ic)
{
	if (ic->timer_w.added)
		idm_prov_watch_del(ic->ctx, &ic->timer_w);
	if (ic->timer_fd > 0)
		close(ic->timer_fd);
	ic->timer_fd = -1;
}
