/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The types the TCP provider's files share: the per-connection receive
 * machine and send queue, the per-task transfer state that lives in the
 * task's provider area, the context's knobs. What each file offers the
 * others is in its own header (tcp_conn.h, tcp_rx.h, tcp_tx.h, ...), and
 * a file names functions of, and includes the headers of, only the files
 * below it, so calls flow one way, top to bottom:
 *
 *   tcp_provider.c      ops table, entry point, thin ops
 *   tcp_adopt.c         sockets the caller set up
 *   tcp_move.c          a connection handed to another context
 *   tcp_conn.c          sockets, a connection's life, a failure's teardown
 *   tcp_engine.c        the engine of a context (IDM_TCP_ENGINE)
 *   tcp_engine_uring.c  io_uring: a pass's reads and writes in one call
 *   tcp_engine_epoll.c  epoll: readv and sendmsg when the socket is ready
 *   tcp_target.c        target receive: commands, Data-Out
 *   tcp_initiator.c     initiator: unsolicited data, R2Ts, Data-In
 *   tcp_r2t.c, tcp_datain.c   target Get_Data (R2Ts), Put_Data (Data-In)
 *   tcp_rx.c            the receive machine
 *   tcp_late.c          initiator: ITTs released before their status
 *   tcp_tx.c            the send queue and its ring of prepared PDUs
 *   tcp_live.c          dead peers and stopped readers
 *   tcp_zc.c            zero-copy Data-In
 *   tcp_txd.c           the send queue's descriptors and bound
 *   tcp_sg.c            scatter-gather buffers
 *   tcp_state.c         what every layer changes; a failure raised
 *   tcp_ubuf.c          the read buffer of the io_uring engine
 *   crc32c.c            CRC32C, the implementation chosen
 *   crc32c_sw.c, crc32c_x86.c, crc32c_arm64.c   its implementations
 *   tcp_pdu.c, tcp_segment.c   framing, PDU and R2T arithmetic
 *
 * Three things go upward, none by name: the engine through its table
 * (tc->eops, chosen by tcp_engine.c), the role through struct tcp_role
 * (tc->role: tcp_rx.c hands each PDU to tcp_target.c or tcp_initiator.c),
 * and a failure or a wakeup as a flag and a deferred item whose function
 * tcp_conn.c set (tc->fail_defer, tc->rx_defer). README.md, "Calls flow
 * one way"; tests/tcp/check_calls.py checks both the names and the
 * includes against this map.
 */
#ifndef LIBIDM_TCP_H
#define LIBIDM_TCP_H

#include <libidm/provider.h>
#include <libidm/provider_util.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "tcp_pdu.h"

struct tcp_conn;
struct tcp_knobs;
struct tcp_uring;

/* An I/O engine (tcp_engine.h: the engines, and their choice per
 * context): the rest of the provider calls one only through this table,
 * the connection's copy of its context's (tc->eops). */
struct tcp_engine_ops {
	const char *name;
	/* The context's engine state into k->eng: 0, or -errno with why
	 * it cannot be had (tcp_engine_init falls back to epoll). */
	int (*open)(struct tcp_knobs *k, struct idm_ctx *ctx, const char **why);
	void (*close)(struct tcp_knobs *k);
	/* The send queue has something to write (tcp_tx_kick, not closed):
	 * written from progress context, never inside the caller's call. */
	void (*kick_tx)(struct tcp_conn *tc);
	/* Write what the send queue holds (the socket is writable, or the
	 * receive machine wants its answers out before the next read). */
	void (*flush_tx)(struct tcp_conn *tc);
	/* The receive machine's read: like readv() on the socket (bytes, 0
	 * at end of stream, -1 with errno, EAGAIN when nothing is there
	 * yet). With io_uring, EAGAIN queues a read for the end of the
	 * pass; its completion runs the receive machine again. */
	ssize_t (*readv)(struct tcp_conn *tc, const struct iovec *iov, int cnt);
	/* The send ring changed under an unsubmitted write (a task's PDUs
	 * cancelled, the queue dropped): prepare the write again. */
	void (*tx_changed)(struct tcp_conn *tc);
	/* The connection closes: nothing of it is submitted after this. */
	void (*forget)(struct tcp_conn *tc);
	/* A move to another context (tcp_engine_move): detach by the old
	 * context's engine (off its lists; wants and results not acted on
	 * yet stay in the connection), attach by the new one's, after
	 * tc->ctx, tc->eops and tc->eng are the new context's. */
	void (*detach)(struct tcp_conn *tc);
	void (*attach)(struct tcp_conn *tc);
};

