/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Receive side of a TCP connection: BHS -> AHS and header digest -> data
 * segment -> pad and data digest, checking every length against the
 * limits before reading it. In full feature phase small pieces come out
 * of a staging buffer (one recv() serves many small PDUs; it grows from
 * 4 to 64 KiB while the connection streams, see TCP_STAGE); login,
 * a few PDUs, reads each piece straight into its place and so holds no
 * stage. A data segment
 * bound for a caller buffer is read into it directly (readv) once what
 * is already staged is used up, so big payloads are copied only by the
 * kernel. A SCSI Command's immediate data waits until its control_notify
 * said where it goes (tcp_role.early); the callback never waits for
 * it.
 */
#include "tcp.h"
#include "tcp_rx.h"
#include "tcp_state.h"
#include "tcp_late.h"
#include "tcp_tx.h"
#include "tcp_sg.h"
#include "crc32c.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

static bool mid_pdu(const struct tcp_conn *tc)
{
	return tc->rs != RX_BHS || tc->rgot != 0;
}

/* The stage, taken once full feature phase brought its first bytes and
 * kept while the connection is busy (no malloc per I/O). Login goes
 * without: its handful of PDUs cost a few more recv()s, not 4 KiB per
 * connection in a login storm; nor does a session that logs in and stays
 * idle. Without memory reads go in place, only slower. */
static uint8_t *rx_stage(struct tcp_conn *tc)
{
	if (tc->stage && tc->s_grow) {
		/* empty (we only read into it then): no bytes to carry */
		uint32_t cap = tcp_stage_cap(tc->scap, true);
		uint8_t *bigger = malloc(cap);

		tc->s_grow = false;
		if (bigger) { /* else the old one serves on */
			free(tc->stage);
			tc->stage = bigger;
			tc->scap = cap;
		}
	}
	if (!tc->stage && tc->ffp_rx) {
		tc->stage = malloc(TCP_STAGE);
		tc->scap = tc->stage ? TCP_STAGE : 0;
	}
	return tc->stage;
}

/* Most destination pieces one direct read fills (segments of a
 * scatter-gather buffer), plus the stage tail. */
#define RX_IOV 8

/* The connection closed under the receive machine, or the read failed. */
static void rx_fail(struct tcp_conn *tc, int err)
{
	if (err == 0)
		tcp_conn_fail(tc, -ECONNRESET, "%s",
			      mid_pdu(tc) ? "peer closed the connection in "
					    "the middle of a PDU"
					  : "peer closed the connection");
	else
		tcp_conn_fail(tc, -err, "receive failed: %s%s", strerror(err),
			      err == ETIMEDOUT ? TCP_TIMEDOUT_HINT : "");
}

/* io_uring engine (or bytes it read before the connection moved to an
 * epoll context): the engine's read buffer already is a stage, so the
 * bytes go straight from it to their place, without a second one. */
static int rx_from_engine(struct tcp_conn *tc, const struct iovec *dst,
			  int ndst, uint32_t need)
{
	ssize_t n = tc->eops->readv(tc, dst, ndst);

	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0; /* the read's completion runs us again */
		rx_fail(tc, n == 0 ? 0 : errno);
		return -1;
	}
	/* the buffer ran out and the read that filled it emptied the socket
	 * (it was short): wait for the socket's watch, as a short recv()
	 * does under epoll; if it was full, a read is queued that runs us */
	tc->rx_dry = tc->u_beg == tc->u_end && !tc->u_full;
	if (tc->rs == RX_DATA && tc->rtask) /* payload, not a header */
		idm_prov_stats_copy(tc->st, (uint64_t)n);
	return (int)n;
}

/* Whether the engine's read buffer serves this read: always while it
 * holds bytes (or their end); with io_uring, for all but a large payload
 * bound for its place, which is read straight into it (below) as under
 * epoll, so that the kernel's is its only copy. Large, as under epoll,
 * by the size the stream made the buffer grow to: the engine's own, or
 * the stage's when reads in place filled (the stage's tail then comes
 * along, and the stage grows as it would under epoll). */
static bool rx_engine_reads(const struct tcp_conn *tc, uint32_t need,
			    bool direct)
{
	uint32_t cap = tcp_stage_cap(tc->ucap, false);

	if (tc->u_beg < tc->u_end || tc->u_err)
		return true;
	if (tc->scap > cap)
		cap = tc->scap;
	return tc->eng && !(direct && need > tcp_rx_copy_max(cap));
}

