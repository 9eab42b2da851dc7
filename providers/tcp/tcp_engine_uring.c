/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The io_uring engine of the TCP provider (tcp_engine.h): the reads and
 * writes every connection of a context wants in a progress pass, put to
 * the kernel in one io_uring_enter at the end of the pass.
 *
 * A pass: connections ask (uring_want_tx from the send queue,
 * uring_readv finding the read buffer empty) and land on the queued
 * list; the engine's deferred item then runs a round or two of
 *   1. prepare: each queued connection's write iovecs (tcp_tx_prepare,
 *      which may call the caller back: nothing is submitted yet);
 *   2. submit: a recv and/or a sendmsg per connection, MSG_DONTWAIT, one
 *      io_uring_enter that also waits for every completion - which the
 *      kernel posts before the call returns, as no operation may wait;
 *   3. complete: the results, stored in the connections first (no
 *      callback runs while a completion names a connection), then acted
 *      on connection by connection, each taken off the list before it
 *      is handled so a callback that closes another one is harmless.
 * Memory named by a submission (the read buffer, the iovecs, the
 * caller's buffers they point at) is in use only inside step 2.
 */
#include "tcp.h"
#include "tcp_engine_uring.h"
#include "tcp_engine_epoll.h"
#include "tcp_state.h"
#include "tcp_tx.h"
#include "tcp_rx.h"
#include "tcp_zc.h"
#include "tcp_ubuf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef TCP_HAVE_URING
#include <liburing.h>
#endif

enum { U_NONE, U_QUEUED, U_BATCH };

/* Rounds per pass: the second sends what the reads of the first brought
 * (the answers to the commands just read) without waiting a pass. */
#define URING_ROUNDS 2
#define URING_DEPTH  256 /* submission queue entries; 2 per connection */

#ifdef TCP_HAVE_URING

struct tcp_uring {
	struct io_uring ring;
	struct idm_ctx *ctx;
	struct idm_prov_defer pass;
	struct tcp_conn *queued, *batch;
	bool broken; /* a submission failed for good: connections fail */
};

/* ---- the two lists --------------------------------------------------- */

static struct tcp_conn **list_head(struct tcp_uring *u, uint8_t which)
{
	return which == U_QUEUED ? &u->queued : &u->batch;
}

static void list_unlink(struct tcp_conn *tc)
{
	struct tcp_conn **head;

	if (tc->u_list == U_NONE)
		return;
	head = list_head(tc->eng, tc->u_list);
	if (tc->u_prev)
		tc->u_prev->u_next = tc->u_next;
	else
		*head = tc->u_next;
	if (tc->u_next)
		tc->u_next->u_prev = tc->u_prev;
	tc->u_prev = tc->u_next = NULL;
	tc->u_list = U_NONE;
}

static void list_push(struct tcp_conn *tc, uint8_t which)
{
	struct tcp_conn **head = list_head(tc->eng, which);

	tc->u_prev = NULL;
	tc->u_next = *head;
	if (*head)
		(*head)->u_prev = tc;
	*head = tc;
	tc->u_list = which;
}

static void uring_pass(struct idm_prov_defer *d);

/* tc wants a read or a write: on the queued list (a connection being
 * completed keeps its place: it is queued when its turn is over). */
static void want(struct tcp_conn *tc)
{
	struct tcp_uring *u = tc->eng;

	if (tc->u_list != U_NONE)
		return;
	list_push(tc, U_QUEUED);
	idm_prov_defer(u->ctx, &u->pass, uring_pass);
}

static void uring_want_tx(struct tcp_conn *tc)
{
	if (tc->closed || !tc->eng)
		return;
	tc->u_want_tx = true;
	want(tc);
}

static void want_rx(struct tcp_conn *tc)
{
	if (tc->closed || !tc->eng)
		return;
	tc->u_want_rx = true;
	want(tc);
}

static void uring_tx_changed(struct tcp_conn *tc)
{
	if (!tc->u_tx_ready)
		return;
	tc->u_tx_ready = false;
	uring_want_tx(tc);
}

static void uring_forget(struct tcp_conn *tc)
{
	if (tc->eng)
		list_unlink(tc);
	tc->u_want_rx = tc->u_want_tx = false;
	tc->u_tx_ready = tc->u_rx_sub = tc->u_tx_sub = false;
}

/* ---- a round ---------------------------------------------------------- */

/* Step 1 for one connection: its write, if it wants one. */
static void prepare_tx(struct tcp_conn *tc)
{
	int cnt;

	tc->u_want_tx = false;
	if (!tc->u_iov) {
		tc->u_iov = malloc(TCP_TX_IOV * sizeof(*tc->u_iov));
		if (!tc->u_iov) {
			tcp_conn_fail(tc, -ENOMEM, "no memory for the send iovecs");
			return;
		}
	}
	cnt = tcp_tx_prepare(tc, tc->u_iov);
	if (cnt <= 0 || tc->closed)
		return;
	tc->u_iovcnt = cnt;
	tc->u_txlen = 0;
	for (int i = 0; i < cnt; i++)
		tc->u_txlen += tc->u_iov[i].iov_len;
	tc->u_tx_ready = true;
}

/* Results of a round not acted on yet: the connection moved here from
 * another context between that round's steps 2 and 3 (a callback of
 * another connection moved it). They are acted on first. */
static bool results_pending(const struct tcp_conn *tc)
{
	return tc->u_rx_sub || tc->u_tx_sub;
}

/* A connection that writes (answers to what it read) likely has more
 * to read by now - its peer keeps a queue of commands in flight: a read
 * rides along with the write at no extra syscall, and an -EAGAIN costs
 * the kernel a look at the socket only. Not while input is stopped, nor
 * with bytes still to be read out of the buffer, nor in the middle of a
 * PDU, whose large payload is read in place (tcp_rx.c). */
static void read_along(struct tcp_conn *tc)
{
	if (tc->ffp && !tc->rx_stopped && tc->rs == RX_BHS && !tc->rgot &&
	    tc->u_beg == tc->u_end && !tc->u_err)
		tc->u_want_rx = true;
}

/* Step 1: queued connections to the batch, as many as the submission
 * queue holds, their writes prepared. A callback may close any of them
 * (uring_forget takes it off) or queue more. */
static void round_prepare(struct tcp_uring *u)
{
	unsigned taken = 0;
	struct tcp_conn *tc;

	while ((tc = u->queued) && 2 * (taken + 1) <= URING_DEPTH) {
		list_unlink(tc);
		list_push(tc, U_BATCH);
		taken++;
		if (results_pending(tc))
			continue; /* from another context's round: step 3 only */
		if (tc->u_want_tx)
			prepare_tx(tc);
		if (tc->u_tx_ready)
			read_along(tc);
	}
}

/* A read's result, into the connection's buffer at once (no callback
 * runs here): whatever happens to the connection before its turn in
 * step 3 (a move to another context), the bytes are not lost. */
static void rx_apply(struct tcp_conn *tc, int res)
{
	tc->u_rx_res = res;
	if (res > 0) {
		tc->u_beg = 0;
		tc->u_end = (uint32_t)res;
		tc->u_full = (uint32_t)res == tc->ucap;
	} else if (res == 0 || (res != -EAGAIN && res != -EWOULDBLOCK &&
				res != -EINTR)) {
		tc->u_err = res == 0 ? -1 : -res;
	}
}

/*
 * ThreadSanitizer sees a socket's bytes order threads through its
 * send/recv interceptors (a send releases, a recv acquires); the ring's
 * reads and writes happen inside io_uring_enter, where it cannot look,
 * and a peer thread's earlier writes to a buffer this thread now fills
 * (or the other way round) would be reported as races. In such a build
 * each write is preceded, and each read followed, by a zero-length
 * send/recv on the socket: no bytes, but the ordering it lacked.
 */
#if defined(__SANITIZE_THREAD__)
#define TCP_URING_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TCP_URING_TSAN 1
#endif
#endif

static void tsan_release(const struct tcp_conn *tc)
{
#ifdef TCP_URING_TSAN
	(void)!send(tc->fd, NULL, 0, MSG_DONTWAIT | MSG_NOSIGNAL);
#else
	(void)tc;
#endif
}

static void tsan_acquire(const struct tcp_conn *tc)
{
#ifdef TCP_URING_TSAN
	(void)!recv(tc->fd, NULL, 0, MSG_DONTWAIT);
#else
	(void)tc;
#endif
}

static void prep_rx(struct io_uring *ring, struct tcp_conn *tc)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	io_uring_prep_recv(sqe, tc->fd, tc->ubuf, tc->ucap, MSG_DONTWAIT);
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)tc);
}