/* Send ring: PDUs prepared for one sendmsg. It starts at TCP_RING_MIN
 * entries (login sends one PDU at a time) and doubles, up to TCP_RING,
 * only when more PDUs are ready than it holds: an idle connection keeps a
 * few hundred bytes, a busy one grows once and keeps what it grew to. */
#define TCP_RING     64
#define TCP_RING_MIN 4
/* Receive staging (full feature phase only; login reads straight into
 * its destination): headers and small segments come from recv()s into
 * the stage; a direct read of a large segment also takes up to
 * TCP_STAGE_TAIL bytes of what follows (normally the next header).
 * The stage starts at TCP_STAGE bytes and doubles, up to TCP_STAGE_MAX,
 * each time a recv() fills it (the socket held more: the connection
 * streams); an idle connection gives it back (tcp_conn_trim). A payload
 * of up to a quarter of the stage (tcp_rx_copy_max) is copied out of
 * it, a larger one read in place: one recv() then brings a streaming
 * connection's small writes whole, header and immediate data of several
 * commands, where reading each 4 KiB in place cost a readv() apiece - a
 * system call costs more than copying 16 KiB the cache already holds. */
#define TCP_STAGE      4096
#define TCP_STAGE_MAX  65536
#define TCP_STAGE_TAIL 256
#define TCP_COPY_MIN   1024 /* payload up to this is always copied */

/* The size of the stage (or the io_uring engine's read buffer) after a
 * read into one of `cap` bytes (0: none yet) that `filled` it. */
static inline uint32_t tcp_stage_cap(uint32_t cap, bool filled)
{
	if (cap < TCP_STAGE)
		return TCP_STAGE;
	return filled && cap < TCP_STAGE_MAX ? cap * 2 : cap;
}
/* A payload of at least TCP_LOWAT_MIN bytes still to come for its place
 * makes the socket ready only once all of it (up to TCP_LOWAT_MAX) is in
 * (SO_RCVLOWAT): one readv() per large PDU, not one per arrival. */
#define TCP_LOWAT_MIN  (64u << 10)
#define TCP_LOWAT_MAX  (1u << 20)
#define TCP_MAX_R2T    16	  /* outstanding R2Ts kept per task (cap) */
#define TCP_MAX_GETS   4	  /* Get_Data ranges active per task */
#define TCP_RX_BUDGET  256	  /* PDUs handled per wakeup before yielding */
#define TCP_IO_BYTES   (4u << 20) /* bytes moved per wakeup and direction */
#define TCP_TXD_CHUNK  4 /* login needs one at a time; busy conns grow */
/* iovecs of one write: room for every ring entry's 4, and for the
 * segments of scatter-gather payloads (a write stops at this many and
 * resumes where it stopped); below Linux's IOV_MAX of 1024 */
#define TCP_TX_IOV     512
/* io_uring engine: a connection's read buffer is the stage's
 * counterpart, sized and grown as it is (headers and small segments; a
 * large payload is read in place) */
/* The control rx buffer starts at this size and doubles up to the data
 * segment limit as larger PDUs arrive: login PDUs are mostly a few
 * hundred bytes, so a connection does not pay 8 KiB for the worst case. */
#define TCP_RXBUF_MIN  512
#define TCP_DEAD_ITTS  32 /* target: freed ITTs remembered per connection */
/* Initiator: ITTs released unanswered, remembered per connection
 * (tcp_late.c): TCP_LATE_PER_CMD per command of the caller's window
 * (TCP_LATE_WINDOW when it set none), within [TCP_LATE_MIN, TCP_LATE_MAX]. */