/* The SO_RCVLOWAT that makes a large payload's `need` bytes come whole */
static int rx_mark(uint32_t need)
{
	return (int)(need < TCP_LOWAT_MAX ? need : TCP_LOWAT_MAX);
}

/* About to wait for the socket with `need` bytes to read, `direct` into
 * their place: a large payload is better read whole, so the socket is
 * made ready only once it is all in (the peer announced it: it comes,
 * and a peer that vanishes still wakes us with its FIN or reset); for
 * anything else at its first byte again. One setsockopt() when the mark
 * changes, none while it stays. 0, or -1: the connection failed. */
static int rx_wait_for(struct tcp_conn *tc, uint32_t need, bool direct)
{
	int mark = 1, now = tc->lowat ? tc->lowat : 1;

	if (direct && need >= TCP_LOWAT_MIN)
		mark = rx_mark(need);
	if (mark == now)
		return 0;
	if (setsockopt(tc->fd, SOL_SOCKET, SO_RCVLOWAT, &mark, sizeof(mark))) {
		if (mark > now)
			return 0; /* a higher mark only saves reads */
		/* a lower one is what lets the next bytes wake us */
		tcp_conn_fail(tc, -errno, "SO_RCVLOWAT: %s", strerror(errno));
		return -1;
	}
	tc->lowat = mark;
	return 0;
}

/* rx_fill's read from the socket: in place (direct: the pieces of dst,
 * and the stage's tail if there is a stage) or into the stage. The size
 * asked for into *asked. */
static ssize_t rx_recv(struct tcp_conn *tc, const struct iovec *dst, int ndst,
		       uint32_t need, bool direct, uint8_t *stage,
		       size_t *asked)
{
	ssize_t n;

	for (;;) {
		if (direct) {
			struct iovec v[RX_IOV + 1];

			memcpy(v, dst, (size_t)ndst * sizeof(*v));
			v[ndst].iov_base = stage;
			v[ndst].iov_len = TCP_STAGE_TAIL;
			*asked = (size_t)need + (stage ? TCP_STAGE_TAIL : 0);
			n = readv(tc->fd, v, stage ? ndst + 1 : ndst);
		} else {
			*asked = tc->scap;
			n = recv(tc->fd, stage, tc->scap, 0);
		}
		if (n >= 0 || errno != EINTR)
			return n;
	}
}

/* The stage is empty: read. >0 bytes got in place, 0 would block, <0
 * failed; RX_STAGED: the stage holds bytes now, which rx_readv copies. */
#define RX_STAGED INT_MAX
static int rx_fill(struct tcp_conn *tc, const struct iovec *dst, int ndst,
		   uint32_t need, bool direct)
{
	uint8_t *stage;
	size_t asked;
	ssize_t n;
	bool engine;

	tc->s_beg = tc->s_end = 0;
	engine = rx_engine_reads(tc, need, direct);
	stage = engine ? NULL : rx_stage(tc);
	direct = !engine &&
		 (!stage || (direct && need > tcp_rx_copy_max(tc->scap)));
	if (tc->rx_dry) /* saves the EAGAIN recv of each wakeup */
		return rx_wait_for(tc, need, direct);
	if (engine) {
		if (tc->lowat > 1 && rx_wait_for(tc, need, false) < 0)
			return -1;
		return rx_from_engine(tc, dst, ndst, need);
	}
	n = rx_recv(tc, dst, ndst, need, direct, stage, &asked);
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return rx_wait_for(tc, need, direct);
		rx_fail(tc, n == 0 ? 0 : errno);
		return -1;
	}
	/* a short read took all the socket had (TCP hands over what is
	 * queued, up to the size asked); a full one, even in place, says
	 * the connection streams: the stage grows */
	tc->rx_dry = (size_t)n < asked;
	tc->s_grow = stage && !tc->rx_dry && tc->scap < TCP_STAGE_MAX;
	if (!stage && tc->ffp)
		tc->ffp_rx = true; /* the next read takes the stage */
	if (direct) {
		if ((size_t)n <= need)
			return (int)n;
		tc->s_end = (uint32_t)(n - need);
		return (int)need;
	}
	tc->s_end = (uint32_t)n;
	return RX_STAGED;
}