static void prep_tx(struct io_uring *ring, struct tcp_conn *tc)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	tsan_release(tc);
	memset(&tc->u_msg, 0, sizeof(tc->u_msg));
	tc->u_msg.msg_iov = tc->u_iov;
	tc->u_msg.msg_iovlen = (size_t)tc->u_iovcnt;
	/* MSG_NOSIGNAL: a vanished peer must not raise SIGPIPE;
	 * MSG_ZEROCOPY for zero-copy Data-In (tcp_zc.c) */
	io_uring_prep_sendmsg(sqe, tc->fd, &tc->u_msg,
			      MSG_DONTWAIT | MSG_NOSIGNAL |
				      (unsigned)tcp_zc_uring_flags(tc));
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)tc | 1);
}

/* Step 2's first half: the submissions of the batch (no callbacks). */
static unsigned round_prep(struct tcp_uring *u)
{
	unsigned n = 0;

	for (struct tcp_conn *tc = u->batch; tc; tc = tc->u_next) {
		if (results_pending(tc))
			continue;
		if (tc->u_want_rx) {
			tc->u_want_rx = false;
			tc->u_rx_sub = true;
			if (!tcp_ubuf_fit(tc)) {
				rx_apply(tc, -ENOMEM);
			} else {
				prep_rx(&u->ring, tc);
				n++;
			}
		}
		if (tc->u_tx_ready) {
			tc->u_tx_ready = false;
			tc->u_tx_sub = true;
			prep_tx(&u->ring, tc);
			n++;
		}
	}
	return n;
}