#define TCP_LATE_PER_CMD 4
#define TCP_LATE_WINDOW  32
#define TCP_LATE_MIN     128
#define TCP_LATE_MAX     4096
/* Zero-copy Data-In (tcp_zc.c): headers and trailers of PDUs sent with
 * MSG_ZEROCOPY, kept until the kernel lets go of them (a power of two;
 * beyond it PDUs go by copy until slots free), out-of-order
 * notification ranges remembered, and notifications read per wakeup */
#define TCP_ZC_SLOTS   512
#define TCP_ZC_OOO     8
#define TCP_ZC_REAP    32

/* ---- send side ---------------------------------------------------- */

enum tcp_txd_kind {
	TXD_CTRL,    /* a PDU the caller gave to Send_Control (copied) */
	TXD_DATAIN,  /* target Put_Data: Data-In PDUs from the caller buffer */
	TXD_DATAOUT, /* initiator: unsolicited or R2T-answering Data-Out */
	TXD_R2T,     /* target: one R2T */
};

/* A queued unit of sending; from a per-connection pool. */
struct tcp_txd {
	struct idm_sq_link link; /* tc->gen (first: the pool's link when free) */
	enum tcp_txd_kind kind;
	struct idm_task *task; /* NULL for task-less control PDUs */
	/* task's provider area, looked up once when d is queued (each txd
	 * with a task is: tcp_tx_queue) and kept for dropping the hold */
	struct tcp_task *tt;
	bool cancelled;	       /* task freed: no notification, skip PDUs */
	bool gen_done;	       /* every PDU is in the ring */
	bool hd, dd;	       /* digests as of the call that queued it */
	unsigned inflight;     /* ring entries not fully written */
	/* TXD_CTRL: BHS+AHS at cbuf, data at `data` (cbuf or, for a SCSI
	 * Command's immediate data, the task's out buffer) */
	uint8_t *cbuf;
	size_t ccap;
	uint32_t hlen;
	const uint8_t *data;
	uint32_t dlen;
	/* data transfers: buffer offsets [start, end), pos = next byte */
	uint8_t tmpl[IDM_ISCSI_BHS_LEN]; /* Data-In / R2T template, Data-Out LUN */
	const uint8_t *base;	     /* address of buffer offset 0 */
	/* base is NULL when the bytes span segments of a scatter-gather
	 * buffer: byte p (pos, or of `data` for TXD_CTRL) is then byte
	 * sg_off + p of sg */
	const struct idm_buf *sg;
	size_t sg_off;
	uint32_t start, end, pos;
	uint32_t wire_off; /* Buffer Offset of base (Data-In) */
	uint32_t mbl;	   /* burst length (0: one sequence) */
	uint32_t datasn;
	uint32_t ttt;
	uint32_t itt;
	bool ack, status; /* Put_Data: A bit / S bit on last */
	uint32_t qbytes;  /* bytes copied into cbuf, counted in tc->q_bytes */
	/* Data-In large enough for IDM_TCP_ZEROCOPY (tcp_zc.c): send its
	 * PDUs with MSG_ZEROCOPY; zc_used once one went so; zc_seq: the
	 * zero-copy send its completion waits for (on tc->zc_wait) */
	bool zc, zc_used;
	uint32_t zc_seq;
};

/* One PDU ready to send: its iovecs and how much of it went out. */
struct tcp_txpdu {
	struct tcp_txd *txd;
	/* an iovec with iov_base NULL stands for iov_len bytes at sg_off of
	 * the scatter-gather buffer sg, expanded into its segments when the
	 * PDU is written (the engine's flush_tx) */
	struct iovec iov[4];
	int iovcnt;
	const struct idm_buf *sg;
	size_t sg_off;
	size_t len, done;
	bool last; /* last PDU of txd */
	bool skip; /* cancelled before any byte went out */
	/* zc: sent with MSG_ZEROCOPY, its header and trailer in slot
	 * zc_slot of tc->zc_slots (-1: none) */
	bool zc;
	int zc_slot;
	uint8_t hdr[IDM_ISCSI_BHS_LEN + IDM_ISCSI_DIGEST_LEN];
	uint8_t hdig[IDM_ISCSI_DIGEST_LEN];
	uint8_t trl[8];
};

