/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Internal state of the iSER provider. One iser_conn per idm_conn: an RC QP
 * made by librdmacm (RDMA_PS_TCP, so the Service ID is the Annex A12 one),
 * a send CQ and a receive CQ with their own completion channels, and the
 * message buffers of both phases carved from registered arenas.
 *
 * Work requests are tracked in per-connection op slots (wr_id = slot index
 * + 1), never by pointers into tasks: a task may be freed and reused while
 * one of its RDMA operations is still on the wire.
 *
 * This header holds the types only. Each file's functions are declared in
 * a header of its own, and a file includes only the headers of the files
 * below it, so calls flow one way, top to bottom:
 *
 *   iser_provider.c   ops table, init/fini, the op entry points
 *   iser_initiator.c  initiator data mover (commands, Data-Out, responses)
 *   iser_stag.c       the initiator's STags: window binds, invalidation
 *   iser_target.c     target data mover (commands, Put_Data, Get_Data)
 *   iser_unsol.c      target: immediate and unsolicited data
 *   iser_dop.c        target: RDMA progress of Put/Get_Data records
 *   iser_control.c    Send_Control of every PDU but a SCSI Command, Hello
 *   iser_cm.c         rdma_cm: listen, accept, connect, CM events
 *   iser_move.c       a connection handed to another context
 *   iser_conn.c       a connection's life: new, fail, teardown, free
 *   iser_qp.c         the QP: setup, drain, destroy
 *   iser_cq.c         completion queues: polling, dispatch by WR kind
 *   iser_keepalive.c  dead peer detection: idle probes, liveness deadline
 *   iser_recv.c       receive path: posting, iSER header checks, hand-up
 *   iser_send.c       message Sends and the backlog when buffers run out
 *   iser_sq.c         the send queue: op slots, posting, reaping
 *   iser_srq.c        the shared receive queue of a context and device
 *   iser_msgpool.c    registered message pools, a connection's through
 *                     its phases
 *   iser_mw.c         a connection's memory windows, recycled
 *   iser_stage.c      initiator: a connection's staging area for ranges
 *                     of scattered buffers (copied, counted)
 *   iser_reg.c        registration lookup: caller buffers' MRs, SGEs
 *   iser_pd.c         devices and their protection domains
 *   iser_fail.c       a layer raises its connection's failure
 *   iser_park.c       cm_ids whose disconnect waits for their port
 *   iser_keys.c       key policy and buffer sizes (verbs-free)
 *   iser_rx_check.c   a received Send's checks: header, lengths, opcode
 *                     (verbs-free)
 *   iser_wire.c       iSER header, Hello, CM private data codec
 *   iser_mrcache.c    registration cache by address range, LRU-bounded
 *                     (verbs-free: the registrar is a function pair)
 *   iser_uffd.c       userfaultfd monitor: unmapped memory leaves the
 *                     caches before its address is reused (verbs-free)
 *
 * Two things go upward, each through a pointer the upper file set, never
 * by name: the role's data mover is reached from below only through
 * struct iser_role (ic->role), and any layer that finds the connection
 * broken raises it with iser_conn_fail() (iser_fail.c), which hands it to
 * the connection's owner (ic->on_fail, iser_conn.c), whose teardown then
 * unwinds every layer.
 */
#ifndef IDM_ISER_H
#define IDM_ISER_H

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <libidm/provider.h>
#include <libidm/provider_util.h>
#include "iser_keys.h"
#include "iser_wire.h"

#define ISER_SQ_DEPTH 512u   /* work requests on the send queue at once */
/* Op slots: WRs on the send queue plus those waiting for room on it
 * (ordered FIFO). Running out is the only -EAGAIN of the data path. */
#define ISER_OPS (4u * ISER_SQ_DEPTH)
/* Selective signalling: the last WR of every posted chain is signalled,
 * and at least every ISER_SIGNAL_EVERY-th inside a long chain, so send
 * queue room comes back steadily. Errors always complete. */
#define ISER_SIGNAL_EVERY 32u
#define ISER_TASK_DOPS 4   /* concurrent Put/Get_Data per task */
/* SGEs one RDMA Write/Read of Put/Get_Data carries at most (fewer when
 * the device allows fewer, see ic->wr_sge): a range of a scatter-gather
 * buffer with more pieces is split into several WRs of one chain. The
 * lists live in ic->sgl, ISER_WR_SGE per op slot, made once on the
 * connection's first scatter-gather range: no per-I/O allocation, and a
 * connection that never moves one keeps its op slots small. */
