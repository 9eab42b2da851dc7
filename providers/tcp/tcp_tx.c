/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Send side of a TCP connection. Work is queued as descriptors (a copied
 * control PDU, or a Data-In / Data-Out / R2T transfer over a caller
 * buffer) in call order. A ring of up to TCP_RING prepared PDUs (grown
 * from TCP_RING_MIN as more are ready at once), whose
 * iovecs point straight into the caller's buffers, is written with one
 * sendmsg; partial writes resume where they stopped. Data PDUs are built
 * lazily as ring slots free up, so a 16 MiB Put_Data costs no memory.
 *
 * Backpressure. Each queued unit is a descriptor from the connection's
 * pool, and a control PDU is copied into it. Reading went on while the
 * socket was full, so a peer that sends requests (NOP-Out pings) and
 * never reads the answers made the pool and the copies grow without
 * limit. The queue is bounded now (idm_conn_set_send_limits, with the
 * marks of <libidm/provider.h>):
 *  - above the high mark input stops (no EPOLLIN): the kernel's receive
 *    buffer fills and the TCP window pushes back on the peer; below the
 *    low mark it resumes;
 *  - Send_Control beyond the limit returns -EAGAIN (tcp_txd_admit);
 *  - what the provider queues itself (Put_Data's Data-In, R2Ts, the
 *    Data-Out answering them, a DataACK SNACK), and SCSI Commands and
 *    responses, are counted but never refused, so no task fails midway.
 *    They all belong to tasks already received or sent, which the command
 *    window bounds; with input stopped no new one arrives. The half of
 *    the limit above the high mark is the room for them.
 */
#include "tcp.h"
#include "tcp_tx.h"
#include "tcp_txd.h"
#include "tcp_state.h"
#include "tcp_live.h"
#include "tcp_zc.h"
#include "tcp_sg.h"
#include "crc32c.h"
#include "tcp_segment.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static const uint8_t zeros[4];

#define TX_IOV TCP_TX_IOV
_Static_assert(TX_IOV >= TCP_RING * 4, "a full ring must fit one sendmsg");

/* Writing happens from progress context only, so that completions never
 * run inside the caller's call. */
void tcp_tx_kick(struct tcp_conn *tc)
{
	if (tc->closed)
		return;
	tc->eops->kick_tx(tc); /* io_uring: at the end of the pass */
}

void tcp_tx_queue(struct tcp_conn *tc, struct tcp_txd *d)
{
	d->hd = tc->hd;
	d->dd = tc->dd;
	if (d->task) {
		d->tt = tcp_task(d->task);
		d->tt->ntxd++;
	}
	idm_sq_push(&tc->gen, &d->link);
	tcp_tx_kick(tc);
	tcp_txd_queued(tc);
}

/* ext_sg: external data at ext_off of a scatter-gather buffer instead
 * of at ext_data */
