/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_qp.c: the RC QP of a connection and what lives and dies with it. */
#ifndef IDM_ISER_QP_H
#define IDM_ISER_QP_H

#include "iser.h"

/* The QP, its CQs, op slots, login pools and keepalive timer. */
int iser_qp_create(struct iser_conn *ic);
/* Take back every WR (flushed), buffer and backlogged Send. */
void iser_drain(struct iser_conn *ic);
void iser_qp_destroy(struct iser_conn *ic);

#endif