/* ---- per-task state (task->priv) ---------------------------------- */

/* One outstanding R2T: wire state only (its TTT, what it asked for and
 * what came in order); the Get_Data range it serves is the core's record. */
struct tcp_r2t {
	uint32_t ttt, off, len, got, exp_datasn;
	const struct idm_prov_xfer *x; /* the Get_Data range it asks for */
};

/* TCP's part of a Get_Data record (idm_prov_xfer_priv()): the core
 * keeps the range and its buffer, this the R2T and receive progress. */
struct tcp_get {
	uint32_t got;  /* bytes of the range placed */
	uint32_t next; /* next offset to ask for by R2T */
	uint32_t sn;   /* last R2TSN used for it (~0: none) */
	uint8_t tmpl[IDM_ISCSI_BHS_LEN];
	struct idm_prov_defer done_defer;
};
_Static_assert(sizeof(struct tcp_get) <= IDM_PROV_XFER_PRIV,
	       "struct tcp_get must fit a transfer record's priv area");

static inline struct tcp_get *tcp_get_of(const struct idm_prov_xfer *x)
{
	return (struct tcp_get *)idm_prov_xfer_priv(x);
}

/* A ring of released ITTs (tcp_late.c); empty slots hold the reserved
 * tag. No memory until the first task is released unanswered. */
struct tcp_late {
	uint32_t *itt;
	uint32_t cap, pos; /* pos: the oldest slot, overwritten next */
};

struct tcp_task {
	struct idm_task *task;
	unsigned ntxd; /* txds referencing the task */
	/* initiator */
	bool cmd_sent;
	bool answered; /* its final status arrived (SCSI Response, Data-In S) */
	uint32_t exp_datasn; /* next Data-In DataSN */
	uint32_t exp_r2tsn;
	uint32_t unsol_end; /* sent unsolicited [0, unsol_end) */
	uint8_t lun[8];
	/* target: write command */
	bool write;
	uint32_t edtl;
	struct idm_prov_unsol unsol; /* immediate + unsolicited Data-Out */
	/* target: Get_Data (the ranges are the core's records) */
	uint32_t r2tsn; /* next R2TSN of the task */
	struct tcp_r2t r2t[TCP_MAX_R2T];
	unsigned nr2t;
	/* target: Put_Data */
	uint32_t datain_sn;
	uint32_t ack_ttt;
	bool ack_wait;
};

static inline struct tcp_task *tcp_task(struct idm_task *t)
{
	return (struct tcp_task *)idm_prov_task_priv(t);
}

/* t's provider area if this provider set it up (tt->task == t), else
 * NULL, as for no task: one lookup serves the check and the use. */
static inline struct tcp_task *tcp_task_live(struct idm_task *t)
{
	struct tcp_task *tt;

	if (!t)
		return NULL;
	tt = tcp_task(t);
	return tt->task == t ? tt : NULL;
}

/* ---- roles ---------------------------------------------------------- */

struct tcp_conn;

/* What the receive path does with a PDU its role has handled. */
enum tcp_rx_verdict {
	TCP_RX_FAILED = -1,   /* the connection failed (tcp_conn_fail) */
	TCP_RX_DONE = 0,      /* handled: nothing for the caller */
	TCP_RX_DELIVER,       /* to the caller (control_notify), with *task */
	TCP_RX_DELIVER_NOP,   /* the same, then trim the idle buffers */
	TCP_RX_DELIVER_LOGIN, /* the same, then full feature phase if it was
				 the final successful Login Response */
};