static int ctrl_queue(struct tcp_conn *tc, const uint8_t *bhs, const void *ahs,
		      size_t ahs_len, const void *data, size_t data_len,
		      struct idm_task *task, const uint8_t *ext_data,
		      const struct idm_buf *ext_sg, size_t ext_off, uint32_t ext_len)
{
	size_t need = IDM_ISCSI_BHS_LEN + ahs_len + data_len;
	struct tcp_txd *d;

	if ((ahs_len & 3) || ahs_len > 255 * 4 || data_len > 0xffffff)
		return -EINVAL;
	d = tcp_txd_get(tc);
	if (!d)
		return -ENOMEM;
	if (d->ccap < need) {
		/* grows to the largest control PDU seen, then stays */
		uint8_t *nb = realloc(d->cbuf, need);
		if (!nb) {
			tcp_txd_put(tc, d);
			return -ENOMEM;
		}
		d->cbuf = nb;
		d->ccap = need;
	}
	memcpy(d->cbuf, bhs, IDM_ISCSI_BHS_LEN);
	if (ahs_len)
		memcpy(d->cbuf + IDM_ISCSI_BHS_LEN, ahs, ahs_len);
	d->cbuf[IDM_ISCSI_BHS_TOTAL_AHS_LEN] = (uint8_t)(ahs_len / 4);
	d->hlen = (uint32_t)(IDM_ISCSI_BHS_LEN + ahs_len);
	if (ext_data || ext_sg) {
		d->data = ext_data;
		d->sg = ext_data ? NULL : ext_sg;
		d->sg_off = ext_off;
		d->dlen = ext_len;
	} else {
		if (data_len)
			memcpy(d->cbuf + d->hlen, data, data_len);
		d->data = d->cbuf + d->hlen;
		d->dlen = (uint32_t)data_len;
	}
	idm_iscsi_bhs_set_data_len(d->cbuf, d->dlen);
	d->qbytes = d->hlen + (ext_data || ext_sg ? 0 : (uint32_t)data_len);
	tc->q_bytes += d->qbytes;
	d->kind = TXD_CTRL;
	d->task = task;
	tcp_tx_queue(tc, d);
	return 0;
}

int tcp_tx_ctrl(struct tcp_conn *tc, const uint8_t *bhs, const void *ahs,
		size_t ahs_len, const void *data, size_t data_len,
		struct idm_task *task, const uint8_t *ext_data,
		uint32_t ext_len)
{
	return ctrl_queue(tc, bhs, ahs, ahs_len, data, data_len, task, ext_data,
			  NULL, 0, ext_len);
}

int tcp_tx_ctrl_sg(struct tcp_conn *tc, const uint8_t *bhs, const void *ahs,
		   size_t ahs_len, struct idm_task *task, const struct idm_buf *sg,
		   size_t sg_off, uint32_t len)
{
	return ctrl_queue(tc, bhs, ahs, ahs_len, NULL, 0, task, NULL, sg, sg_off,
			  len);
}

/* pad + data digest after a payload; crc: the digest of the payload so
 * far (when d->dd) */
static void add_trailer(const struct tcp_txd *d, struct tcp_txpdu *e,
			uint32_t crc, uint32_t len)
{
	uint32_t pad = idm_iscsi_pad4(len), n = pad;

	if (!len)
		return;
	memset(e->trl, 0, pad);
	if (d->dd) {
		crc = tcp_crc32c(crc, zeros, pad);
		tcp_crc32c_put(e->trl + pad, tcp_crc32c_final(crc));
		n += IDM_ISCSI_DIGEST_LEN;
	}
	if (n) {
		e->iov[e->iovcnt].iov_base = e->trl;
		e->iov[e->iovcnt++].iov_len = n;
		e->len += n;
	}
}

static void add_iov(struct tcp_txpdu *e, const void *p, size_t n)
{
	if (!n)
		return;
	e->iov[e->iovcnt].iov_base = (void *)p;
	e->iov[e->iovcnt++].iov_len = n;
	e->len += n;
}

/* len payload bytes, byte p on of base (or of d->sg from d->sg_off when
 * base is NULL), then pad and digest. The digest is computed here, as the
 * ring takes the PDU, soon after the caller filled the buffer, and the
 * PDUs then leave in as few sendmsg calls as the socket takes. Deferring
 * each PDU's digest to just before the sendmsg that carries it (so that
 * the kernel copies data the CRC just read) was measured slower at 1 MiB
 * reads: more, smaller sendmsg calls, and more target CPU per I/O. */
static void add_payload(const struct tcp_txd *d, struct tcp_txpdu *e,
			const uint8_t *base, size_t p, uint32_t len)
{
	uint32_t crc = TCP_CRC32C_INIT;

	if (!len)
		return;
	if (base) {
		add_iov(e, base + p, len);
		if (d->dd)
			crc = tcp_crc32c(crc, base + p, len);
	} else {
		/* one placeholder iovec: the engine's write expands it */
		e->sg = d->sg;
		e->sg_off = d->sg_off + p;
		e->iov[e->iovcnt].iov_base = NULL;
		e->iov[e->iovcnt++].iov_len = len;
		e->len += len;
		if (d->dd)
			crc = tcp_sg_crc32c(crc, d->sg, e->sg_off, len);
	}
	add_trailer(d, e, crc, len);
}