/* Up to `need` bytes into the ndst pieces of dst (their lengths add up
 * to need): >0 bytes got, 0 would block, <0 failed. Bytes come from the
 * stage while it holds some (into the first piece only), else from the
 * socket: a direct read fills the pieces in place. */
static int rx_readv(struct tcp_conn *tc, const struct iovec *dst, int ndst,
		    uint32_t need, bool direct)
{
	ssize_t n;

	if (tc->s_beg == tc->s_end) {
		int r = rx_fill(tc, dst, ndst, need, direct);

		if (r != RX_STAGED)
			return r;
	}
	n = tc->s_end - tc->s_beg;
	if ((size_t)n > dst[0].iov_len)
		n = (ssize_t)dst[0].iov_len;
	memcpy(dst[0].iov_base, tc->stage + tc->s_beg, (size_t)n);
	if (tc->rs == RX_DATA && tc->rtask) /* payload, not a header */
		idm_prov_stats_copy(tc->st, (uint64_t)n);
	tc->s_beg += (uint32_t)n;
	return (int)n;
}

static int rx_read(struct tcp_conn *tc, uint8_t *dst, uint32_t need,
		   bool direct)
{
	struct iovec v = { .iov_base = dst, .iov_len = need };

	return rx_readv(tc, &v, 1, need, direct);
}

/* Receive up to `want` bytes of the data segment into bytes rboff+rgot...
 * of the scatter-gather buffer rbuf, straight into its segments. */
static int rx_read_sg(struct tcp_conn *tc, uint32_t want)
{
	struct iovec v[RX_IOV];
	size_t covered;
	int nv, n;

	nv = idm_prov_buf_iov(tc->rbuf, tc->rboff + tc->rgot, want, v, RX_IOV,
			      &covered);
	if (nv <= 0) {
		/* the range was checked when it was set: a bug, not input */
		tcp_conn_fail(tc, -EFAULT, "data segment outside its buffer");
		return -1;
	}
	n = rx_readv(tc, v, nv, (uint32_t)covered, true);
	if (n > 0 && tc->dd)
		tc->rcrc = tcp_sg_crc32c(tc->rcrc, tc->rbuf, tc->rboff + tc->rgot,
					 (size_t)n);
	return n;
}

void tcp_rx_deliver(struct tcp_conn *tc, struct idm_task *task)
{
	struct idm_pdu p = {
		.bhs = tc->rhdr,
		.ahs = tc->rl.ahs ? tc->rhdr + IDM_ISCSI_BHS_LEN : NULL,
		.ahs_len = tc->rl.ahs,
		.data = tc->rl.dsl && tc->rdst == DST_RXBUF ? tc->rxbuf : NULL,
		.data_len = tc->rdst == DST_RXBUF ? tc->rl.dsl : 0,
		.task = task,
	};

	idm_prov_control_notify(tc->conn, &p);
}

static int rxbuf_fit(struct tcp_conn *tc, uint32_t len)
{
	uint8_t *nb;

	uint32_t cap = tc->rxcap ? tc->rxcap : TCP_RXBUF_MIN;

	if (len <= tc->rxcap)
		return 0;
	/* doubles, so a connection reallocates a few times in its life at
	 * most, up to the largest data segment it actually received */
	while (cap < len)
		cap = cap > UINT32_MAX / 2 ? len : cap * 2;
	nb = realloc(tc->rxbuf, cap);
	if (!nb) {
		tcp_conn_fail(tc, -ENOMEM,
			      "no memory for a %u-byte data segment", len);
		return -1;
	}
	tc->rxbuf = nb;
	tc->rxcap = cap;
	return 0;
}

static uint32_t rx_limit(const struct tcp_conn *tc)
{
	uint32_t lim = tc->recv_dsl;

	if (!tc->ffp && lim < IDM_ISCSI_LOGIN_MAX_DATA_SEGMENT_LENGTH)
		lim = IDM_ISCSI_LOGIN_MAX_DATA_SEGMENT_LENGTH;
	return lim;
}

