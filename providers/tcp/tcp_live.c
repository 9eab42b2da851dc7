/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Telling a slow reader from a dead peer.
 *
 * TCP_USER_TIMEOUT cannot tell them apart. While the peer's window is
 * zero Linux sends window probes and applies the user timeout from the
 * first one (icsk_probes_tstamp in tcp_probe_timer()); it starts that
 * clock again only when the window opens wide enough for the whole skb
 * at the head of the send queue (tcp_ack_probe()). A peer with a small
 * receive buffer never opens it that wide (4 KiB against tens of KiB of
 * coalesced PDUs): it is reset after the user timeout however much it
 * read and acknowledged meanwhile (TcpExtTCPAbortOnTimeout, with window
 * probes and window openings counted, no RTO). With segments in flight
 * the retransmission path does the same (tcp_rtx_probe0_timed_out():
 * zero-window retransmissions do not "reset the timer").
 *
 * So the provider no longer hands its user timeout to the kernel. While a
 * connection has data the peer has not acknowledged (queued here, not
 * yet sent, or sent and unacknowledged), a periodic timer reads TCP_INFO
 * and looks at what moves:
 *  - bytes acknowledged (tcpi_bytes_acked) grew: the peer is reading,
 *    however slowly; nothing to do;
 *  - nothing acknowledged for IDM_TCP_USER_TIMEOUT_MS while the peer's
 *    window is open: our data goes unanswered, the peer is gone
 *    ("no acknowledgement for N s");
 *  - the peer's window is zero (tcpi_snd_wnd) and nothing was
 *    acknowledged for IDM_TCP_ZERO_WINDOW_TIMEOUT_MS: the peer is alive
 *    (its kernel answers the window probes) but its application reads
 *    nothing ("peer stopped reading for N s"); 0 waits for ever;
 *  - the window is zero and even the probes go unanswered: gone too, once
 *    no ACK came for the user timeout and for longer than the kernel's
 *    probe interval (which backs off up to 2 min, so a live peer's last
 *    ACK may be that old).
 * An idle connection is not watched; keepalive (SO_KEEPALIVE, which the
 * kernel suspends while data is outstanding) covers it.
 *
 * Cost: one timerfd per context (struct tcp_knobs, the provider's
 * per-context state), made when the provider loads, ticking only while
 * some connection is watched; no descriptor per connection (a target
 * near its descriptor limit keeps its connection count). A connection is
 * watched from a write that leaves data in its socket (one TCP_INFO
 * then; a flag test on the send path otherwise) to the first tick that
 * finds all its data acknowledged; one TCP_INFO per watched connection
 * and tick.
 */
#include "tcp.h"
#include "tcp_live.h"
#include "tcp_state.h"

#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/* The kernel's bounds on its retransmission and probe intervals (TCP_RTO_MIN,
 * TCP_RTO_MAX of include/net/tcp.h). */
#define LIVE_RTO_MIN_MS 200
#define LIVE_RTO_MAX_MS 120000

/* Does the kernel's struct tcp_info reach field f? (older kernels return
 * a shorter one) */
#define TI_HAS(len, f)                                                         \
	((len) >= (socklen_t)(offsetof(struct tcp_info, f) +                  \
			      sizeof(((struct tcp_info *)0)->f)))

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Tick period: a quarter of the shorter timeout, between 100 ms and 1 s,
 * so a verdict comes at most that late. */
static int live_period_ms(const struct tcp_knobs *k)
{
	int t = 0;

	if (k->user_timeout_ms > 0)
		t = k->user_timeout_ms;
	if (k->zero_window_ms > 0 && (!t || k->zero_window_ms < t))
		t = k->zero_window_ms;
	t /= 4;
	return t < 100 ? 100 : t > 1000 ? 1000 : t;
}

/* Periodic ticks every ms, or none (0). */
static int live_set(struct tcp_knobs *k, int ms)
{
	struct itimerspec its = {
		.it_interval = { ms / 1000, (long)(ms % 1000) * 1000000L },
		.it_value = { ms / 1000, (long)(ms % 1000) * 1000000L },
	};

	if (timerfd_settime(k->lfd, 0, &its, NULL) < 0)
		return -errno;
	k->ticking = ms > 0;
	return 0;
}