#define ISER_WR_SGE 16
#define ISER_MAX_DEVS 4
#define ISER_CQ_BATCH 32
/* batches one CQ poll handles before it yields to the context's other
 * event sources (iser_cq.c) */
#define ISER_CQ_BUDGET 4
/* Receiver-not-ready retries: 7 = until the peer posts a receive. RNR
 * proves the peer alive; it is how unsolicited Data-Out beyond the posted
 * receive buffers is paced (iser_keys.c). A peer that never reposts is
 * caught by the liveness deadline (IDM_ISER_LIVENESS_MS). */
#define ISER_RNR_RETRY 7
/* The receive queue is sized when the QP is made, before any key is
 * known: room for the largest full feature phase pool (iser_keys.h) plus
 * the login buffers that may still be posted. */
#define ISER_RQ_DEPTH (ISER_RX_CAP + 8u)

/* ---- devices and memory ---------------------------------------------- */

struct iser_mrc;

/* One per RDMA device, shared by every connection on it: the PD the
 * caller's buffers are registered in. */
struct iser_dev {
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	/* caller memory registered in pd, kept by address range after its
	 * buffers are gone (iser_mrcache.c); NULL: registrations live and
	 * die with their buffer (plain MR STags: an MR's rkey would give
	 * the peer the whole cached range, for as long as it is cached) */
	struct iser_mrc *mrc;
	bool has_mw;     /* type-2 memory windows: remote-invalidatable STags */
	uint32_t max_mw; /* the device's limit, for a bind failure's message */
	/* Memory window binds only with no transport WR ahead of them on
	 * the send queue (soft-RoCE: iser_sq.c, doc/iser.md) */
	bool bind_idle;
	uint32_t max_rd_atom;
	uint32_t max_msg;
	uint32_t max_sge, max_sge_rd; /* SGEs per send WR / per RDMA Read */
	uint32_t max_srq_wr; /* device limit of a shared receive queue */
};

/* What this provider's instances on the contexts of one domain share
 * (idm_prov_dom_priv): the devices and their PDs, so that a buffer
 * registered through one context is valid on the QPs of all. Grown
 * under idm_prov_dom_lock(); an entry never moves, and goes only with
 * the domain (iser_dom_close). */
struct iser_dom {
	struct iser_dev devs[ISER_MAX_DEVS];
	int n_devs;
};

struct iser_prov {
	struct idm_prov *prov;
	/* this context's shared receive queue per device (by its index in
	 * struct iser_dom), while a connection uses it (iser_srq.c) */
	struct iser_srq *srq[ISER_MAX_DEVS];
	int ack_timeout;    /* local ACK timeout exponent (4.096us << n) */
	int retry_count;    /* 0..6: 7 means "forever" on rxe */
	int keepalive_ms;   /* idle probe period, 0 off */
	uint32_t rx_depth;
	bool force_mr;      /* IDM_ISER_STAG=mr: plain MR rkeys, no MWs */
	/* IDM_ISER_MR_CACHE_MB: bytes a device's registration cache may
	 * hold registered (0: no cache) */
	uint64_t mr_cache_bytes;
	/* IDM_ISER_STAGING_MB: bytes of an initiator connection's staging
	 * area (iser_stage.c; 0: scattered ranges refused) */
	uint32_t stage_bytes;
	int liveness_ms;    /* a probe not completed by then fails, 0 off */
	int bind_idle;      /* IDM_ISER_BIND_IDLE: -1 auto (rxe), 0 off, 1 on */
	/* new connections take their receive buffers from the shared
	 * receive queue of their device (IDM_CTX_SHARED_RECV, iser_srq.c) */
	bool shared_recv;
	/* the data movers, set by iser_provider.c (see struct iser_role) */
	const struct iser_role *ini_role, *tgt_role;
	/* cm_ids of failed connections waiting for their port (iser_park.c) */
	struct iser_parked *parked;
	uint32_t n_parked;
	int park_fd;
	struct idm_prov_watch park_w;
};

/* A run of a buffer's segments that follow each other in memory: one MR
 * covers it. A one-segment buffer is one region, as is a scatter-gather
 * buffer whose segments are adjacent (then an initiator can advertise any
 * range of it with one STag). Separate regions get MRs of their own:
 * registering the span between them would pin (or fail on) memory that
 * is not the caller's buffer. */