/* A generated header in e->hdr (+ its digest). */
static void add_hdr(const struct tcp_txd *d, struct tcp_txpdu *e)
{
	size_t n = IDM_ISCSI_BHS_LEN;

	if (d->hd) {
		tcp_crc32c_put(
			e->hdr + IDM_ISCSI_BHS_LEN,
			tcp_crc32c_final(tcp_crc32c(TCP_CRC32C_INIT, e->hdr,
						    IDM_ISCSI_BHS_LEN)));
		n += IDM_ISCSI_DIGEST_LEN;
	}
	add_iov(e, e->hdr, n);
}

/* Prepare the next PDU of d in e; true if it is d's last. */
static bool gen_one(struct tcp_conn *tc, struct tcp_txd *d, struct tcp_txpdu *e)
{
	uint32_t dsl = tc->send_dsl, len;
	bool final, last = true;

	e->txd = d;
	e->iovcnt = 0;
	e->len = e->done = 0;
	e->skip = false;
	e->zc = false;
	e->zc_slot = -1;
	e->sg = NULL;
	switch (d->kind) {
	case TXD_CTRL:
		add_iov(e, d->cbuf, d->hlen);
		if (d->hd) {
			tcp_crc32c_put(e->hdig, tcp_crc32c_final(tcp_crc32c(
							TCP_CRC32C_INIT,
							d->cbuf, d->hlen)));
			add_iov(e, e->hdig, IDM_ISCSI_DIGEST_LEN);
		}
		add_payload(d, e, d->data, 0, d->dlen);
		break;
	case TXD_R2T:
		tcp_pdu_r2t(e->hdr, d->tmpl, d->ttt, d->datasn, d->start,
			    d->end - d->start);
		add_hdr(d, e);
		break;
	case TXD_DATAIN:
		len = tcp_seg_next(d->pos, d->end, d->start, d->mbl, dsl,
				   &final);
		last = d->pos + len == d->end;
		tcp_pdu_datain(e->hdr, d->tmpl, len,
			       last && d->ack ? d->ttt : IDM_ISCSI_RESERVED_TAG,
			       d->datasn++, d->wire_off + d->pos, final,
			       last && d->ack, last && d->status);
		add_hdr(d, e);
		add_payload(d, e, d->base, d->pos, len);
		d->pos += len;
		if (d->zc && tcp_zc_pin(tc, e))
			d->zc_used = true;
		break;
	case TXD_DATAOUT:
		len = tcp_seg_next(d->pos, d->end, d->start, 0, dsl, &final);
		last = d->pos + len == d->end;
		tcp_pdu_dataout(e->hdr, d->tmpl, d->itt, d->ttt, tc->exp_statsn,
				d->datasn++, d->pos, len, last);
		add_hdr(d, e);
		add_payload(d, e, d->base, d->pos, len);
		d->pos += len;
		break;
	}
	e->last = last;
	idm_prov_stats_pdu(tc->st, 1, d->kind == TXD_CTRL ? d->cbuf : e->hdr,
			   e->len);
	return last;
}

/* Entry i after the head. r_cap is a power of two: a mask, not a
 * division, on the hot path. */
static inline struct tcp_txpdu *ring_at(struct tcp_conn *tc, unsigned i)
{
	return &tc->ring[(tc->r_head + i) & (tc->r_cap - 1)];
}

/* Move a prepared PDU to another slot: its iovecs that point into the
 * entry itself (generated header, header digest, pad and data digest)
 * must point into the new one. */