static int tcp_info_get(int fd, struct tcp_info *ti, socklen_t *len)
{
	*len = sizeof(*ti);
	memset(ti, 0, sizeof(*ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, ti, len) < 0)
		return -errno;
	return TI_HAS(*len, tcpi_bytes_acked) ? 0 : -ENOTSUP;
}

/* The timer cannot be had (descriptors, kernel too old for the TCP_INFO
 * fields): fall back to the kernel's user timeout on this socket, with
 * its blind spot, rather than have no bound on a dead peer at all. */
static void live_fallback(struct tcp_conn *tc, int err)
{
	tc->live_off = true;
	if (tc->user_ms > 0)
		setsockopt(tc->fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &tc->user_ms,
			   sizeof(tc->user_ms));
	idm_prov_warn(tc->ctx,
		      "tcp: %s: no liveness timer (%s): TCP_USER_TIMEOUT "
		      "instead, which may also end a slow reader",
		      tc->conn ? idm_conn_peer_name(tc->conn) : "connection",
		      idm_strerror(err));
}

static void live_unlink(struct tcp_conn *tc)
{
	struct tcp_knobs *k = tc->live_k;

	if (!k)
		return;
	if (tc->live_prev)
		tc->live_prev->live_next = tc->live_next;
	else
		k->live = tc->live_next;
	if (tc->live_next)
		tc->live_next->live_prev = tc->live_prev;
	tc->live_next = tc->live_prev = NULL;
	tc->live_k = NULL;
}

static void live_fail(struct tcp_conn *tc, const char *what, int64_t ms,
		      const struct tcp_info *ti)
{
	tcp_conn_fail(tc, -ETIMEDOUT,
		      "%s for %lld s (%u bytes not sent, %u segments "
		      "unacknowledged, peer's window %u bytes, last ACK %u ms "
		      "ago)",
		      what, (long long)(ms / 1000), ti->tcpi_notsent_bytes,
		      ti->tcpi_unacked, ti->tcpi_snd_wnd,
		      ti->tcpi_last_ack_recv);
}

/* One watched connection at a tick. */
static void live_check(struct tcp_conn *tc, int64_t now, int period)
{
	struct tcp_info ti;
	socklen_t len;
	int64_t stalled;
	bool zero;

	if (tcp_info_get(tc->fd, &ti, &len) < 0)
		return; /* the socket broke: the receive side says how */
	if (ti.tcpi_bytes_acked != tc->live_acked) {
		tc->live_acked = ti.tcpi_bytes_acked;
		tc->live_since = now;
	}
	if (!ti.tcpi_unacked && !ti.tcpi_notsent_bytes && !tc->tx_blocked) {
		/* all acknowledged: not watched until the next write */
		live_unlink(tc);
		return;
	}
	stalled = now - tc->live_since;
	/* without tcpi_snd_wnd (Linux < 5.4) the window reads as open */
	zero = TI_HAS(len, tcpi_snd_wnd) && ti.tcpi_snd_wnd == 0;
	if (!zero) {
		if (tc->user_ms > 0 && stalled >= tc->user_ms)
			live_fail(tc, "dead peer: no acknowledgement", stalled,
				  &ti);
		return;
	}
	if (tc->zwnd_ms > 0 && stalled >= tc->zwnd_ms) {
		live_fail(tc, "peer stopped reading", stalled, &ti);
		return;
	}
	if (tc->user_ms > 0 && ti.tcpi_last_ack_recv >= (uint32_t)tc->user_ms) {
		/* a live peer answers every probe: its last ACK is at most
		 * one probe interval old (plus a round trip and a tick) */
		int64_t rto = ti.tcpi_rto / 1000, ivl;

		if (rto < LIVE_RTO_MIN_MS)
			rto = LIVE_RTO_MIN_MS;
		ivl = ti.tcpi_backoff >= 10 ? LIVE_RTO_MAX_MS
					    : rto << ti.tcpi_backoff;
		if (ivl > LIVE_RTO_MAX_MS)
			ivl = LIVE_RTO_MAX_MS;
		if ((int64_t)ti.tcpi_last_ack_recv > ivl + 2 * (int64_t)period)
			live_fail(tc, "dead peer: no acknowledgement",
				  (int64_t)ti.tcpi_last_ack_recv, &ti);
	}
}

