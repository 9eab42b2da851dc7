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
 */
#ifndef IDM_ISER_H
#define IDM_ISER_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "provider.h"
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
#define ISER_MAX_DEVS 4
#define ISER_CQ_BATCH 32
/* Receiver-not-ready retries: 7 = until the peer posts a receive. RNR
 * proves the peer alive; it is how unsolicited Data-Out beyond the posted
 * receive buffers is paced (iser_keys.c). A peer that never reposts is
 * caught by the liveness deadline (IDM_ISER_LIVENESS_MS). */
#define ISER_RNR_RETRY 7

/* ---- devices and memory ---------------------------------------------- */

/* One per RDMA device, shared by every connection on it: the PD the
 * caller's buffers are registered in. */
struct iser_dev {
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	bool has_mw;     /* type-2 memory windows: remote-invalidatable STags */
	/* Memory window binds only with no transport WR ahead of them on
	 * the send queue (soft-RoCE: iser_sq.c, doc/iser.md) */
	bool bind_idle;
	uint32_t max_rd_atom;
	uint32_t max_msg;
};

struct iser_prov {
	struct idm_prov *prov;
	struct iser_dev devs[ISER_MAX_DEVS];
	int n_devs;
	int ack_timeout;    /* local ACK timeout exponent (4.096us << n) */
	int retry_count;    /* 0..6: 7 means "forever" on rxe */
	int keepalive_ms;   /* idle probe period, 0 off */
	uint32_t rx_depth;
	bool force_mr;      /* IDM_ISER_STAG=mr: plain MR rkeys, no MWs */
	int liveness_ms;    /* a probe not completed by then fails, 0 off */
	int bind_idle;      /* IDM_ISER_BIND_IDLE: -1 auto (rxe), 0 off, 1 on */
	/* cm_ids of failed connections waiting for their port (iser_park.c) */
	struct iser_parked *parked;
	uint32_t n_parked;
	int park_fd;
	struct idm_prov_watch park_w;
};

/* buf->reg[prov->index]: the buffer's MR per PD */
struct iser_bufreg {
	struct {
		struct ibv_pd *pd;
		struct ibv_mr *mr;
	} e[ISER_MAX_DEVS];
};

struct iser_dev *iser_dev_get(struct iser_prov *ip, struct ibv_context *verbs);
void iser_devs_close(struct iser_prov *ip);
/* The MR covering buf in dev's PD, registered on first use. */
struct ibv_mr *iser_buf_mr(struct iser_prov *ip, struct iser_dev *dev,
			   struct idm_buf *buf);
void iser_buf_release(struct idm_prov *prov, struct idm_buf *buf);

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
};

int iser_pool_init(struct iser_pool *p, struct ibv_pd *pd, uint32_t n,
		   uint32_t size);
void iser_pool_fini(struct iser_pool *p);
struct iser_msg *iser_pool_get(struct iser_pool *p);
/* Back to its pool, or a one-off message freed. */
void iser_pool_put(struct iser_msg *m);
/* A registered message for a control PDU larger than the pooled send
 * buffers (a big Text or NOP payload): rare, so registered per PDU. */
struct iser_msg *iser_msg_oneoff(struct ibv_pd *pd, uint32_t size);

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
	struct ibv_mw *bind_mw; /* BIND: window being bound */
	struct iser_op *next;  /* free list, wait FIFO or posted FIFO */
	struct ibv_send_wr wr;
	struct ibv_sge sge[2];
};

/* A Send that found no free message buffer (or, for a SCSI Command, too
 * few op slots): kept, in order, until Send completions give some back.
 * Allocated only on that slow path. */
struct iser_pend {
	struct iser_pend *next;
	struct idm_task *task; /* SCSI Command (initiator); NULL: control */
	uint32_t len;          /* control: message bytes; command: AHS bytes */
	uint32_t inv;          /* control: rkey to invalidate with the Send */
	uint8_t bytes[];       /* control: the message; command: BHS + AHS */
};

/* ---- tasks --------------------------------------------------------------- */