static void txpdu_move(struct tcp_txpdu *dst, const struct tcp_txpdu *src)
{
	uintptr_t lo = (uintptr_t)src, hi = (uintptr_t)(src + 1);

	*dst = *src;
	for (int k = 0; k < src->iovcnt; k++) {
		uintptr_t p = (uintptr_t)src->iov[k].iov_base;

		if (p >= lo && p < hi)
			dst->iov[k].iov_base = (char *)dst + (p - lo);
	}
}

/* Twice the entries (TCP_RING_MIN the first time), the queued ones
 * moved to the front. Happens only while the ring is smaller than what
 * the connection keeps in flight, so a few times per connection. */
static int ring_grow(struct tcp_conn *tc)
{
	unsigned cap = tc->r_cap ? tc->r_cap * 2 : TCP_RING_MIN;
	struct tcp_txpdu *nr;

	if (tc->r_cap >= TCP_RING)
		return -ENOSPC;
	nr = malloc(cap * sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	for (unsigned i = 0; i < tc->r_count; i++)
		txpdu_move(&nr[i], ring_at(tc, i));
	free(tc->ring);
	tc->ring = nr;
	tc->r_cap = cap;
	tc->r_head = 0;
	return 0;
}

/* Prepare queued PDUs into free ring slots. Fails only when there is no
 * ring at all and no memory for one. */
static int fill_ring(struct tcp_conn *tc)
{
	while (!idm_sq_empty(&tc->gen)) {
		struct tcp_txd *d = tcp_txd_of(tc->gen.head);
		struct tcp_txpdu *e;

		if (tc->r_count == tc->r_cap && ring_grow(tc) < 0) {
			if (!tc->r_cap)
				return -ENOMEM;
			break; /* full at its largest, or memory short */
		}
		e = ring_at(tc, tc->r_count);

		d->inflight++;
		tc->r_count++;
		if (gen_one(tc, d, e)) {
			d->gen_done = true;
			idm_sq_pop(&tc->gen);
		}
	}
	return 0;
}

/* The ring's head entry left the socket (or was skipped). Returns false if
 * the connection closed under a callback. */
static bool entry_done(struct tcp_conn *tc)
{
	struct tcp_txpdu *e = &tc->ring[tc->r_head];
	struct tcp_txd *d = e->txd;

	tc->r_head = (tc->r_head + 1) & (tc->r_cap - 1);
	tc->r_count--;
	e->txd = NULL;
	if (e->zc_slot >= 0)
		tcp_zc_retire(tc, e);
	if (--d->inflight || !d->gen_done)
		return true;
	if (!d->cancelled && d->kind == TXD_DATAIN && d->task) {
		/* zero copy: the caller's pages are the kernel's until it
		 * says otherwise (tcp_zc.c completes it then) */
		if (tcp_zc_hold(tc, d))
			return true;
		return tcp_txd_datain_complete(tc, d);
	}
	tcp_txd_put(tc, d);
	return true;
}

/* The iovecs of what is left of e, from iov[cnt] on; sets *full when
 * iov (TX_IOV entries) is. Returns the new count. */
static int entry_iovs(const struct tcp_txpdu *e, struct iovec *iov, int cnt,
		      bool *full)
{
	size_t skip = e->done;

	for (int k = 0; k < e->iovcnt && !*full; k++) {
		struct iovec v = e->iov[k];
		if (skip >= v.iov_len) {
			skip -= v.iov_len;
			continue;
		}
		v.iov_len -= skip;
		if (!v.iov_base) {
			/* scatter-gather payload: its segments */
			size_t covered = 0;
			int m = idm_prov_buf_iov(e->sg, e->sg_off + skip,
						 v.iov_len, iov + cnt,
						 TX_IOV - cnt, &covered);
			if (m > 0)
				cnt += m;
			*full = covered < v.iov_len;
			skip = 0;
			continue;
		}
		if (cnt == TX_IOV) {
			*full = true;
			break;
		}
		v.iov_base = (char *)v.iov_base + skip;
		skip = 0;
		iov[cnt++] = v;
	}
	return cnt;
}

int tcp_tx_prepare(struct tcp_conn *tc, struct iovec *iov)
{
	bool full = false, first = true;
	int cnt = 0;

	if (tc->closed)
		return -1;
	if (fill_ring(tc) < 0) {
		tcp_conn_fail(tc, -ENOMEM, "no memory for the send ring");
		return -1;
	}
	/* drop skipped entries at the head */
	while (tc->r_count && tc->ring[tc->r_head].skip)
		if (!entry_done(tc))
			return -1;
	if (!tc->r_count) {
		tc->tx_blocked = false;
		tcp_watch_update(tc);
		return 0;
	}
	/* a prefix of what is queued: stops where iov is full, and where
	 * zero-copy PDUs and others meet (one write lends the kernel only
	 * memory kept for it: tcp_zc.c) */
	for (unsigned i = 0; i < tc->r_count && cnt <= TX_IOV - 4 && !full;
	     i++) {
		struct tcp_txpdu *e = ring_at(tc, i);

		if (e->skip)
			continue;
		if (first)
			tc->tx_zc = e->zc;
		else if (e->zc != tc->tx_zc)
			break;
		first = false;
		cnt = entry_iovs(e, iov, cnt, &full);
	}
	return cnt;
}

bool tcp_tx_sent(struct tcp_conn *tc, ssize_t n, int err, bool short_write)
{
	if (n < 0) {
		if (err == EAGAIN || err == EWOULDBLOCK) {
			tc->tx_blocked = true;
			tcp_watch_update(tc);
			tcp_live_sent(tc);
			return false;
		}
		tcp_conn_fail(tc, err == EPIPE ? -ECONNRESET : -err,
			      "send failed: %s%s", strerror(err),
			      err == ETIMEDOUT ? TCP_TIMEDOUT_HINT : "");
		return false;
	}
	/* account every byte first: a completion callback below may
	 * cancel a task whose PDU is already partly on the wire */
	tcp_tx_account(tc, (size_t)n);
	return tcp_tx_retire(tc, short_write);
}

void tcp_tx_account(struct tcp_conn *tc, size_t n)
{
	if (n > 0)
		tcp_live_sent(tc); /* a flag test unless just idle */
	for (unsigned i = 0; i < tc->r_count && n > 0; i++) {
		struct tcp_txpdu *e = ring_at(tc, i);
		size_t take = e->len - e->done;

		if (e->skip)
			continue;
		if (n < take)
			take = n;
		e->done += take;
		n -= take;
	}
}

bool tcp_tx_retire(struct tcp_conn *tc, bool short_write)
{
	while (tc->r_count) {
		struct tcp_txpdu *e = &tc->ring[tc->r_head];

		if (!e->skip && e->done < e->len)
			break;
		if (!entry_done(tc))
			return false;
	}
	if (short_write && !tc->closed) {
		/* the socket took less than it was given: it is full, and
		 * another write would only say EAGAIN */
		tc->tx_blocked = true;
		tcp_watch_update(tc);
		return false;
	}
	return !tc->closed;
}

/* A half-written PDU (there is at most one, at the ring head) belongs to
 * a task being freed: copy what is left of it so the stream stays valid. */
static int bounce_head(struct tcp_conn *tc, struct tcp_txpdu *e)
{
	size_t left = e->len - e->done, skip = e->done, at = 0;

	if (tc->bounce_cap < left) {
		uint8_t *nb = realloc(tc->bounce, left);
		if (!nb)
			return -ENOMEM;
		tc->bounce = nb;
		tc->bounce_cap = left;
	}
	for (int k = 0; k < e->iovcnt; k++) {
		const struct iovec *v = &e->iov[k];
		if (skip >= v->iov_len) {
			skip -= v->iov_len;
			continue;
		}
		if (!v->iov_base)
			idm_prov_buf_copy_out(tc->bounce + at, e->sg, e->sg_off + skip,
					      v->iov_len - skip);
		else
			memcpy(tc->bounce + at, (char *)v->iov_base + skip,
			       v->iov_len - skip);
		at += v->iov_len - skip;
		skip = 0;
	}
	idm_prov_stats_copy(tc->st, left); /* rare: its task is being freed */
	e->zc = false; /* the bounce buffer is reused: not lent to the kernel */
	e->iov[0].iov_base = tc->bounce;
	e->iov[0].iov_len = left;
	e->iovcnt = 1;
	e->len = left;
	e->done = 0;
	return 0;
}

void tcp_tx_cancel_task(struct tcp_conn *tc, struct idm_task *t)
{
	struct idm_sq_link *l, *prev, *next;
	struct tcp_txd *d;

	if (!tcp_task(t)->ntxd)
		return;
	tc->eops->tx_changed(tc);
	for (unsigned i = 0; i < tc->r_count; i++) {
		struct tcp_txpdu *e = ring_at(tc, i);

		if (!e->txd || e->txd->task != t)
			continue;
		e->txd->cancelled = true;
		if (e->done == 0) {
			e->skip = true;
		} else if (e->done < e->len && bounce_head(tc, e) < 0) {
			tcp_conn_fail(
				tc, -ENOMEM,
				"no memory to finish a PDU of a freed task");
			return;
		}
	}
	for (prev = NULL, l = tc->gen.head; l; l = next) {
		next = l->next;
		d = tcp_txd_of(l);
		if (d->task != t) {
			prev = l;
			continue;
		}
		idm_sq_remove(&tc->gen, prev, l);
		d->cancelled = true;
		d->gen_done = true;
		if (!d->inflight)
			tcp_txd_put(tc, d);
	}
	tcp_zc_cancel_task(tc, t); /* completions held for zero copy */
	/* txds still referenced by ring entries forget the task now */
	for (unsigned i = 0; i < tc->r_count; i++) {
		struct tcp_txpdu *e = ring_at(tc, i);
		if (e->txd && e->txd->task == t)
			tcp_txd_forget_task(e->txd);
	}
}

void tcp_tx_drop_all(struct tcp_conn *tc)
{
	struct tcp_txd *d;

	tc->eops->tx_changed(tc);
	while (tc->r_count) {
		struct tcp_txpdu *e = &tc->ring[tc->r_head];

		d = e->txd;
		tc->r_head = (tc->r_head + 1) & (tc->r_cap - 1);
		tc->r_count--;
		e->txd = NULL;
		if (d && --d->inflight == 0 && d->gen_done)
			tcp_txd_put(tc, d);
	}
	while ((d = tcp_txd_of(idm_sq_pop(&tc->gen)))) {
		if (d->inflight == 0)
			tcp_txd_put(tc, d);
		else
			d->gen_done = true;
	}
	tcp_zc_drop(tc);
}

/* What a descriptor still has to put on the wire, headers of PDUs not yet
 * generated left out. */
static uint64_t txd_left(const struct tcp_txd *d)
{
	switch (d->kind) {
	case TXD_CTRL:
		return d->hlen + d->dlen;
	case TXD_R2T:
		return IDM_ISCSI_BHS_LEN;
	default:
		return d->end - d->pos;
	}
}

void tcp_tx_stats(struct idm_conn *conn, struct idm_prov_stats *st)
{
	struct tcp_conn *tc = idm_prov_conn_priv(conn);
	uint32_t n = 0;
	uint64_t bytes = 0;

	for (unsigned i = 0; i < tc->r_count; i++) {
		const struct tcp_txpdu *e = ring_at(tc, i);
		n++;
		bytes += e->len - e->done;
	}
	for (const struct idm_sq_link *l = tc->gen.head; l; l = l->next) {
		n++;
		bytes += txd_left(tcp_txd_of((struct idm_sq_link *)l));
	}
	st->sendq_entries = n;
	st->sendq_bytes = bytes;
}