/* The target's or the initiator's half of the receive path, chosen once
 * per connection (tcp_conn_bind). tcp_rx.c frames the PDUs and calls
 * these; they never call back into tcp_rx.c: a role says what to do with
 * the PDU by its verdict, and tcp_rx.c does it. Calls go one way:
 * tcp_provider.c, tcp_rx.c -> tcp_target.c / tcp_initiator.c -> the
 * transfer files (tcp_r2t.c, tcp_datain.c, tcp_tx.c). */
struct tcp_role {
	/* header (and header digest) in: set where the data segment goes
	 * (tc->rdst and friends; DST_RXBUF when untouched); <0: failed */
	int (*header)(struct tcp_conn *tc, uint8_t op);
	/* DST_EARLY (set by header): notify the PDU before its data segment
	 * is read; what the callback asked for says where the data goes.
	 * NULL for a role that never sets DST_EARLY. */
	void (*early)(struct tcp_conn *tc);
	/* the whole PDU in and checked; *task is NULL on entry */
	enum tcp_rx_verdict (*pdu)(struct tcp_conn *tc, uint8_t op,
				   struct idm_task **task);
	/* ops->task_free, after the receive path forgot the task */
	void (*task_release)(struct tcp_conn *tc, struct idm_task *t);
};

/* tcp_target_role (tcp_target.h), tcp_initiator_role (tcp_initiator.h) */

/* ---- connection ----------------------------------------------------- */

enum tcp_rx_state { RX_BHS, RX_AHS, RX_DATA, RX_TRAILER };

enum tcp_rx_dest {
	DST_RXBUF,   /* control PDU data: conn rx buffer */
	DST_PLACE,   /* straight into a caller buffer */
	DST_STAGE,   /* unsolicited data with no Get_Data yet */
	DST_EARLY,   /* a SCSI Command's immediate data, not read yet: its
		      * control_notify comes first (tcp_role.early) */
	DST_DISCARD, /* its task was freed mid-PDU: read into rxbuf, drop */
	DST_REPORT,  /* matches no task: read into rxbuf and drop the data,
		      * then pass the header up with no task (the caller
		      * Rejects it) */
};