/* A write's result: its bytes counted into the send ring at once (no
 * callback runs here), so that a task of this connection cancelled by a
 * callback of another before this one's turn in step 3 sees which of its
 * PDUs went out. */
static void tx_apply(struct tcp_conn *tc, int res)
{
	/* numbered before the ring retires a byte of it; a zero-copy
	 * write refused for ENOBUFS is redone by copy, as after EINTR */
	if (tcp_zc_uring_result(tc, res))
		res = -EINTR;
	tc->u_tx_res = res;
	if (res > 0)
		tcp_tx_account(tc, (size_t)res);
}

/* Step 2: submit n operations and collect all n completions into their
 * connections. They are all there when the call returns (MSG_DONTWAIT);
 * the wait is only for a kernel that would defer one anyway. */
static int round_submit(struct tcp_uring *u, unsigned n)
{
	unsigned seen = 0;
	int r;

	do
		r = io_uring_submit_and_wait(&u->ring, n);
	while (r == -EINTR || r == -EAGAIN || r == -EBUSY);
	if (r < 0)
		return r;
	while (seen < n) {
		struct io_uring_cqe *cqe;
		struct tcp_conn *tc;
		uint64_t ud;

		r = io_uring_wait_cqe(&u->ring, &cqe);
		if (r == -EINTR)
			continue;
		if (r < 0)
			return r;
		ud = io_uring_cqe_get_data64(cqe);
		tc = (struct tcp_conn *)(uintptr_t)(ud & ~(uint64_t)1);
		if (ud & 1)
			tx_apply(tc, cqe->res);
		else
			rx_apply(tc, cqe->res);
		io_uring_cqe_seen(&u->ring, cqe);
		seen++;
	}
	return 0;
}