/* BHS complete: check what it announces. */
static int on_bhs(struct tcp_conn *tc)
{
	uint8_t op = idm_iscsi_bhs_opcode(tc->rhdr);
	bool tgt = tc->target;
	int r;

	r = idm_prov_opcode_check(tgt ? IDM_ROLE_INITIATOR : IDM_ROLE_TARGET, op,
				  tc->ffp ? IDM_CONN_PHASE_FFP : IDM_CONN_PHASE_LOGIN,
				  IDM_PROV_OP_DATA);
	if (r < 0 && !tc->ffp) {
		tcp_conn_fail(tc, -EPROTO, "unexpected opcode 0x%02x during login",
			      op);
		return -1;
	}
	/* In full feature phase such a PDU is still well framed (the
	 * lengths below are checked all the same): it goes to the caller,
	 * which answers with a Reject (RFC 7143 11.17) and goes on. */
	if (r < 0)
		idm_prov_dbg(tc->ctx, "tcp: opcode 0x%02x is not one the %s sends "
			     "in full feature phase: passed to the caller", op,
			     tgt ? "initiator" : "target");
	if (tcp_pdu_lens(tc->rhdr, tc->hd, tc->dd, rx_limit(tc), &tc->rl) < 0) {
		if (tc->rl.ahs > TCP_MAX_AHS_LEN)
			tcp_conn_fail(tc, -EMSGSIZE,
				      "opcode 0x%02x: TotalAHSLength %u bytes "
				      "exceeds %u",
				      op, tc->rl.ahs, TCP_MAX_AHS_LEN);
		else
			tcp_conn_fail(tc, -EMSGSIZE,
				      "opcode 0x%02x: DataSegmentLength %u "
				      "exceeds the limit %u",
				      op, tc->rl.dsl, rx_limit(tc));
		return -1;
	}
	return 0;
}

/* BHS, AHS and header digest complete: decide where the data goes. */
static int on_header(struct tcp_conn *tc)
{
	uint8_t op = idm_iscsi_bhs_opcode(tc->rhdr);
	uint32_t hl = IDM_ISCSI_BHS_LEN + tc->rl.ahs;

	if (tc->hd) {
		uint32_t want = tcp_crc32c_final(
			tcp_crc32c(TCP_CRC32C_INIT, tc->rhdr, hl));
		if (tcp_crc32c_get(tc->rhdr + hl) != want) {
			tc->st->header_digest_errors++;
			tcp_conn_fail(tc, -EBADMSG,
				      "header digest mismatch (opcode 0x%02x)",
				      op);
			return -1;
		}
	}
	tc->rdst = DST_RXBUF;
	tc->rptr = NULL;
	tc->rbuf = NULL;
	tc->rtask = NULL;
	tc->rr2t = NULL;
	tc->rget = NULL;
	tc->rcrc = TCP_CRC32C_INIT;
	if (tc->role->header(tc, op) < 0)
		return -1;
	if (tc->rdst != DST_RXBUF)
		return 0;
	if (rxbuf_fit(tc, tc->rl.dsl) < 0)
		return -1;
	tc->rptr = tc->rxbuf;
	return 0;
}

void tcp_rx_forget_task(struct tcp_conn *tc, struct idm_task *t)
{
	if (tc->rtask != t)
		return;
	/* the rest of the segment must not reach the caller's buffer any
	 * more; the stream stays in sync by reading it into a sink */
	tc->rtask = NULL;
	tc->rr2t = NULL;
	tc->rget = NULL;
	tc->rdst = DST_DISCARD;
}

/* The whole PDU arrived and checked: act on it. */
static int on_pdu(struct tcp_conn *tc)
{
	uint8_t op = idm_iscsi_bhs_opcode(tc->rhdr);
	struct idm_task *task = NULL;
	enum tcp_rx_verdict verdict;

	if (tc->rdst == DST_REPORT) {
		/* a Data-Out that matches no task or R2T: header only */
		tcp_rx_deliver(tc, NULL);
		return 0;
	}
	if (tc->rdst == DST_DISCARD) {
		/* its task was freed: only a status still matters, and it
		 * ends what the target owed for the ITT (also when the task
		 * was freed while this PDU was being read) */
		if (op == IDM_ISCSI_OP_DATA_IN &&
		    (tc->rhdr[1] & IDM_ISCSI_DATAIN_STATUS)) {
			tcp_late_forget(tc, idm_iscsi_bhs_itt(tc->rhdr));
			tcp_rx_deliver(tc, NULL);
		}
		return 0;
	}

	verdict = tc->role->pdu(tc, op, &task);
	if (verdict == TCP_RX_FAILED)
		return -1;
	if (verdict == TCP_RX_DONE)
		return 0;
	tcp_rx_deliver(tc, task);
	if (verdict == TCP_RX_DELIVER_NOP)
		tcp_conn_trim(tc);
	/* the PDUs after a final successful Login Response use the
	 * negotiated digests (the caller noticed them by now) */
	if (verdict == TCP_RX_DELIVER_LOGIN && !tc->closed && !tc->ffp &&
	    tcp_pdu_login_final_ok(tc->rhdr))
		tcp_enter_ffp(tc);
	return 0;
}

