/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_keepalive.c: dead peer detection on an idle connection. */
#ifndef IDM_ISER_KEEPALIVE_H
#define IDM_ISER_KEEPALIVE_H

#include "iser.h"

/* The probe timer (IDM_ISER_KEEPALIVE_MS; nothing when 0). */
int iser_keepalive_start(struct iser_conn *ic);
void iser_keepalive_stop(struct iser_conn *ic);

#endif
