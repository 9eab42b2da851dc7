/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_recv.c: the receive path: posting receive buffers, checking what
 * arrives, handing PDUs to the role (ic->role->recv) or the caller. */
#ifndef IDM_ISER_RECV_H
#define IDM_ISER_RECV_H

#include "iser.h"
#include "iser_rx_check.h" /* iser_rx_pdu() */

int iser_post_recv(struct iser_conn *ic, struct iser_msg *m);
/* A receive buffer that carried nothing to handle (a failed receive)
 * back where it came from: its pool, or its shared queue. */
void iser_rx_give_back(struct iser_msg *m);
/* A received message was handled: repost it (or hold it while the Send
 * backlog is over its mark) or return it. */
void iser_rx_done(struct iser_conn *ic, struct iser_msg *m);
/* The Send backlog may have drained: repost the held receive buffers. */
void iser_rx_resume(struct iser_conn *ic);
/* One login buffer for the next login PDU we expect (login phase). */
int iser_expect_login_pdu(struct iser_conn *ic);
/* Enable_Datamover: post the full feature phase receive buffers. */
int iser_rsrc_ffp(struct iser_conn *ic);
/* A receive completed successfully with message m. */
void iser_recv(struct iser_conn *ic, struct iser_msg *m, const struct ibv_wc *wc);

#endif