void tcp_rx_defer_fn(struct idm_prov_defer *d)
{
	tcp_rx_run(IDM_PROV_CONTAINER_OF(d, struct tcp_conn, rx_defer));
}

/* Up to `want` bytes of the data segment into its destination (a caller
 * buffer, maybe across segments, the stage, or rxbuf), the data digest
 * kept up to date: >0 bytes got, 0 would block, <0 failed. */
static int rx_data_read(struct tcp_conn *tc, uint32_t want)
{
	uint8_t *p;
	int n;

	if (tc->rdst == DST_PLACE && !tc->rptr)
		return rx_read_sg(tc, want);
	if (tc->rdst == DST_DISCARD || tc->rdst == DST_REPORT) {
		/* rxbuf is free: this PDU does not deliver its data */
		if (rxbuf_fit(tc, TCP_RXBUF_MIN) < 0)
			return -1;
		p = tc->rxbuf;
		if (want > tc->rxcap)
			want = tc->rxcap;
	} else {
		p = tc->rptr + tc->rgot;
	}
	n = rx_read(tc, p, want, tc->rdst == DST_PLACE || tc->rdst == DST_STAGE);
	if (n > 0 && tc->dd)
		tc->rcrc = tcp_crc32c(tc->rcrc, p, (size_t)n);
	return n;
}

/*
 * Answers before the next read (epoll engine): the replies to what the
 * stage held go out before the socket is read again, not at the end of
 * the pass. A peer with a queue of commands waits on those replies to
 * send more; answered only at the end, a pass that read a stage of
 * 4 KiB writes left both sides idle in turn (4 KiB QD32 writes at 0.8x
 * the IOPS of reads, the target idle a fifth of the time). It costs no
 * extra call: the send at the end of the pass has less left to do.
 * Only while the socket holds more (the last read filled what it was
 * given): after a short read the loop ends here, and the answers go at
 * the end of the pass with the other connections', as before.
 * The io_uring engine does the same its own way: its next read goes to
 * the ring with the answers' write (tcp_engine_uring.c, uring_readv).
 */
static bool rx_answers_wait(const struct tcp_conn *tc)
{
	return !tc->eng && !tc->rx_dry && !tc->tx_blocked &&
	       tcp_tx_pending(tc);
}

/* A step of the receive machine (tcp_rx_run): RXS_NEXT, the state's
 * bytes are in and acted on, on to the next state (tc->rs); RXS_LOOP,
 * back to the top of the loop (more bytes wanted, or a PDU done);
 * RXS_STOP, out of the loop (no bytes now, or the connection failed). */
enum rx_step { RXS_NEXT, RXS_LOOP, RXS_STOP };

/* Bytes up to `want` of the header or trailer at buf, read on from
 * tc->rgot: RXS_NEXT when all are in. */
static enum rx_step rx_fixed(struct tcp_conn *tc, uint8_t *buf, uint32_t want)
{
	int n;

	if (tc->rgot >= want)
		return RXS_NEXT;
	n = rx_read(tc, buf + tc->rgot, want - tc->rgot, false);
	if (n <= 0)
		return RXS_STOP;
	tc->rgot += (uint32_t)n;
	return tc->rgot < want ? RXS_LOOP : RXS_NEXT;
}

static enum rx_step rx_step_bhs(struct tcp_conn *tc)
{
	int n = rx_read(tc, tc->rhdr + tc->rgot,
			IDM_ISCSI_BHS_LEN - tc->rgot, false);

	if (n <= 0)
		return RXS_STOP;
	tc->rgot += (uint32_t)n;
	if (tc->rgot < IDM_ISCSI_BHS_LEN)
		return RXS_LOOP;
	if (on_bhs(tc) < 0)
		return RXS_STOP;
	tc->rs = RX_AHS;
	return RXS_NEXT;
}

static enum rx_step rx_step_ahs(struct tcp_conn *tc)
{
	enum rx_step r = rx_fixed(tc, tc->rhdr, tc->rl.hdr);