struct iser_rgn {
	uint8_t *addr;
	size_t off;   /* buffer offset of its first byte */
	size_t len;
};

/* idm_prov_buf_reg(buf, prov): the buffer's regions and their MRs per PD
 * (mr[d * n_rgn + j]: region j in pd[d]), made on first use per device.
 * Through a device's cache, ent[] holds the cache entries the MRs are
 * of (an MR then covers its region and maybe more). */
struct iser_bufreg {
	/* published (release) after its MRs, read without a lock (acquire):
	 * threads of the domain's other contexts may be looking */
	struct ibv_pd *_Atomic pd[ISER_MAX_DEVS];
	struct iser_mrc *mrc[ISER_MAX_DEVS]; /* the cache of pd[d], or NULL */
	struct ibv_mr **mr;
	struct iser_mrc_ent **ent;
	uint32_t n_rgn;
	struct iser_rgn rgn[];
};

/* An initiator connection's staging area (iser_stage.c): one registered
 * allocation cut into at most 64 equal units; a command whose range of a
 * scatter-gather buffer crosses regions holds a run of adjacent units
 * per direction, which one STag names. Made on the connection's first
 * such command, never per I/O. */
#define ISER_STAGE_UNITS 64u
struct iser_stage {
	uint8_t *mem;
	size_t size;      /* n_units * unit */
	struct ibv_mr *mr;
	uint64_t busy;    /* bit u: unit u is held by a command */
	uint32_t unit;    /* bytes per unit */
	uint32_t n_units;
};

/* ---- messages ---------------------------------------------------------- */

struct iser_msg {
	uint8_t *mem;
	uint32_t size;
	uint32_t lkey;
	struct iser_msg *next; /* free list */
	struct iser_pool *pool; /* NULL: a one-off message (own_mr) */
	struct ibv_mr *own_mr;
};

/* A registered arena cut into equal messages. */
struct iser_pool {
	struct iser_msg *msgs;
	uint32_t n, size;
	void *mem;
	struct ibv_mr *mr;
	struct iser_msg *free;
	uint32_t n_free;
	/* the shared receive queue whose buffers these are, or NULL: a
	 * message of such a pool goes back to that queue, not to a
	 * connection (iser_srq.c) */
	struct iser_srq *srq;
};

/* A shared receive queue: buffers of one size (iser_srq_msg_size) in
 * registered chunks, posted once for every attached connection, each
 * receive completing on the CQ of the connection whose QP took it. */
struct iser_srq_chunk {
	struct iser_pool pool;
	struct iser_srq_chunk *next;
};

struct iser_srq {
	struct ibv_srq *srq;
	struct iser_dev *dev;
	struct iser_srq **slot; /* in the context's iser_prov.srq[] */
	struct iser_srq_chunk *chunks;
	uint32_t msg_size;
	uint32_t cap;      /* the most buffers it may have (iser_srq_cap) */
	uint32_t have;     /* buffers made, in every chunk */
	uint32_t posted;   /* buffers on the queue now */
	uint64_t want;     /* what the attached connections would post */
	uint32_t n_conns;  /* connections attached */
	uint32_t lost;     /* taken by a QP torn down before it said so */
	uint32_t dry;      /* times a receive took the last posted buffer */
};

/* ---- work request slots -------------------------------------------------- */

enum iser_op_kind {
	ISER_OP_FREE = 0,
	ISER_OP_SEND,     /* a message Send; msg returns to its pool */
	ISER_OP_WRITE,    /* Put_Data RDMA Write */
	ISER_OP_READ,     /* Get_Data RDMA Read */
	ISER_OP_ACK_READ, /* zero-length Read proving placement (A bit) */
	ISER_OP_BIND,     /* memory window bind */
	ISER_OP_LINV,     /* local invalidate of an STag */
	ISER_OP_PROBE,    /* keepalive zero-length Write */
	ISER_OP_DRAIN,    /* teardown marker: its flush ends the drain */
};

struct iser_dop; /* a Put/Get_Data in progress, inside the task */

/* One work request from the time it is built until its completion was
 * reaped: waiting (ic->sq_wait, not yet posted), then posted (ic->posted,
 * in send queue order, so one signalled completion also retires the
 * unsignalled WRs posted before it). */