struct iser_dop {
	bool used;
	enum idm_data_dir dir;
	uint32_t offset, length;
	uint32_t remaining; /* bytes not yet placed/sent */
	uint32_t sn;
	int status;
	uint8_t *dst;       /* Get_Data: where offset 0 of the range goes */
	bool ack;           /* Put_Data with the A bit */
	bool has_rsp;       /* Put_Data template carried status (S bit) */
	struct idm_prov_defer done;
	struct idm_task *task;
};

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
	struct idm_task *dout_link;
	struct iser_pend *cmd_pend; /* command still waiting for a buffer */
	uint32_t rsp_len;
	/* target: the initiator's buffers, from the command's iSER header */
	bool rsv, wsv;
	uint32_t r_stag, w_stag;
	uint64_t r_va, w_va;
	uint32_t edtl;
	uint32_t imm_len, unsol_len;
	const uint8_t *imm_now; /* immediate data while in control_notify */
	bool imm_taken;         /* Get_Data copied it from the receive buffer */
	uint8_t *staged;        /* unsolicited data nobody asked for yet */
	uint32_t staged_len;
	uint32_t datasn, r2tsn;
	uint32_t placed;
	struct iser_dop dops[ISER_TASK_DOPS];
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
	enum iser_state state;
	struct rdma_event_channel *ech;
	struct rdma_cm_id *id;
	struct iser_dev *dev;
	struct ibv_comp_channel *scc, *rcc;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct idm_prov_watch cm_w, scq_w, rcq_w, timer_w;
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

	/* messages */
	struct iser_pool rx_login, tx_login, rx_ffp, tx_ffp;
	bool hello_wait;    /* initiator: Hello sent, HelloReply not yet */
	bool ffp_alloc;     /* rx_ffp/tx_ffp allocated (Allocate_Conn...) */
	bool ffp_rsrc;      /* ... and the receives posted (Enable_Datamover) */
	uint32_t rx_posted; /* receives on the RQ */
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
	struct iser_pend *pend, *pend_tail;     /* Sends waiting for buffers */
	uint64_t stat_wrs, stat_signalled;      /* WRs posted / signalled */
	/* target data path, logged at teardown (debug): write commands,
	 * the largest EDTL, Sends of unsolicited data, RDMA Reads */
	uint64_t stat_writes, stat_unsol_sends, stat_reads, stat_read_bytes;
	uint32_t stat_max_edtl;
	struct idm_task *dout_head, *dout_tail; /* tasks owing Data-Out */
	struct ibv_mw **mw_free;
	uint32_t n_mw_free, n_mw;

	/* failed while its port was down: no DREQ until it is back */
	bool disc_deferred;

	/* liveness */
	bool activity;
	bool probe_out;

	/* connect timeout (initiator) */
	int timeout_ms;
	bool in_dispatch;

	/* liveness deadline: ms the outstanding probe has waited so far */
	int probe_wait_ms;
};

static inline struct iser_conn *iser_conn(struct idm_conn *c)
{
	return c->priv;
}

/* The send buffers of the current phase. */
static inline struct iser_pool *iser_tx_pool(struct iser_conn *ic)
{
	return ic->ffp_rsrc ? &ic->tx_ffp : &ic->tx_login;
}

/* iser_cm.c */
int iser_listen(struct idm_prov_listener *l, const struct sockaddr *sa,
		socklen_t salen, int backlog);
void iser_unlisten(struct idm_prov_listener *l);
int iser_listener_port(struct idm_prov_listener *l);
int iser_connect(struct idm_conn *c, const struct sockaddr *sa, socklen_t salen,
		 int timeout_ms);
void iser_conn_terminate(struct idm_conn *c);
void iser_conn_free(struct idm_conn *c);
int iser_conn_is_capable(struct idm_prov *prov, const struct sockaddr *sa,
			 socklen_t salen);
/* Fail the connection: record why, drain, release, notify once. */
void iser_conn_fail(struct iser_conn *ic, int reason, const char *fmt, ...)
	IDMP_PRINTF(3, 4);

/* iser_qp.c: resources of one connection */
int iser_qp_create(struct iser_conn *ic);
void iser_qp_destroy(struct iser_conn *ic);

/* iser_park.c: is the port of id's device ACTIVE (true when unknown)? */
bool iser_port_active(struct rdma_cm_id *id);
/* Keep a connected id (and its event channel) until its port is ACTIVE,
 * then destroy it: the DREQ goes out only then. */
void iser_park_id(struct iser_prov *ip, struct rdma_cm_id *id,
		  struct rdma_event_channel *ech);
void iser_park_fini(struct iser_prov *ip);
void iser_conn_mem_free(struct iser_conn *ic);
int iser_rsrc_ffp_alloc(struct iser_conn *ic);
bool iser_rsrc_ffp_free(struct iser_conn *ic);
int iser_rsrc_ffp(struct iser_conn *ic);
void iser_drain(struct iser_conn *ic);

/* iser_io.c: posting and completions */
struct iser_op *iser_op_get(struct iser_conn *ic, enum iser_op_kind kind);
void iser_op_put(struct iser_conn *ic, struct iser_op *op);
/* Give back what a finished (or never posted) op holds: its message, the
 * window it invalidated, and the slot. */
void iser_op_release(struct iser_conn *ic, struct iser_op *op);
void iser_op_task(struct iser_op *op, struct idm_task *t);
void iser_ops_orphan(struct iser_conn *ic, struct idm_task *t);
uint64_t iser_op_wr_id(struct iser_conn *ic, struct iser_op *op);
int iser_mw_get(struct iser_conn *ic, struct ibv_mw **out);
void iser_mw_put(struct iser_conn *ic, struct ibv_mw *mw);
/* Queue the op named by wr->wr_id (wr is copied) and post it, or with the
 * queue plugged, at unplug. 0, or -ENOTCONN when the QP is gone. */