static void live_tick(struct idm_prov_watch *w, uint32_t revents)
{
	struct tcp_knobs *k = IDM_PROV_CONTAINER_OF(w, struct tcp_knobs, lw);
	struct tcp_conn *tc, *next;
	int period = live_period_ms(k);
	uint64_t ticks;
	int64_t now;

	(void)revents;
	if (read(k->lfd, &ticks, sizeof(ticks)) < 0 && errno == EAGAIN)
		return;
	now = now_ms();
	/* a failure unlinks that connection only (its notification is
	 * deferred): the next one is safe to keep */
	for (tc = k->live; tc; tc = next) {
		next = tc->live_next;
		live_check(tc, now, period);
	}
	if (!k->live && k->ticking)
		live_set(k, 0); /* nothing watched: no more wakeups */
}

static int live_timer_make(struct tcp_knobs *k)
{
	int r;

	k->lfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (k->lfd < 0)
		return -errno;
	r = idm_prov_watch_add(k->ctx, &k->lw, k->lfd, EPOLLIN, live_tick);
	if (r < 0) {
		close(k->lfd);
		k->lfd = -1;
	}
	return r;
}

void tcp_live_start(struct tcp_conn *tc)
{
	struct tcp_knobs *k;
	struct tcp_info ti;
	socklen_t len;
	int r;

	if (tc->closed || tc->live_k || tc->live_off || !tc->conn)
		return;
	if (tc->user_ms <= 0 && tc->zwnd_ms <= 0) {
		tc->live_off = true; /* nothing to watch for */
		return;
	}
	k = idm_prov_priv(idm_prov_conn_provider(tc->conn));
	r = tcp_info_get(tc->fd, &ti, &len);
	if (r == -ENOTSUP) {
		live_fallback(tc, r);
		return;
	}
	if (r < 0) {
		/* not a TCP socket (an adopted socketpair) or a broken one
		 * (the receive side says how): nothing to watch, and no
		 * getsockopt per send to find that out again */
		tc->live_off = true;
		return;
	}
	if (k->lfd < 0) {
		r = live_timer_make(k); /* tcp_live_init could not */
		if (r < 0) {
			live_fallback(tc, r);
			return;
		}
	}
	if (!k->ticking) {
		r = live_set(k, live_period_ms(k));
		if (r < 0) {
			live_fallback(tc, r);
			return;
		}
	}
	tc->live_k = k;
	tc->live_prev = NULL;
	tc->live_next = k->live;
	if (k->live)
		k->live->live_prev = tc;
	k->live = tc;
	tc->live_acked = ti.tcpi_bytes_acked;
	tc->live_since = now_ms();
}

void tcp_live_stop(struct tcp_conn *tc)
{
	/* the timer stops at its next tick if nothing else is watched */
	live_unlink(tc);
}

void tcp_live_move(struct tcp_conn *tc)
{
	bool watched = tc->live_k != NULL;

	/* off the old context's list; the new context's timer takes it
	 * from its next write, or now if it has data outstanding (its
	 * stall clock starts again: a verdict may come one timeout late) */
	live_unlink(tc);
	if (watched)
		tcp_live_start(tc);
}

/* The timer is made when the provider loads, so that a program that
 * counts its descriptors sees it from the start; if it cannot be made
 * now, the first connection that needs it tries again. */
void tcp_live_init(struct tcp_knobs *k, struct idm_ctx *ctx)
{
	k->ctx = ctx;
	k->lfd = -1;
	k->ticking = false;
	k->live = NULL;
	if (k->user_timeout_ms > 0 || k->zero_window_ms > 0)
		(void)live_timer_make(k);
}

void tcp_live_fini(struct tcp_knobs *k)
{
	if (k->lw.added)
		idm_prov_watch_del(k->ctx, &k->lw);
	if (k->lfd >= 0)
		close(k->lfd);
	k->lfd = -1;
}
