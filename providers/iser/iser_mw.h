/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_mw.c: a connection's memory windows, recycled. Calls nothing of
 * the provider. */
#ifndef IDM_ISER_MW_H
#define IDM_ISER_MW_H

#include "iser.h"

/* A type-2 window from the connection's free list (allocated on
 * warm-up), and back. */
int iser_mw_get(struct iser_conn *ic, struct ibv_mw **out);
void iser_mw_put(struct iser_conn *ic, struct ibv_mw *mw);
/* Deallocate the free windows (with free_list, the list itself too). */
void iser_mws_dealloc(struct iser_conn *ic, bool free_list);

#endif
