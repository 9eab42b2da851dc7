/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Raising a connection failure. Any layer that finds the connection broken
 * (a failed completion, a post that cannot be made, a protocol error, a
 * dead peer) says so here, and the connection's owner, iser_conn.c, takes
 * it from there through the handler it set when it made the connection
 * (ic->on_fail): the layers below the owner never name it, so calls
 * between the files still flow one way. The handler runs at once, as a
 * direct call did: a layer that raised a failure finds the connection
 * down (ic->state) when this returns, and stops.
 */
#include "iser_fail.h"

#include <stdarg.h>
#include <stdio.h>

void iser_conn_fail(struct iser_conn *ic, int reason, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	if (ic->state == ISER_DOWN)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ic->on_fail(ic, reason, msg);
}