struct tcp_conn {
	struct idm_conn *conn;
	/* of conn, kept at hand for the hot path (tcp_conn_bind) */
	const struct idm_conn_params *params;
	struct idm_prov_stats *st; /* counters, idm_conn_get_stats() */
	bool target; /* role */
	const struct tcp_role *role; /* its half of the receive path */
	struct idm_ctx *ctx;
	int fd;
	struct idm_prov_watch w;
	uint32_t wevents;
	bool tx_blocked; /* the socket is full: EPOLLOUT wanted */
	/* no more I/O: failed (the teardown follows on fail_defer) or
	 * closed; every layer stops at it */
	bool closed;
	bool down; /* torn down: socket closed, tasks released */
	/* a failure raised by any layer (tcp_conn_fail, tcp_state.c): its
	 * errno, and the item on which tcp_conn.c tears the connection down
	 * and reports it (its fn set once, by tcp_conn_new) */
	int fail_err;
	struct idm_prov_defer fail_defer;
	bool ffp;    /* digests/limits of full feature phase on */
	bool ffp_rx; /* bytes arrived in full feature phase: use a stage */
	bool hd, dd; /* header / data digest in use */
	/* MaxRecvDataSegmentLength each way, copied from params so that no
	 * PDU asks libidm for it (tcp_conn_note_limits): the most this side
	 * may send in one data segment, and the most it accepts */
	uint32_t send_dsl, recv_dsl;
	uint32_t next_ttt;
	/* target: ITTs of tasks the caller freed lately: their late
	 * Data-Out (e.g. after an ABORT TASK) is dropped, not reported */
	uint32_t dead_itt[TCP_DEAD_ITTS];
	unsigned dead_pos;
	/* initiator: ITTs released before their answer (tcp_late.c) */
	struct tcp_late late;
	uint32_t exp_statsn; /* initiator: from the caller's last PDU */
	/* connect (initiator) */
	int tfd;
	struct idm_prov_watch tw;
	bool connecting;
	/* receive */
	enum tcp_rx_state rs;
	uint8_t rhdr[IDM_ISCSI_BHS_LEN + TCP_MAX_AHS_LEN + IDM_ISCSI_DIGEST_LEN];
	struct tcp_pdu_lens rl;
	uint32_t rgot; /* bytes of the current state done */
	enum tcp_rx_dest rdst;
	uint8_t *rptr; /* where the data segment goes */
	/* DST_PLACE with rptr NULL: into bytes rboff... of a scatter-gather
	 * buffer, segment by segment (tcp_rx_place) */
	const struct idm_buf *rbuf;
	size_t rboff;
	uint32_t rcrc;
	uint8_t rtrl[8];
	struct idm_task *rtask; /* Data-In / Data-Out: its task */
	struct tcp_r2t *rr2t;	/* Data-Out: its R2T (NULL: unsolicited) */
	const struct idm_prov_xfer *rget; /* Data-Out placed directly: its range */
	uint8_t *rxbuf; /* NULL until a data segment arrives (rxbuf_fit) */
	uint32_t rxcap;
	uint8_t *stage; /* scap bytes; NULL until busy in FFP (rx_stage) */
	uint32_t scap, s_beg, s_end;
	bool s_grow; /* the last recv() filled the stage: double it */
	/* the last read returned less than asked: the socket is empty, so
	 * wait for epoll (level-triggered) instead of a recv that would
	 * only say EAGAIN; cleared by every readiness event */
	bool rx_dry;
	int lowat; /* the socket's SO_RCVLOWAT as we set it (0: the default, 1) */
	struct idm_prov_defer rx_defer;
	/* send */
	/* Backpressure (tcp_tx.c): the bound the caller set, the txds taken
	 * from the pool and the control bytes they copied; rx_stopped while
	 * over the high mark (the socket is not polled for input then) */
	const struct idm_prov_send_limits *limits;
	uint32_t q_entries;
	uint64_t q_bytes;
	bool rx_stopped;
	struct idm_sq gen;	     /* txds still producing PDUs */
	struct idm_pool txd_pool;    /* of struct tcp_txd */
	struct tcp_txpdu *ring; /* r_cap entries; NULL until the first send */
	unsigned r_cap, r_head, r_count;
	uint8_t *bounce;
	size_t bounce_cap;
	struct idm_prov_defer tx_defer;
	/* Liveness (tcp_live.c): the knobs, copied at bind; while the peer
	 * has data to acknowledge, on the list of its context's timer */
	int user_ms, zwnd_ms;
	struct tcp_knobs *live_k; /* the list it is on; NULL: not watched */
	struct tcp_conn *live_prev, *live_next;
	bool live_off; /* never watched (knobs 0, not TCP, the fallback) */
	uint64_t live_acked; /* tcpi_bytes_acked at the last progress */
	int64_t live_since;  /* CLOCK_MONOTONIC ms of the last progress */
	/* The context's engine (tcp_engine.h) and its state: the io_uring
	 * engine's (tcp_engine_uring.c); eng NULL: epoll. The connection is
	 * on at most one of the io_uring engine's lists (u_list): the
	 * queued (wants a read or a write this pass) or the batch being
	 * submitted and then completed. */
	const struct tcp_engine_ops *eops;
	struct tcp_uring *eng;
	struct tcp_conn *u_prev, *u_next;
	uint8_t u_list;
	bool u_want_rx, u_want_tx;
	bool u_tx_ready;	   /* u_iov prepared, not submitted yet */
	bool u_rx_sub, u_tx_sub;   /* submitted: results in u_*_res */
	int u_rx_res, u_tx_res;
	uint8_t *ubuf;		   /* read buffer: bytes [u_beg, u_end) */
	uint32_t ucap, u_beg, u_end;
	/* the last read filled ubuf: more is likely queued, and the buffer
	 * doubles (as the stage does) before the next read */
	bool u_full;
	/* after ubuf's bytes: end of stream (-1) or the read's errno */
	int u_err;
	struct iovec *u_iov; /* TCP_TX_IOV, taken with the first write */
	int u_iovcnt;
	size_t u_txlen;
	struct msghdr u_msg;
	/* Zero-copy Data-In (tcp_zc.c, both engines). The kernel
	 * numbers the MSG_ZEROCOPY sendmsg calls that sent bytes from 0
	 * and reports ranges of those numbers done on the error queue. */
	uint32_t zc_min; /* Put_Data of this many bytes or more; 0: off */
	bool tx_zc;	 /* the write tcp_tx_prepare made is zero-copy */
	bool u_tx_zc;	 /* io_uring: the write submitted is MSG_ZEROCOPY */
	bool zc_copy_next; /* io_uring: ENOBUFS, redo that write by copy */
	uint32_t zc_calls; /* zero-copy calls that sent bytes: next number */
	uint32_t zc_acked; /* every number below this is done */
	struct tcp_zc_range {
		uint32_t lo, hi;
	} zc_ooo[TCP_ZC_OOO]; /* done beyond a gap (out of order) */
	unsigned zc_nooo;
	struct idm_sq zc_wait; /* Data-In txds whose completion waits */
	struct tcp_zc_slot *zc_slots; /* TCP_ZC_SLOTS; NULL until used */
	unsigned zc_head, zc_count;   /* slots in use, oldest first */
	/* for the debug log: calls, notifications, of those "copied" */
	uint64_t zc_sends, zc_notes, zc_copied;
};