	if (r != RXS_NEXT)
		return r;
	if (on_header(tc) < 0 || tc->closed)
		return RXS_STOP;
	tc->rgot = 0;
	tc->rs = RX_DATA;
	if (tc->rdst == DST_EARLY) {
		/* control_notify now: a Get_Data from it says where the
		 * data segment goes */
		tc->role->early(tc);
		return tc->closed ? RXS_STOP : RXS_LOOP; /* destination set */
	}
	return RXS_NEXT;
}

static enum rx_step rx_step_data(struct tcp_conn *tc)
{
	if (tc->rgot < tc->rl.dsl) {
		int n = rx_data_read(tc, tc->rl.dsl - tc->rgot);

		if (n <= 0)
			return RXS_STOP;
		tc->rgot += (uint32_t)n;
		if (tc->rgot < tc->rl.dsl)
			return RXS_LOOP;
	}
	tc->rgot = 0;
	tc->rs = RX_TRAILER;
	return RXS_NEXT;
}

/* The data digest in the trailer (after the pad), if there is one:
 * false, and the connection failed, on a mismatch. */
static bool rx_digest_ok(struct tcp_conn *tc)
{
	uint8_t crcb[4];

	if (!tc->dd || !tc->rl.dsl)
		return true;
	tc->rcrc = tcp_crc32c(tc->rcrc, tc->rtrl, tc->rl.pad);
	memcpy(crcb, tc->rtrl + tc->rl.pad, 4);
	if (tcp_crc32c_get(crcb) == tcp_crc32c_final(tc->rcrc))
		return true;
	tc->st->data_digest_errors++;
	tcp_conn_fail(tc, -EBADMSG, "data digest mismatch (opcode 0x%02x)",
		      idm_iscsi_bhs_opcode(tc->rhdr));
	return false;
}

/* The trailer, then the whole PDU acted on; budget and bytes count what
 * this wakeup handled: past either, the loop ends and comes back by
 * defer to let other connections run. */
static enum rx_step rx_step_trailer(struct tcp_conn *tc, unsigned *budget,
				    uint64_t *bytes)
{
	enum rx_step r = rx_fixed(tc, tc->rtrl, tc->rl.trailer);

	if (r != RXS_NEXT)
		return r;
	if (!rx_digest_ok(tc))
		return RXS_STOP;
	tc->rs = RX_BHS;
	tc->rgot = 0;
	idm_prov_stats_pdu(tc->st, 0, tc->rhdr, tc->rl.total);
	if (on_pdu(tc) < 0 || tc->closed)
		return RXS_STOP;
	tc->rtask = NULL;
	tc->rr2t = NULL;
	tc->rget = NULL;
	*bytes += tc->rl.total;
	if (--*budget == 0 || *bytes >= TCP_IO_BYTES) {
		/* staged bytes are invisible to epoll: come back by defer */
		idm_prov_defer(tc->ctx, &tc->rx_defer, tcp_rx_defer_fn);
		return RXS_STOP;
	}
	return RXS_LOOP;
}

void tcp_rx_run(struct tcp_conn *tc)
{
	unsigned budget = TCP_RX_BUDGET;
	uint64_t bytes = 0;
	bool answered = false; /* for this refill of the stage */
	enum rx_step r = RXS_LOOP;

	/* rx_stopped: the send queue is over its mark (tcp_tx.c); what is
	 * left in the socket and the stage waits until it drained */
	while (!tc->closed && !tc->rx_stopped) {
		if (tc->s_beg != tc->s_end) {
			answered = false;
		} else if (!answered && rx_answers_wait(tc)) {
			/* at the top of the loop: a completion run by the
			 * send may close the connection or free the task
			 * being read, and the loop looks at both again */
			answered = true;
			tc->eops->flush_tx(tc);
			continue;
		}
		switch (tc->rs) {
		case RX_BHS:
			if ((r = rx_step_bhs(tc)) != RXS_NEXT)
				break;
			/* fall through */
		case RX_AHS:
			if ((r = rx_step_ahs(tc)) != RXS_NEXT)
				break;
			/* fall through */
		case RX_DATA:
			if ((r = rx_step_data(tc)) != RXS_NEXT)
				break;
			/* fall through */
		case RX_TRAILER:
			r = rx_step_trailer(tc, &budget, &bytes);
			break;
		}
		if (r == RXS_STOP)
			return;
	}
}
