/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * State of the TCP provider shared by its files: the per-connection
 * receive machine and send queue, the per-task transfer state that lives
 * in the task's provider area, and the functions the files offer each
 * other.
 */
#ifndef LIBIDM_TCP_H
#define LIBIDM_TCP_H

#include <libidm/provider.h>
#include <libidm/provider_util.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "tcp_engine.h"
#include "tcp_pdu.h"

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
#define TCP_DEAD_ITTS  32 /* freed ITTs remembered per connection */
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

struct tcp_task {
	struct idm_task *task;
	unsigned ntxd; /* txds referencing the task */
	/* initiator */
	bool cmd_sent;
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

extern const struct tcp_role tcp_target_role;    /* tcp_target.c */
extern const struct tcp_role tcp_initiator_role; /* tcp_initiator.c */

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
	bool closed; /* socket gone: terminated or failed */
	bool ffp;    /* digests/limits of full feature phase on */
	bool ffp_rx; /* bytes arrived in full feature phase: use a stage */
	bool hd, dd; /* header / data digest in use */
	/* MaxRecvDataSegmentLength each way, copied from params so that no
	 * PDU asks libidm for it (tcp_conn_note_limits): the most this side
	 * may send in one data segment, and the most it accepts */
	uint32_t send_dsl, recv_dsl;
	uint32_t next_ttt;
	/* ITTs of tasks the caller freed lately: their late Data-In /
	 * Data-Out / R2T (e.g. after an ABORT TASK) are dropped, not fatal */
	uint32_t dead_itt[TCP_DEAD_ITTS];
	unsigned dead_pos;
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

/* tcp_zc.c: SO_ZEROCOPY on a target's socket when IDM_TCP_ZEROCOPY asks
 * (tc->zc_min set only if the kernel took it) */
void tcp_zc_bind(struct tcp_conn *tc, struct tcp_knobs *k);

/* The data segment limits of the keys in force, read once here rather
 * than per PDU. Called at bind (the defaults, 8192 both ways) and again
 * whenever keys are noticed (tcp_notice_key_values, which an adopted
 * connection gets too): the only times libidm changes them. The keys
 * never go below 512 (RFC 7143 13.12), so the limits are never 0. */
static inline void tcp_conn_note_limits(struct tcp_conn *tc)
{
	const struct idm_conn_params *p = tc->params;

	tc->send_dsl = tc->target ? p->initiator_recv_dsl : p->target_recv_dsl;
	tc->recv_dsl = tc->target ? p->target_recv_dsl : p->initiator_recv_dsl;
}

/* tc is the transport of conn from now on. */
static inline void tcp_conn_bind(struct tcp_conn *tc, struct idm_conn *conn)
{
	struct tcp_knobs *k = (struct tcp_knobs *)idm_prov_priv(
		idm_prov_conn_provider(conn));

	tc->user_ms = k ? k->user_timeout_ms : 0;
	tc->zwnd_ms = k ? k->zero_window_ms : 0;
	tcp_engine_bind(tc, k);
	tc->conn = conn;
	tc->params = idm_prov_conn_params(conn);
	tc->st = idm_prov_conn_stats(conn);
	tc->limits = idm_prov_conn_send_limits(conn);
	tc->target = idm_conn_role(conn) == IDM_ROLE_TARGET;
	tc->role = tc->target ? &tcp_target_role : &tcp_initiator_role;
	tcp_conn_note_limits(tc);
	tcp_zc_bind(tc, k);
}

/* tcp_conn.c */
int tcp_init(struct idm_prov *prov);
void tcp_fini(struct idm_prov *prov);
struct tcp_conn *tcp_conn_new(struct idm_ctx *ctx, int fd);
int tcp_conn_start(struct tcp_conn *tc);
void tcp_conn_fail(struct tcp_conn *tc, int err, const char *fmt, ...)
	IDM_PROV_PRINTF(3, 4);
void tcp_conn_close(struct tcp_conn *tc);
void tcp_conn_destroy(struct tcp_conn *tc);
/* TCP_NODELAY and the dead-peer options on a connection's socket. */
void tcp_tune_socket(int fd, const struct tcp_knobs *k);
int tcp_listen(struct idm_prov_listener *l, const struct sockaddr *sa,
	       socklen_t salen, int backlog);
int tcp_listener_start(struct idm_prov_listener *l, int fd);
void tcp_unlisten(struct idm_prov_listener *l);
int tcp_listener_port(struct idm_prov_listener *l);
int tcp_connect(struct idm_conn *conn, const struct sockaddr *sa,
		socklen_t salen, int timeout_ms);
void tcp_set_events(struct tcp_conn *tc, uint32_t events);
/* Poll for what the state asks: input unless rx_stopped, output while
 * tx_blocked. */
void tcp_watch_update(struct tcp_conn *tc);
uint32_t tcp_new_ttt(struct tcp_conn *tc);
void tcp_enter_ffp(struct tcp_conn *tc);
/* After a NOP (outside the rx buffer's use): give back idle buffers. */
void tcp_conn_trim(struct tcp_conn *tc);
/* Remember / look up an ITT the caller freed: its late PDUs are dropped. */
void tcp_dead_itt_add(struct tcp_conn *tc, uint32_t itt);
bool tcp_dead_itt(const struct tcp_conn *tc, uint32_t itt);

static inline struct tcp_txd *tcp_txd_of(struct idm_sq_link *l)
{
	return l ? IDM_PROV_CONTAINER_OF(l, struct tcp_txd, link) : NULL;
}

/* PDUs wait to be written: queued, or in the send ring and not all sent
 * (a write is due; answers go before the next read, tcp_rx.c) */
static inline bool tcp_tx_pending(const struct tcp_conn *tc)
{
	return tc->r_count || !idm_sq_empty(&tc->gen);
}

/* What an ETIMEDOUT from the socket means: the kernel gave up on an idle
 * connection's keepalive probes (tcp_live.c watches a busy one), or, with
 * IDM_TCP_USER_TIMEOUT_MS=0, on its retransmissions. */
#define TCP_TIMEDOUT_HINT \
	" (dead peer: keepalive probes or retransmissions unanswered)"

/* tcp_live.c: the dead-peer / stopped-reader watch of a busy connection */
/* Data went into the socket: watch it until the peer acknowledged all. */
void tcp_live_start(struct tcp_conn *tc);
static inline void tcp_live_sent(struct tcp_conn *tc)
{
	if (!tc->live_k && !tc->live_off)
		tcp_live_start(tc);
}
void tcp_live_stop(struct tcp_conn *tc);
/* ops->conn_move: from the old context's timer to the new one's (after
 * tc->ctx = dst) */
void tcp_live_move(struct tcp_conn *tc);
void tcp_live_init(struct tcp_knobs *k, struct idm_ctx *ctx);
void tcp_live_fini(struct tcp_knobs *k);

/* tcp_adopt.c: sockets the caller set up (idm_conn_adopt_fd(),
 * idm_portal_create_fd()) */
int tcp_adopt(struct idm_conn *conn, int fd);
int tcp_listen_fd(struct idm_prov_listener *l, int fd);

/* tcp_move.c: ops->conn_move */
int tcp_conn_move(struct idm_conn *conn, struct idm_ctx *src);

/* tcp_tx.c */
struct tcp_txd *tcp_txd_get(struct tcp_conn *tc);
void tcp_txd_put(struct tcp_conn *tc, struct tcp_txd *d);
void tcp_tx_queue(struct tcp_conn *tc, struct tcp_txd *d);
int tcp_tx_ctrl(struct tcp_conn *tc, const uint8_t *bhs, const void *ahs,
		size_t ahs_len, const void *data, size_t data_len,
		struct idm_task *task, const uint8_t *ext_data,
		uint32_t ext_len);
/* The same with the external data at sg_off of a scatter-gather buffer
 * (a SCSI Command's immediate data spanning segments). */
int tcp_tx_ctrl_sg(struct tcp_conn *tc, const uint8_t *bhs, const void *ahs,
		   size_t ahs_len, struct idm_task *task, const struct idm_buf *sg,
		   size_t sg_off, uint32_t len);
void tcp_tx_kick(struct tcp_conn *tc);
/* One write in two halves (the epoll engine's flush calls both in turn,
 * the io_uring engine with its submission between): the iovecs of what
 * is ready (count; 0: nothing to write; <0: the connection failed), then
 * what the write did (n bytes, or -1 with err). Returns true when more
 * may be written now. short_write: fewer bytes went than were given. */
int tcp_tx_prepare(struct tcp_conn *tc, struct iovec *iov);
bool tcp_tx_sent(struct tcp_conn *tc, ssize_t n, int err, bool short_write);
/* tcp_tx_sent of n >= 0 bytes in its two steps: the bytes counted into
 * the ring (no callback runs: the io_uring engine does it as the write
 * completes, so that a task cancelled before step two sees what went
 * out), then the PDUs that left retired, completions and all. */
void tcp_tx_account(struct tcp_conn *tc, size_t n);
bool tcp_tx_retire(struct tcp_conn *tc, bool short_write);
void tcp_tx_cancel_task(struct tcp_conn *tc, struct idm_task *t);
void tcp_tx_drop_all(struct tcp_conn *tc);
/* ops->conn_stats: the send queue's depth, counted when asked */
void tcp_tx_stats(struct idm_conn *conn, struct idm_prov_stats *st);
void tcp_tx_free_pool(struct tcp_conn *tc);
/* Send_Control from the caller: -EAGAIN when the send queue is full. */
int tcp_tx_admit(struct tcp_conn *tc, const uint8_t *bhs, size_t ahs_len,
		 size_t data_len);

/* tcp_rx.c */
void tcp_rx_run(struct tcp_conn *tc);
/* The task is going away: stop placing the PDU being received for it. */
void tcp_rx_forget_task(struct tcp_conn *tc, struct idm_task *t);
void tcp_rx_deliver(struct tcp_conn *tc, struct idm_task *task);
void tcp_rx_defer_fn(struct idm_prov_defer *d);

/* The size of the stage (or the io_uring engine's read buffer) after a
 * read into one of `cap` bytes (0: none yet) that `filled` it. */
static inline uint32_t tcp_stage_cap(uint32_t cap, bool filled)
{
	if (cap < TCP_STAGE)
		return TCP_STAGE;
	return filled && cap < TCP_STAGE_MAX ? cap * 2 : cap;
}

/* Payloads up to this are copied out of a read buffer of `cap` bytes,
 * longer ones read in place (see TCP_STAGE). */
static inline uint32_t tcp_rx_copy_max(uint32_t cap)
{
	return cap / 4 > TCP_COPY_MIN ? cap / 4 : TCP_COPY_MIN;
}

/* [a0,a1) and [b0,b1) overlap in [*lo, *hi)? */
static inline bool tcp_overlap(uint32_t a0, uint32_t a1, uint32_t b0,
			       uint32_t b1, uint32_t *lo, uint32_t *hi)
{
	*lo = a0 > b0 ? a0 : b0;
	*hi = a1 < b1 ? a1 : b1;
	return *lo < *hi;
}

/* The data segment being received goes straight into byte boff of buf;
 * addr: their address when it lies in one segment, else NULL. */
static inline void tcp_rx_place(struct tcp_conn *tc, const struct idm_buf *buf,
				size_t boff, uint8_t *addr)
{
	tc->rdst = DST_PLACE;
	tc->rptr = addr;
	tc->rbuf = addr ? NULL : buf;
	tc->rboff = boff;
}

/* ... into Get_Data range x, from byte `off` of the write data on. */
static inline void tcp_rx_place_get(struct tcp_conn *tc, const struct idm_prov_xfer *x,
				    uint32_t off)
{
	size_t d = off - x->offset;

	tcp_rx_place(tc, x->buf, x->buf_off + d, x->addr ? x->addr + d : NULL);
}

/* tcp_tx.c: d's Data-In left (and, zero-copy, the kernel let go of its
 * pages): report it to the core. false: the connection closed under the
 * callback. */
bool tcp_txd_datain_complete(struct tcp_conn *tc, struct tcp_txd *d);

/* tcp_zc.c: zero-copy Data-In */
/* e, a Data-In PDU just prepared: move its header and trailer to a slot
 * and mark it zero-copy; false (sent by copy) when no slot is free. */
bool tcp_zc_pin(struct tcp_conn *tc, struct tcp_txpdu *e);
/* e (with a slot) left the ring: its slot waits for the last call. */
void tcp_zc_retire(struct tcp_conn *tc, struct tcp_txpdu *e);
/* d's last PDU left: true if its completion must wait for the kernel
 * (d is then on tc->zc_wait, holding its task). */
bool tcp_zc_hold(struct tcp_conn *tc, struct tcp_txd *d);
/* One sendmsg of the prepared write, MSG_ZEROCOPY if tc->tx_zc. */
ssize_t tcp_zc_sendmsg(struct tcp_conn *tc, const struct msghdr *mh);
/* io_uring engine: the extra flags of the sendmsg being submitted
 * (MSG_ZEROCOPY or 0), then its result: true if it must be redone by
 * copy (ENOBUFS), the engine retrying it as after EINTR. */
int tcp_zc_uring_flags(struct tcp_conn *tc);
bool tcp_zc_uring_result(struct tcp_conn *tc, int res);
/* Read the error queue (EPOLLERR): >0 if notifications were there,
 * 0 if the queue was empty (EPOLLERR means a socket error), <0 error. */
int tcp_zc_reap(struct tcp_conn *tc);
/* Held completions of a task being freed / of a closing connection. */
void tcp_zc_cancel_task(struct tcp_conn *tc, struct idm_task *t);
void tcp_zc_drop(struct tcp_conn *tc);
/* Before the socket closes: reset it if zero-copy calls are not done. */
void tcp_zc_before_close(struct tcp_conn *tc);

/* tcp_sg.c: payload of a scatter-gather buffer range, segment by segment */
uint32_t tcp_sg_crc32c(uint32_t crc, const struct idm_buf *b, size_t off, size_t len);
/* Data-In source: bytes [buf_off, +length) of buf, by address when they
 * lie in one segment */
void tcp_txd_set_src(struct tcp_txd *d, const struct idm_buf *buf, size_t buf_off,
		     uint32_t length);

/* tcp_r2t.c */
void tcp_get_cancel_all(struct tcp_conn *tc, struct idm_task *t);
bool tcp_get_complete_ready(struct tcp_conn *tc, struct idm_task *t);
int tcp_issue_r2ts(struct tcp_conn *tc, struct idm_task *t);
int tcp_get_data(struct idm_task *task, const uint8_t *tmpl,
		 struct idm_buf *buf, size_t buf_off, uint32_t offset,
		 uint32_t length, uint32_t flags);

/* tcp_datain.c */
int tcp_put_data(struct idm_task *task, const uint8_t *tmpl,
		 struct idm_buf *buf, size_t buf_off, uint32_t offset,
		 uint32_t length, uint32_t flags);
void tcp_datain_done(struct tcp_conn *tc, const struct tcp_txd *d,
		     struct idm_task *t);
/* a SNACK Request at the target: a DataACK is acted on here, any other
 * goes to the caller */
enum tcp_rx_verdict tcp_tgt_snack(struct tcp_conn *tc);

/* tcp_target.c: tcp_target_role */

/* tcp_initiator.c: tcp_initiator_role, and */
int tcp_ini_send_cmd(struct tcp_conn *tc, const uint8_t *bhs, const void *ahs,
		     size_t ahs_len, struct idm_task *task);

#endif
