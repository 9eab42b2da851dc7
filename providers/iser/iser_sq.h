/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_sq.c: the send queue of a connection: op slots, posting in
 * chains with selective signalling, reaping completions in order. */
#ifndef IDM_ISER_SQ_H
#define IDM_ISER_SQ_H

#include "iser.h"

/* The op slots, made with the QP and freed with the connection. */
int iser_sq_init(struct iser_conn *ic);
void iser_sq_fini(struct iser_conn *ic);

struct iser_op *iser_op_get(struct iser_conn *ic, enum iser_op_kind kind);
void iser_op_put(struct iser_conn *ic, struct iser_op *op);
/* Give back what a finished (or never posted) op holds: its message, the
 * window it invalidated, and the slot. */
void iser_op_release(struct iser_conn *ic, struct iser_op *op);
void iser_op_task(struct iser_op *op, struct idm_task *t);
void iser_ops_orphan(struct iser_conn *ic, struct idm_task *t);
uint64_t iser_op_wr_id(struct iser_conn *ic, struct iser_op *op);
/* The op's list of ISER_WR_SGE SGEs for a scatter-gather range (the
 * connection's lists are made on first use); NULL: out of memory. */
struct ibv_sge *iser_op_sgl(struct iser_conn *ic, struct iser_op *op);
const char *iser_op_name(enum iser_op_kind k);
/* Queue the op named by wr->wr_id (wr is copied) and post it, or with the
 * queue plugged, at unplug. 0, or -ENOTCONN when the QP is gone. */
int iser_post(struct iser_conn *ic, struct ibv_send_wr *wr);
/* ops->conn_stats: WRs built but not yet posted, and Sends waiting for
 * buffers, counted when asked */
void iser_sq_stats(struct idm_conn *conn, struct idm_prov_stats *st);
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

#endif
