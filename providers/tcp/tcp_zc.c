/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Zero-copy Data-In (IDM_TCP_ZEROCOPY=<bytes>, target; both engines:
 * the io_uring engine's IORING_OP_SENDMSG takes MSG_ZEROCOPY too, and
 * the socket's epoll watch, which both engines keep, reports EPOLLERR).
 *
 * The PDUs of a Put_Data of at least that many bytes go with
 * MSG_ZEROCOPY: the kernel sends from the caller's pages instead of
 * copying them into socket buffers, and keeps referencing them until the
 * peer acknowledged the data (a retransmission reads them again). It
 * says when it is done on the socket's error queue: a range [lo, hi] of
 * the numbers of the MSG_ZEROCOPY sendmsg calls, counted from 0 per
 * socket, each call that sent bytes one number (a partial write too).
 *
 * So the caller may not have its buffer back when the last byte left:
 * a Put_Data's completion (tcp_txd_datain_complete) waits on
 * tc->zc_wait until the notification covers the last zero-copy call
 * made when its last PDU left the ring. Completions keep their order:
 * a Data-In completion queued behind a held one waits too.
 *
 * Every byte of a MSG_ZEROCOPY call is sent by reference, the headers
 * too. A PDU's generated header and trailer live in its ring entry,
 * reused as soon as the PDU left; a zero-copy PDU's are moved to a slot
 * of tc->zc_slots, a FIFO freed as notifications come. A write is all
 * zero-copy PDUs or none (tcp_tx_prepare), so no other memory of the
 * provider (control PDUs, ring entries) is ever lent to the kernel.
 *
 * Notifications are read when epoll reports EPOLLERR (it always does
 * while the error queue is not empty), at most TCP_ZC_REAP per wakeup.
 * The kernel reports SO_EE_CODE_ZEROCOPY_COPIED when it copied after
 * all (always on loopback, and on a device without scatter-gather):
 * counted, and said once per connection at debug level.
 */
#include "tcp.h"
#include "tcp_zc.h"
#include "tcp_state.h"
#include "tcp_txd.h"

#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#ifndef SO_EE_ORIGIN_ZEROCOPY
#define SO_EE_ORIGIN_ZEROCOPY 5
#endif
#ifndef SO_EE_CODE_ZEROCOPY_COPIED
#define SO_EE_CODE_ZEROCOPY_COPIED 1
#endif

_Static_assert((TCP_ZC_SLOTS & (TCP_ZC_SLOTS - 1)) == 0,
	       "TCP_ZC_SLOTS must be a power of two");

static const char *peer(const struct tcp_conn *tc)
{
	return tc->conn ? idm_conn_peer_name(tc->conn) : "?";
}

/* Call number s is done: every number below zc_acked is. Numbers wrap
 * at 2^32, hence the signed difference. */
static bool seq_done(const struct tcp_conn *tc, uint32_t s)
{
	return (int32_t)(s - tc->zc_acked) < 0;
}

/* The number of the last zero-copy call so far (-1 before the first:
 * done at once). */
static uint32_t last_call(const struct tcp_conn *tc)
{
	return tc->zc_calls - 1;
}

void tcp_zc_bind(struct tcp_conn *tc, struct tcp_knobs *k)
{
	int one = 1;

	tc->zc_min = 0;
	if (!k || k->zerocopy_min <= 0 || !tc->target || tc->fd < 0)
		return;
	if (setsockopt(tc->fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) < 0) {
		if (!k->zc_warned)
			idm_prov_warn(tc->ctx, "tcp: IDM_TCP_ZEROCOPY: SO_ZEROCOPY: "
				      "%s: sending by copy", strerror(errno));
		k->zc_warned = true;
		return;
	}
	tc->zc_min = (uint32_t)k->zerocopy_min;
}

/* iovecs of e pointing into [from, from + n) point into `to` instead */
static void repoint(struct tcp_txpdu *e, const uint8_t *from, size_t n,
		    uint8_t *to)
{
	for (int k = 0; k < e->iovcnt; k++) {
		const uint8_t *p = e->iov[k].iov_base;

		if (p && p >= from && p < from + n)
			e->iov[k].iov_base = to + (p - from);
	}
}

bool tcp_zc_pin(struct tcp_conn *tc, struct tcp_txpdu *e)
{
	struct tcp_zc_slot *s;
	unsigned i;

	if (!tc->zc_slots) {
		/* once per connection, with its first zero-copy PDU */
		tc->zc_slots = calloc(TCP_ZC_SLOTS, sizeof(*tc->zc_slots));
		if (!tc->zc_slots)
			return false;
	}
	if (tc->zc_count == TCP_ZC_SLOTS)
		return false; /* the kernel holds them all: copy meanwhile */
	i = (tc->zc_head + tc->zc_count++) & (TCP_ZC_SLOTS - 1);
	s = &tc->zc_slots[i];
	_Static_assert(sizeof(s->hdr) == sizeof(e->hdr), "header slot size");
	_Static_assert(sizeof(s->trl) == sizeof(e->trl), "trailer slot size");
	memcpy(s->hdr, e->hdr, sizeof(s->hdr));
	memcpy(s->trl, e->trl, sizeof(s->trl));
	s->retired = false;
	repoint(e, e->hdr, sizeof(e->hdr), s->hdr);
	repoint(e, e->trl, sizeof(e->trl), s->trl);
	e->zc = true;
	e->zc_slot = (int)i;
	return true;
}

/* Slots at the head whose calls are done are free again. */
static void release_slots(struct tcp_conn *tc)
{
	while (tc->zc_count) {
		struct tcp_zc_slot *s = &tc->zc_slots[tc->zc_head];

		if (!s->retired || !seq_done(tc, s->seq))
			return;
		tc->zc_head = (tc->zc_head + 1) & (TCP_ZC_SLOTS - 1);
		tc->zc_count--;
	}
}

void tcp_zc_retire(struct tcp_conn *tc, struct tcp_txpdu *e)
{
	struct tcp_zc_slot *s = &tc->zc_slots[e->zc_slot];

	/* every byte of e went in a zero-copy call up to the last one */
	s->seq = last_call(tc);
	s->retired = true;
	e->zc_slot = -1;
	release_slots(tc);
}

bool tcp_zc_hold(struct tcp_conn *tc, struct tcp_txd *d)
{
	if (!d->zc_used && idm_sq_empty(&tc->zc_wait))
		return false;
	d->zc_seq = last_call(tc);
	if (seq_done(tc, d->zc_seq) && idm_sq_empty(&tc->zc_wait))
		return false;
	idm_sq_push(&tc->zc_wait, &d->link);
	return true;
}

ssize_t tcp_zc_sendmsg(struct tcp_conn *tc, const struct msghdr *mh)
{
	ssize_t n;

	/* MSG_NOSIGNAL: a vanished peer must not raise SIGPIPE in the
	 * caller's process */
	if (!tc->tx_zc)
		return sendmsg(tc->fd, mh, MSG_NOSIGNAL);
	n = sendmsg(tc->fd, mh, MSG_NOSIGNAL | MSG_ZEROCOPY);
	if (n < 0 && errno == ENOBUFS) {
		/* the socket's option memory is full of notifications not
		 * read yet: this call goes by copy (its slots are kept, as
		 * if it had not) */
		idm_prov_dbg(tc->ctx, "tcp: %s: zero-copy send refused "
			     "(ENOBUFS): sent by copy", peer(tc));
		return sendmsg(tc->fd, mh, MSG_NOSIGNAL);
	}
	if (n > 0) {
		tc->zc_calls++;
		tc->zc_sends++;
	}
	return n;
}

int tcp_zc_uring_flags(struct tcp_conn *tc)
{
	tc->u_tx_zc = tc->tx_zc && !tc->zc_copy_next;
	tc->zc_copy_next = false;
	return tc->u_tx_zc ? MSG_ZEROCOPY : 0;
}

bool tcp_zc_uring_result(struct tcp_conn *tc, int res)
{
	if (!tc->u_tx_zc)
		return false;
	if (res > 0) {
		/* the same sendmsg as the epoll engine's: numbered alike */
		tc->zc_calls++;
		tc->zc_sends++;
		return false;
	}
	if (res != -ENOBUFS)
		return false;
	idm_prov_dbg(tc->ctx, "tcp: %s: zero-copy send refused (ENOBUFS): "
		     "sent again by copy", peer(tc));
	tc->zc_copy_next = true;
	return true;
}

/* Ranges remembered out of order that now touch zc_acked join it. */
static void merge_ooo(struct tcp_conn *tc)
{
	bool moved = true;

	while (moved) {
		moved = false;
		for (unsigned i = 0; i < tc->zc_nooo; i++) {
			struct tcp_zc_range *r = &tc->zc_ooo[i];

			if (!seq_done(tc, r->lo - 1))
				continue; /* a gap before it still */
			if (!seq_done(tc, r->hi))
				tc->zc_acked = r->hi + 1;
			*r = tc->zc_ooo[--tc->zc_nooo];
			moved = true;
			break;
		}
	}
}

/* Calls [lo, hi] are done. false: the connection failed. */
static bool note_range(struct tcp_conn *tc, uint32_t lo, uint32_t hi)
{
	/* the kernel's word, but still checked: a range of calls never
	 * made, or reversed, is ignored */
	if ((int32_t)(hi - lo) < 0 || (int32_t)(hi - last_call(tc)) > 0) {
		idm_prov_warn(tc->ctx, "tcp: %s: zero-copy notification "
			      "[%u, %u] outside the %u calls made: ignored",
			      peer(tc), lo, hi, tc->zc_calls);
		return true;
	}
	if (seq_done(tc, hi))
		return true; /* already known */
	if (seq_done(tc, lo - 1)) { /* no gap: lo <= zc_acked */
		tc->zc_acked = hi + 1;
		merge_ooo(tc);
		return true;
	}
	if (tc->zc_nooo == TCP_ZC_OOO) {
		/* never seen: held completions could not be told apart */
		tcp_conn_fail(tc, -EIO, "zero-copy notifications out of order "
			      "beyond %d ranges", TCP_ZC_OOO);
		return false;
	}
	tc->zc_ooo[tc->zc_nooo++] = (struct tcp_zc_range){ lo, hi };
	return true;
}

/* The zero-copy notification of one error-queue message, if it is one. */
static const struct sock_extended_err *zc_note(struct msghdr *mh)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		const struct sock_extended_err *ee;

		if (!((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
		      (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR)))
			continue;
		ee = (const struct sock_extended_err *)CMSG_DATA(c);
		if (ee->ee_errno == 0 && ee->ee_origin == SO_EE_ORIGIN_ZEROCOPY)
			return ee;
	}
	return NULL;
}

