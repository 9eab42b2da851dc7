/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_cq.c: the send and receive completion queues of a connection:
 * their event channels, polling, and dispatch by WR kind. */
#ifndef IDM_ISER_CQ_H
#define IDM_ISER_CQ_H

#include "iser.h"

/* Both CQs with their completion channels, watched in the context. */
int iser_cq_create(struct iser_conn *ic);
/* Unwatch and destroy them (after the QP is gone). */
void iser_cq_destroy(struct iser_conn *ic);
/* Handle what the send (is_send) or receive CQ holds, then re-arm it. */
void iser_cq_poll(struct iser_conn *ic, bool is_send);
/* Resources came back outside a Send completion (an initiator's staging
 * units): the Send backlog runs from the next progress pass, as after
 * one. */
void iser_sq_refill_later(struct iser_conn *ic);
/* Fail the connection from the next progress pass, with reason why (a
 * string that lives as long as the provider). */
void iser_conn_fail_later(struct iser_conn *ic, const char *why);

#endif