int iser_post(struct iser_conn *ic, struct ibv_send_wr *wr);
void iser_plug(struct iser_conn *ic);
void iser_unplug(struct iser_conn *ic);
/* Post waiting WRs as far as send queue room and ORD allow. */
void iser_sq_kick(struct iser_conn *ic);
/* Drop the unposted WRs of a task being freed (never touch its buffers). */
void iser_sq_purge_task(struct iser_conn *ic, struct idm_task *t);
/* Reap one send completion and the unsignalled WRs posted before it;
 * on_done is called for each with its status. */
void iser_sq_reap(struct iser_conn *ic, const struct ibv_wc *wc,
		  void (*on_done)(struct iser_conn *, struct iser_op *,
				  const struct ibv_wc *));
/* Take the oldest posted WR off the send queue's books (NULL if none). */
struct iser_op *iser_sq_pop(struct iser_conn *ic);
/* Backlog of Sends without a buffer (iser_pend). */
/* Room for a control message of len bytes at the end of the backlog
 * (the caller encodes it there), or NULL without memory. */
uint8_t *iser_pend_control(struct iser_conn *ic, uint32_t len, uint32_t inv);
int iser_pend_cmd(struct iser_conn *ic, const uint8_t *bhs, const void *ahs,
		  size_t ahs_len, struct idm_task *t);
void iser_pend_run(struct iser_conn *ic);
void iser_pend_drop_task(struct iser_conn *ic, struct idm_task *t);
void iser_pend_free_all(struct iser_conn *ic);
int iser_post_recv(struct iser_conn *ic, struct iser_msg *m);
struct iser_msg *iser_tx_get(struct iser_conn *ic);
/* A send message for len bytes: pooled, or one-off when larger than the
 * pooled buffers. NULL when the pool is empty or memory ran out. */
struct iser_msg *iser_tx_msg(struct iser_conn *ic, uint32_t len);
int iser_send_msg(struct iser_conn *ic, struct iser_msg *m, uint32_t len,
		  struct ibv_sge *extra, int n_extra, struct idm_task *task,
		  uint32_t inv_rkey);
void iser_cq_poll(struct iser_conn *ic, bool is_send);
void iser_scq_watch(struct idm_prov_watch *w, uint32_t revents);
void iser_rcq_watch(struct idm_prov_watch *w, uint32_t revents);
void iser_timer_watch(struct idm_prov_watch *w, uint32_t revents);

/* iser_recv.c: received messages */
void iser_recv(struct iser_conn *ic, struct iser_msg *m, const struct ibv_wc *wc);
void iser_rx_done(struct iser_conn *ic, struct iser_msg *m);

/* iser_initiator.c */
int iser_ini_send_cmd(struct iser_conn *ic, const uint8_t *bhs,
		      const void *ahs, size_t ahs_len, struct idm_task *t);
/* A SCSI Command from the backlog: buffers are there now. */
int iser_ini_cmd_post(struct iser_conn *ic, const uint8_t *bhs,
		      const void *ahs, size_t ahs_len, struct idm_task *t);
void iser_ini_rsp(struct iser_conn *ic, struct idm_task *t, struct iser_msg *m,
		  uint32_t len, const struct ibv_wc *wc);
void iser_ini_try_complete(struct iser_conn *ic, struct idm_task *t);
void iser_ini_dout_resume(struct iser_conn *ic);
void iser_ini_task_release(struct iser_conn *ic, struct idm_task *t);

/* iser_target.c */
int iser_put_data(struct idm_task *t, const uint8_t *tmpl, struct idm_buf *buf,
		  size_t buf_off, uint32_t offset, uint32_t length,
		  uint32_t flags);
int iser_get_data(struct idm_task *t, const uint8_t *tmpl, struct idm_buf *buf,
		  size_t buf_off, uint32_t offset, uint32_t length,
		  uint32_t flags);
int iser_tgt_cmd(struct iser_conn *ic, const struct iser_hdr *h,
		 const uint8_t *bhs, const uint8_t *data, uint32_t dlen,
		 struct idm_task **out);
void iser_tgt_cmd_done(struct iser_conn *ic, struct idm_task *t);
int iser_tgt_data_out(struct iser_conn *ic, const uint8_t *bhs,
		      const uint8_t *data, uint32_t dlen);
void iser_dop_progress(struct iser_conn *ic, struct iser_dop *d, uint32_t n,
		       int status);
void iser_tgt_task_release(struct iser_conn *ic, struct idm_task *t);

/* iser_provider.c */
int iser_send_control(struct idm_conn *c, const uint8_t *bhs, const void *ahs,
		      size_t ahs_len, const void *data, size_t data_len,
		      struct idm_task *t);

#endif