/* One error-queue message: 1 read, 0 queue empty, <0 failed (the
 * connection, if the range made that happen, is closed). */
static int reap_one(struct tcp_conn *tc)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct sock_extended_err) +
				    sizeof(struct sockaddr_in6))];
		struct cmsghdr align;
	} ctl;
	struct msghdr mh = { .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	const struct sock_extended_err *ee;

	if (recvmsg(tc->fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	ee = zc_note(&mh);
	if (!ee)
		return 1; /* not ours: dropped */
	tc->zc_notes++;
	if (ee->ee_code & SO_EE_CODE_ZEROCOPY_COPIED) {
		if (!tc->zc_copied)
			idm_prov_dbg(tc->ctx, "tcp: %s: zero-copy: the kernel "
				     "copied the data anyway (loopback, or a "
				     "device without scatter-gather)", peer(tc));
		tc->zc_copied++;
	}
	return note_range(tc, ee->ee_info, ee->ee_data) ? 1 : -EIO;
}

/* Held completions whose calls are done, in order. false: the
 * connection closed under a callback. */
static bool complete_held(struct tcp_conn *tc)
{
	struct tcp_txd *d;

	while ((d = tcp_txd_of(tc->zc_wait.head)) && seq_done(tc, d->zc_seq)) {
		idm_sq_pop(&tc->zc_wait);
		idm_prov_dbg(tc->ctx, "tcp: %s: zero-copy: Data-In completion "
			     "released after call %u", peer(tc), d->zc_seq);
		if (!tcp_txd_datain_complete(tc, d))
			return false;
	}
	return true;
}

int tcp_zc_reap(struct tcp_conn *tc)
{
	int n = 0, r = 0;

	while (n < TCP_ZC_REAP && !tc->closed && (r = reap_one(tc)) > 0)
		n++;
	if (tc->closed)
		return n ? n : -EPIPE;
	release_slots(tc);
	if (!complete_held(tc))
		return n;
	/* a real error with the queue empty: the caller's to handle */
	return n ? n : r;
}

void tcp_zc_cancel_task(struct tcp_conn *tc, struct idm_task *t)
{
	struct idm_sq_link *l, *prev = NULL, *next;

	for (l = tc->zc_wait.head; l; l = next) {
		struct tcp_txd *d = tcp_txd_of(l);

		next = l->next;
		if (d->task != t) {
			prev = l;
			continue;
		}
		/* no completion for a freed task; the kernel may still send
		 * from its pages (doc: a freed task's buffer) */
		idm_sq_remove(&tc->zc_wait, prev, l);
		tcp_txd_put(tc, d);
	}
}

void tcp_zc_before_close(struct tcp_conn *tc)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (!tc->zc_min || tc->zc_acked == tc->zc_calls)
		return;
	/* A plain close() leaves the unacknowledged data to be sent, and
	 * resent, from the slots and the caller's pages, which are reused
	 * once close returns: reset the connection instead, so that the
	 * kernel drops that data and the peer never reads bytes changed
	 * under it. The connection is being torn down either way. */
	if (setsockopt(tc->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) == 0)
		idm_prov_dbg(tc->ctx, "tcp: %s: zero-copy calls %u..%u not "
			     "notified at close: connection reset", peer(tc),
			     tc->zc_acked, last_call(tc));
}

void tcp_zc_drop(struct tcp_conn *tc)
{
	struct tcp_txd *d;
	unsigned held = 0;

	while ((d = tcp_txd_of(idm_sq_pop(&tc->zc_wait)))) {
		tcp_txd_put(tc, d);
		held++;
	}
	/* the socket is gone (reset if calls were outstanding:
	 * tcp_zc_before_close): the kernel reads no slot any more */
	tc->zc_head = tc->zc_count = 0;
	if (tc->zc_sends)
		idm_prov_dbg(tc->ctx, "tcp: %s: zero-copy: %llu sends, %llu "
			     "notifications, %llu of them copied; %u completions "
			     "held at close", peer(tc),
			     (unsigned long long)tc->zc_sends,
			     (unsigned long long)tc->zc_notes,
			     (unsigned long long)tc->zc_copied, held);
}