/* Header (and digest) and pad/digest trailer of a zero-copy PDU: the
 * kernel sends them from these bytes, maybe more than once
 * (retransmission), until its notification. */
struct tcp_zc_slot {
	uint8_t hdr[IDM_ISCSI_BHS_LEN + IDM_ISCSI_DIGEST_LEN];
	uint8_t trl[8];
	uint32_t seq; /* the last zero-copy call that carried them */
	bool retired; /* their PDU left the ring: seq is set */
};

static inline struct tcp_conn *tcp_conn(struct idm_conn *c)
{
	return (struct tcp_conn *)idm_prov_conn_priv(c);
}

/* The provider's state in a context (prov->priv): the dead-peer knobs,
 * read once by tcp_init(), and the context's liveness timer. */
struct tcp_knobs {
	/* nothing acknowledged for this long, the peer's window open: dead
	 * (tcp_live.c; no longer TCP_USER_TIMEOUT); 0: the kernel's limits */
	int user_timeout_ms;
	/* the peer's window zero and nothing acknowledged for this long:
	 * it stopped reading; 0: never */
	int zero_window_ms;
	int keepidle, keepintvl, keepcnt; /* keepalive; 0: the kernel's */
	/* tcp_live.c: one timerfd (made by tcp_live_init, -1 if it could
	 * not) ticking while `live`, the connections with data
	 * outstanding, is not empty */
	struct idm_ctx *ctx;
	int lfd;
	struct idm_prov_watch lw;
	bool ticking;
	struct tcp_conn *live;
	/* the context's engine (tcp_engine.h) and its state (the io_uring
	 * engine's; NULL under epoll) */
	const struct tcp_engine_ops *eops;
	struct tcp_uring *eng;
	/* IDM_TCP_ZEROCOPY: Data-In of Put_Data this large or larger goes
	 * with MSG_ZEROCOPY (0: never); zc_warned: a failure was logged */
	int zerocopy_min;
	bool zc_warned;
};

static inline struct tcp_txd *tcp_txd_of(struct idm_sq_link *l)
{
	return l ? IDM_PROV_CONTAINER_OF(l, struct tcp_txd, link) : NULL;
}

/* What an ETIMEDOUT from the socket means: the kernel gave up on an idle
 * connection's keepalive probes (tcp_live.c watches a busy one), or, with
 * IDM_TCP_USER_TIMEOUT_MS=0, on its retransmissions. */
#define TCP_TIMEDOUT_HINT \
	" (dead peer: keepalive probes or retransmissions unanswered)"

#endif
