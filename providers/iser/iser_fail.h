/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_fail.c: a layer raises its connection's failure. Calls nothing of
 * the provider: the connection's owner handles it (ic->on_fail). */
#ifndef IDM_ISER_FAIL_H
#define IDM_ISER_FAIL_H

#include "iser.h"

/* Fail the connection: why, formatted, goes to the owner's handler
 * (iser_conn.c: record it, drain, release, notify once). Nothing when
 * the connection is already down. reason: a negative errno (-EIO when
 * not). */
void iser_conn_fail(struct iser_conn *ic, int reason, const char *fmt, ...)
	IDM_PROV_PRINTF(3, 4);

#endif