static void complete_tx(struct tcp_conn *tc)
{
	int res = tc->u_tx_res;
	bool more;

	if (res == -EINTR) {
		uring_want_tx(tc);
		return;
	}
	if (res < 0)
		more = tcp_tx_sent(tc, -1, -res, false);
	else /* counted as it completed (tx_apply) */
		more = tcp_tx_retire(tc, (size_t)res < tc->u_txlen);
	if (more && tcp_tx_pending(tc))
		uring_want_tx(tc); /* more is ready: next round */
}

static void complete_rx(struct tcp_conn *tc)
{
	int res = tc->u_rx_res;

	if (res == -EAGAIN || res == -EWOULDBLOCK)
		return; /* nothing there: the socket's watch says when */
	if (res == -EINTR) {
		want_rx(tc);
		return;
	}
	tsan_acquire(tc);
	tc->rx_dry = false;
	tcp_rx_run(tc);
}

/* Step 3: act on the results, one connection at a time, each off the
 * batch before its turn (and queued again if it wants more). */
static void round_complete(struct tcp_uring *u)
{
	struct tcp_conn *tc;

	while ((tc = u->batch)) {
		bool rx = tc->u_rx_sub, tx = tc->u_tx_sub;

		list_unlink(tc);
		tc->u_rx_sub = tc->u_tx_sub = false;
		if (tx && !tc->closed)
			complete_tx(tc);
		if (rx && !tc->closed)
			complete_rx(tc);
		if (!tc->closed && tc->eng == u && tc->u_list == U_NONE &&
		    (tc->u_want_rx || tc->u_want_tx))
			want(tc);
	}
}

/* The ring refused a submission: no later one can be trusted with the
 * batch's memory, so the batch fails and so does whatever asks next. */
static void round_broken(struct tcp_uring *u, int err)
{
	struct tcp_conn *tc;

	if (!u->broken)
		idm_prov_err(u->ctx, "tcp: io_uring submission failed: %s",
			     strerror(-err));
	u->broken = true;
	while ((tc = u->batch)) {
		list_unlink(tc);
		uring_forget(tc);
		tcp_conn_fail(tc, err, "io_uring submission failed: %s",
			      strerror(-err));
	}
}

static void uring_round(struct tcp_uring *u)
{
	unsigned n;
	int r;

	round_prepare(u);
	n = round_prep(u);
	if (n) {
		r = round_submit(u, n);
		if (r < 0) {
			round_broken(u, r);
			return;
		}
	}
	round_complete(u);
}

static void uring_pass(struct idm_prov_defer *d)
{
	struct tcp_uring *u = IDM_PROV_CONTAINER_OF(d, struct tcp_uring, pass);
	struct tcp_conn *tc;

	if (u->broken) {
		while ((tc = u->queued)) {
			list_unlink(tc);
			uring_forget(tc);
			tcp_conn_fail(tc, -EIO, "io_uring unusable");
		}
		return;
	}
	for (int i = 0; i < URING_ROUNDS && u->queued; i++)
		uring_round(u);
	/* more is wanted: the next pass (which then does not sleep) */
	if (u->queued)
		idm_prov_defer(u->ctx, &u->pass, uring_pass);
}

/* ---- context ---------------------------------------------------------- */

static struct tcp_uring *uring_make(struct idm_ctx *ctx, int *err)
{
	struct tcp_uring *u = calloc(1, sizeof(*u));
	int r;

	if (!u) {
		*err = -ENOMEM;
		return NULL;
	}
	/* SUBMIT_ALL: one bad submission does not hold back the others */
	r = io_uring_queue_init(URING_DEPTH, &u->ring, IORING_SETUP_SUBMIT_ALL);
	if (r == -EINVAL)
		r = io_uring_queue_init(URING_DEPTH, &u->ring, 0);
	if (r < 0) {
		free(u);
		*err = r;
		return NULL;
	}
	u->ctx = ctx;
	return u;
}

