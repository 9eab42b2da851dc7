/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Answers for tasks the caller released (timeout, abort, LUN reset, many
 * at once): a target may still send Data-In or R2T for them. The
 * initiator drops those (tcp_initiator.c) and keeps failing the
 * connection for an ITT that was never a command of this connection, a
 * sign of a broken target.
 *
 * Why a set and how big. Only tasks released while their command was
 * outstanding go in (a task whose final status came is not remembered:
 * normal completions never push anything out), and an entry leaves when
 * its final status arrives (SCSI Response, Data-In with S). What stays
 * are tasks the target never answers (aborted, lost). The ring holds
 * TCP_LATE_PER_CMD times the caller's command window
 * (idm_conn_set_cmd_window(), TCP_LATE_WINDOW when not set), within
 * [TCP_LATE_MIN, TCP_LATE_MAX]: an entry is forgotten only after that many
 * further unanswered releases, that is after the target left several
 * whole windows of commands unanswered, by when the session is in
 * recovery anyway. The bound holds whatever the peer or the caller does:
 * at most TCP_LATE_MAX * 4 bytes per connection, allocated the first time
 * a task is released unanswered (never on the I/O path of healthy
 * traffic). A lookup scans the ring; it runs only for a PDU whose ITT has
 * no live task, never for the PDUs of live tasks.
 */
#include "tcp_late.h"

#include <stdlib.h>

static uint32_t late_cap(const struct tcp_conn *tc)
{
	uint64_t w = idm_prov_conn_cmd_window(tc->conn);
	uint64_t cap = (w ? w : TCP_LATE_WINDOW) * TCP_LATE_PER_CMD;

	if (cap < TCP_LATE_MIN)
		cap = TCP_LATE_MIN;
	if (cap > TCP_LATE_MAX)
		cap = TCP_LATE_MAX;
	return (uint32_t)cap;
}

void tcp_late_add(struct tcp_conn *tc, uint32_t itt)
{
	struct tcp_late *l = &tc->late;

	if (itt == IDM_ISCSI_RESERVED_TAG)
		return; /* the empty slot's mark; no task has it */
	if (!l->itt) {
		uint32_t cap = late_cap(tc);

		l->itt = malloc(cap * sizeof(*l->itt));
		if (!l->itt) {
			/* its late answers fail the connection, as for any
			 * unknown ITT: the safe side */
			idm_prov_dbg(tc->ctx, "tcp: no memory to remember "
				     "released ITT 0x%08x", itt);
			return;
		}
		for (uint32_t i = 0; i < cap; i++)
			l->itt[i] = IDM_ISCSI_RESERVED_TAG;
		l->cap = cap;
		l->pos = 0;
	}
	l->itt[l->pos] = itt; /* the oldest goes */
	l->pos = l->pos + 1 == l->cap ? 0 : l->pos + 1;
}

bool tcp_late_has(const struct tcp_conn *tc, uint32_t itt)
{
	const struct tcp_late *l = &tc->late;

	if (itt == IDM_ISCSI_RESERVED_TAG)
		return false;
	for (uint32_t i = 0; i < l->cap; i++)
		if (l->itt[i] == itt)
			return true;
	return false;
}

void tcp_late_forget(struct tcp_conn *tc, uint32_t itt)
{
	struct tcp_late *l = &tc->late;

	if (itt == IDM_ISCSI_RESERVED_TAG)
		return;
	/* one answer ends one release: the oldest copy, should the caller
	 * have reused the ITT and released it unanswered again meanwhile */
	for (uint32_t n = 0, i = l->pos; n < l->cap; n++) {
		if (l->itt[i] == itt) {
			l->itt[i] = IDM_ISCSI_RESERVED_TAG;
			return;
		}
		i = i + 1 == l->cap ? 0 : i + 1;
	}
}

void tcp_late_free(struct tcp_conn *tc)
{
	free(tc->late.itt);
	tc->late.itt = NULL;
	tc->late.cap = tc->late.pos = 0;
}
