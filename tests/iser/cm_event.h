/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The verbs-only reproducers' (rxe_mw_retry.c, rxe_zero_send.c) wait for
 * one rdma_cm event: they need no library of ours, only this.
 */
#ifndef IDM_TEST_CM_EVENT_H
#define IDM_TEST_CM_EVENT_H

#include <poll.h>
#include <stdio.h>

#include <rdma/rdma_cma.h>

/*
 * Wait up to `ms` for the next event of `ech`. 0 when it is `want` (its
 * id in *id_out, if given); -1, said on stderr, on a timeout or another
 * event.
 */
static inline int cm_event_wait(struct rdma_event_channel *ech, enum rdma_cm_event_type want,
				struct rdma_cm_id **id_out, int ms)
{
	struct rdma_cm_event *ev;
	struct pollfd p = {.fd = ech->fd, .events = POLLIN};
	int r;

	if (poll(&p, 1, ms) != 1) {
		fprintf(stderr, "no %s within %d ms\n", rdma_event_str(want), ms);
		return -1;
	}
	if (rdma_get_cm_event(ech, &ev))
		return -1;
	r = ev->event == want ? 0 : -1;
	if (r)
		fprintf(stderr, "got %s (status %d), wanted %s\n", rdma_event_str(ev->event),
			ev->status, rdma_event_str(want));
	if (id_out)
		*id_out = ev->id;
	rdma_ack_cm_event(ev);
	return r;
}

#endif