static const char *uring_refusal(int err)
{
	switch (err) {
	case -ENOSYS:
		return "the kernel has no io_uring";
	case -EPERM:
	case -EACCES:
		return "io_uring is not permitted here (seccomp profile or "
		       "kernel.io_uring_disabled)";
	case -ENOMEM:
		return "no memory for the ring (RLIMIT_MEMLOCK?)";
	default:
		return "io_uring_queue_init failed";
	}
}

static int uring_open(struct tcp_knobs *k, struct idm_ctx *ctx,
		      const char **why)
{
	int err = 0;

	k->eng = uring_make(ctx, &err);
	if (!k->eng)
		*why = uring_refusal(err);
	return err;
}

static void uring_close(struct tcp_knobs *k)
{
	struct tcp_uring *u = k->eng;
	struct tcp_conn *tc;

	if (!u)
		return;
	/* a connection still listed must not reach the freed engine */
	while ((tc = u->queued) || (tc = u->batch)) {
		uring_forget(tc);
		tc->eng = NULL;
		tc->eops = &tcp_engine_epoll;
	}
	/* every operation completed inside the call that submitted it:
	 * nothing is in flight */
	idm_prov_defer_cancel(u->ctx, &u->pass);
	io_uring_queue_exit(&u->ring);
	free(u);
	k->eng = NULL;
}

static void uring_detach(struct tcp_conn *tc)
{
	/* off the old lists; a result not acted on yet stays with it */
	if (tc->eng)
		list_unlink(tc);
}

/* tc->eng is the new context's engine: what the connection wanted, or a
 * result not acted on yet, makes it queued there. */
static void uring_attach(struct tcp_conn *tc)
{
	bool rx = tc->u_want_rx, tx = tc->u_want_tx || tc->u_tx_ready;

	tc->u_tx_ready = false;
	tc->u_want_rx = rx;
	tc->u_want_tx = tx;
	if (rx || tx || tc->u_rx_sub || tc->u_tx_sub)
		want(tc);
}

/* The receive machine's read (tcp_engine_ops.readv). */
static ssize_t uring_readv(struct tcp_conn *tc, const struct iovec *iov,
			   int cnt)
{
	bool refilled = false;
	ssize_t n;

	/* not while answers to what the buffer held wait: the read goes
	 * to the ring with their write (tcp_ubuf_refill) */
	if (tcp_ubuf_may_refill(tc) && !(tc->eng && tcp_tx_pending(tc))) {
		tcp_ubuf_refill(tc);
		refilled = true;
	}
	n = tcp_ubuf_take(tc, iov, cnt);
	if (n != TCP_UBUF_NONE)
		return n;
	if (!tc->eng)
		return readv(tc->fd, iov, cnt);
	if (!refilled) /* (else the socket just said it is empty) */
		want_rx(tc);
	errno = EAGAIN;
	return -1;
}

const struct tcp_engine_ops tcp_engine_uring = {
	.name = "uring",
	.open = uring_open,
	.close = uring_close,
	.kick_tx = uring_want_tx,
	.flush_tx = uring_want_tx,
	.readv = uring_readv,
	.tx_changed = uring_tx_changed,
	.forget = uring_forget,
	.detach = uring_detach,
	.attach = uring_attach,
};

#else /* !TCP_HAVE_URING */

static int uring_open(struct tcp_knobs *k, struct idm_ctx *ctx,
		      const char **why)
{
	(void)ctx;
	k->eng = NULL;
	*why = "built without liburing";
	return -EOPNOTSUPP;
}

/* never a context's engine: only open is called */
const struct tcp_engine_ops tcp_engine_uring = {
	.name = "uring",
	.open = uring_open,
};

#endif /* TCP_HAVE_URING */