struct iser_op {
	enum iser_op_kind kind;
	bool posted;
	struct idm_task *task; /* NULL once the task was freed */
	struct iser_dop *dop;
	struct iser_msg *msg;
	uint32_t len;          /* bytes this WR moves */
	struct ibv_mw *mw;     /* LINV: window to recycle on completion */
	/* LINV of a released task's staged range: its staging units, given
	 * back only once the window is dead (iser_stage.c) */
	uint16_t stage;
	struct ibv_mw *bind_mw; /* BIND: window being bound */
	struct iser_op *next;  /* free list, wait FIFO or posted FIFO */
	struct ibv_send_wr wr;
	/* a Send's message and immediate data, a plain buffer's range;
	 * longer SGE lists are in ic->sgl */
	struct ibv_sge sge[2];
};

/* A Send that found no free message buffer (or, for a SCSI Command, too
 * few op slots): kept, in order, until Send completions give some back.
 * Allocated only on that slow path. */
struct iser_pend {
	struct idm_sq_link link; /* in ic->pend */
	struct idm_task *task; /* SCSI Command (initiator); NULL: control */
	uint32_t len;          /* control: message bytes; command: AHS bytes */
	uint32_t qbytes;       /* bytes it holds, counted in ic->pend_bytes */
	uint32_t inv;          /* control: rkey to invalidate with the Send */
	uint8_t bytes[];       /* control: the message; command: BHS + AHS */
};

/* ---- tasks --------------------------------------------------------------- */

/* iSER's part of a Put/Get_Data record of the core (idm_prov_xfer_priv();
 * the range, its buffer and its task are the record's, iser_dop.c). */
struct iser_dop {
	uint32_t remaining; /* bytes not yet placed/sent */
	uint32_t sn;
	int status;
	bool ack;           /* Put_Data with the A bit */
	bool placed;        /* iser_unsol.c: completed by this Data-Out */
	struct idm_prov_defer done;
};
_Static_assert(sizeof(struct iser_dop) <= IDM_PROV_XFER_PRIV,
	       "struct iser_dop must fit a transfer record's priv area");

struct iser_task {
	/* initiator: STags advertised for this command */
	struct ibv_mw *mw[2];   /* [0] read (Data-In), [1] write */
	uint32_t stag[2];
	bool stag_valid[2];
	uint32_t ops_out;       /* op slots naming this task */
	uint32_t sends_pending; /* command + unsolicited Data-Out Sends */
	uint32_t linv_pending;
	struct iser_msg *rsp;   /* SCSI Response held until both are done */
	/* unsolicited Data-Out still to send when sends ran short */
	uint8_t dout_hdr[16];   /* LUN + ITT of the command */
	uint32_t dout_expstatsn;
	uint32_t dout_next, dout_end, dout_sn;
	struct ibv_mr *dout_mr;
	uint8_t *dout_base;
	bool dout_queued;
	struct idm_sq_link dout_link; /* in ic->dout */
	struct idm_task *dout_task;   /* this task, for the queue's walker */
	struct iser_pend *cmd_pend; /* command still waiting for a buffer */
	/* [STAG_READ], [STAG_WRITE]: bytes of a range that crosses regions
	 * (staged, iser_stage.c; 0: none) and the staging units it holds
	 * (first << 8 | count; 0: none yet) */
	uint32_t stage_len[2];
	uint16_t stage[2];
	/* target: the initiator's buffers, from the command's iSER header */
	bool rsv, wsv;
	uint32_t r_stag, w_stag;
	uint64_t r_va, w_va;
	uint32_t edtl;
	/* immediate and unsolicited data: what is expected, what arrived,
	 * what is staged (the shared datamover layer, iser_unsol.c) */
	struct idm_prov_unsol unsol;
	uint32_t datasn, r2tsn;
};

static inline struct iser_task *iser_task(struct idm_task *t)
{
	return idm_prov_task_priv(t);
}

/* ---- connections ------------------------------------------------------- */

enum iser_state {
	ISER_RESOLVING = 0,
	ISER_ACCEPTING,
	ISER_UP,
	ISER_DOWN, /* failed or terminated; QP drained */
};

struct iser_listener {
	struct iser_prov *ip;
	struct idm_prov_listener *l;
	struct rdma_event_channel *ech;
	struct rdma_cm_id *id;
	struct idm_prov_watch w;
	int port;
};

struct iser_conn {
	struct iser_prov *ip;
	struct idm_ctx *ctx;
	struct idm_conn *conn; /* NULL until the core accepted it (target) */
	const struct idm_conn_params *params; /* conn's, once it is set */
	enum idm_role conn_role; /* conn's, once it is set (iser_conn_bind) */
	/* RecvDataSegmentLength each way, copied from params so that no
	 * PDU asks libidm for it (iser_conn_note_limits): the most this
	 * side may send in one data segment, and the most it accepts */
	uint32_t send_dsl, recv_dsl;
	struct idm_prov_stats *st; /* conn's counters, once it is set */
	const struct iser_role *role; /* the data mover of its role */
	/* The owner's handler of a failure a layer raised (iser_fail.c):
	 * record why, tear down, notify once. Set by iser_conn_new. */
	void (*on_fail)(struct iser_conn *ic, int reason, const char *msg);
	enum iser_state state;
	struct rdma_event_channel *ech;
	struct rdma_cm_id *id;
	struct iser_dev *dev;
	struct ibv_comp_channel *scc, *rcc;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct idm_prov_watch cm_w, scq_w, rcq_w, timer_w;
	/* a CQ poll that used up its budget (iser_cq.c) goes on from here
	 * in the next pass, after the context's other connections; and a
	 * failure that could not tear down at once (fail_later) happens
	 * here: the one item that teardown cancels and conn_move moves */
	struct idm_prov_defer cq_more;
	bool more_send, more_recv;
	/* why the connection fails from cq_more (iser_conn_fail_later);
	 * set when a window could not be revoked (iser_stag.c) */
	const char *fail_later;
	int timer_fd;
	uint32_t scq_unacked, rcq_unacked;
	struct ibv_wc batch[ISER_CQ_BATCH]; /* completions being handled */
	int batch_n, batch_pos;
	bool batch_send;

	/* CM outcome */
	uint8_t req_flags, rep_flags;
	bool send_inv;     /* target sends SCSI Responses with SendInv */
	bool use_mw;       /* initiator STags are memory windows */
	uint32_t ird, ord; /* RDMA Read depth we may issue (ord) */
	/* SGEs per Put_Data Write / Get_Data Read (<= ISER_WR_SGE), and
	 * their lists for ranges of scatter-gather buffers (iser_sq.c) */
	uint32_t wr_sge, rd_sge;
	struct ibv_sge *sgl;
	/* initiator: the staging area of scattered ranges, NULL until the
	 * first one (iser_stage.c) */
	struct iser_stage *stage;

	/* messages */
	struct iser_pool rx_login, tx_login, rx_ffp, tx_ffp;
	bool hello_wait;    /* initiator: Hello sent, HelloReply not yet */
	bool ffp_alloc;     /* rx_ffp/tx_ffp allocated (Allocate_Conn...) */
	bool ffp_rsrc;      /* ... and the receives posted (Enable_Datamover) */
	uint32_t rx_posted; /* receives on the RQ (own RQ only) */
	/* the shared receive queue its QP is attached to, and what the
	 * connection adds to its size (iser_srq.c); NULL: an RQ of its own */
	struct iser_srq *srq;
	uint32_t srq_want;
	struct iser_sizes ffp;

	/* send queue */
	struct iser_op *ops;
	struct iser_op *op_free;
	uint32_t ops_used;     /* slots taken: waiting + posted */
	uint32_t sq_posted;    /* WRs posted and not yet reaped */
	uint32_t since_signal; /* unsignalled WRs since the last signalled */
	uint32_t reads_out;    /* RDMA Reads posted (ORD limit, 8.2) */
	uint32_t sq_remote;    /* posted WRs that go on the wire (not
				* binds, invalidations, the drain marker) */
	uint32_t binds_waiting; /* BIND ops in sq_wait */
	struct iser_op *sq_wait, *sq_wait_tail; /* built, not yet posted */
	struct iser_op *posted, *posted_tail;   /* on the SQ, post order */
	int plugged;           /* > 0: collect WRs, post them as one chain */
	struct idm_sq pend;    /* struct iser_pend: Sends waiting for buffers */
	/* Backpressure (iser_send.c): the bound the caller set on the
	 * backlog, what it holds, and, while it is over the high mark,
	 * the consumed receive buffers not reposted (iser_recv.c) */
	const struct idm_prov_send_limits *limits;
	uint32_t pend_n;
	uint64_t pend_bytes;
	bool rx_stopped;
	struct iser_msg *rx_held;
	uint64_t stat_wrs, stat_signalled;      /* WRs posted / signalled */
	/* target data path, logged at teardown (debug): write commands,
	 * the largest EDTL, Sends of unsolicited data, RDMA Reads */
	uint64_t stat_writes, stat_unsol_sends, stat_reads, stat_read_bytes;
	uint32_t stat_max_edtl;
	struct idm_sq dout;    /* struct iser_task: tasks owing Data-Out */
	struct ibv_mw **mw_free;
	uint32_t n_mw_free, n_mw;

	/* failed while its port was down: no DREQ until it is back */
	bool disc_deferred;

	/* liveness */
	bool activity;
	bool probe_out;

	/* connect timeout (initiator) */
	int timeout_ms;

	/* liveness deadline: ms the outstanding probe has waited so far */
	int probe_wait_ms;
};

static inline struct iser_conn *iser_conn(struct idm_conn *c)
{
	return idm_prov_conn_priv(c);
}

/* The data segment limits of the keys in force, read once here rather
 * than per PDU. Called when the connection gets its parameters (the
 * defaults, 8192 both ways) and again whenever keys are noticed and
 * accepted (iser_notice_keys): the only times libidm changes them. The
 * keys never go below 512 (RFC 7143 13.12), so the limits are never 0. */
static inline void iser_conn_note_limits(struct iser_conn *ic)
{
	const struct idm_conn_params *p = ic->params;
	bool target = ic->conn_role == IDM_ROLE_TARGET;

	ic->send_dsl = target ? p->initiator_recv_dsl : p->target_recv_dsl;
	ic->recv_dsl = target ? p->target_recv_dsl : p->initiator_recv_dsl;
}

/* ic is the transport of c, in role, from now on. What its PDUs read of
 * the connection (role, parameters, limits, counters) is kept at hand
 * rather than asked of libidm each time: the role never changes, the
 * pointers stay valid for the connection's life. */
static inline void iser_conn_bind(struct iser_conn *ic, struct idm_conn *c,
				  enum idm_role role)
{
	ic->conn = c;
	ic->conn_role = role;
	ic->params = idm_prov_conn_params(c);
	ic->st = idm_prov_conn_stats(c);
	ic->limits = idm_prov_conn_send_limits(c);
	iser_conn_note_limits(ic);
}

/* What the data mover of a role (iser_initiator.c, iser_target.c) does
 * for the layers below it: they reach it only through this table, never
 * by name. A member a role has no use for is NULL. */
struct iser_role {
	/* A send-queue WR of this role completed successfully (iser_cq.c);
	 * t is NULL when the task was freed meanwhile. */
	void (*op_done)(struct iser_conn *ic, enum iser_op_kind kind,
			struct idm_task *t, struct iser_dop *dop, uint32_t len);
	/* A well-formed iSCSI PDU arrived (iser_recv.c): true if the role
	 * took it, and with it the message m (it calls iser_rx_done). */
	bool (*recv)(struct iser_conn *ic, struct iser_msg *m,
		     const struct iser_hdr *h, struct idm_pdu *pdu,
		     const struct ibv_wc *wc);
	/* Op slots and send buffers came back (iser_cq.c): resume what
	 * waited for them, before the Send backlog runs. */
	void (*sq_room)(struct iser_conn *ic);
	/* A SCSI Command from the Send backlog: buffers are there now. */
	int (*cmd_post)(struct iser_conn *ic, const uint8_t *bhs,
			const void *ahs, size_t ahs_len, struct idm_task *t);
	/* May the backlog's SCSI Command of t go now, as far as the role's
	 * own resources go (an initiator's staging units, reserved by a
	 * true answer)? NULL: always. */
	bool (*cmd_ready)(struct iser_conn *ic, struct idm_task *t);
	/* Give back what the task holds: it is freed, or the connection
	 * ended (iser_conn.c). */
	void (*task_release)(struct iser_conn *ic, struct idm_task *t);
};

/* The send buffers of the current phase. */
static inline struct iser_pool *iser_tx_pool(struct iser_conn *ic)
{
	return ic->ffp_rsrc ? &ic->tx_ffp : &ic->tx_login;
}

/* The connection's send queue bound (idm_conn_set_send_limits); the
 * defaults until the core's connection exists. */
static inline const struct idm_prov_send_limits *
iser_limits(const struct iser_conn *ic)
{
	static const struct idm_prov_send_limits dflt = {
		IDM_SEND_QUEUE_ENTRIES, IDM_SEND_QUEUE_BYTES
	};

	return ic->limits ? ic->limits : &dflt;
}

static inline int iser_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

#endif
