/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The send queue's descriptors (struct tcp_txd, from the connection's
 * pool) and the bound on them: taking one, giving one back (which may
 * resume input), the Put_Data completion of a Data-In one, and the marks
 * at which input stops and resumes (see tcp_tx.c, "Backpressure"); the
 * hot part of it inline in tcp_txd.h.
 * Below the send machine (tcp_tx.c) and zero copy (tcp_zc.c), which
 * both give descriptors back: it calls neither.
 */
#include "tcp.h"
#include "tcp_txd.h"
#include "tcp_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Until tcp_conn_bind: nothing is queued before the core made the conn. */
const struct idm_prov_send_limits tcp_txd_default_limits = {
	IDM_SEND_QUEUE_ENTRIES, IDM_SEND_QUEUE_BYTES
};

int tcp_txd_admit(struct tcp_conn *tc, const uint8_t *bhs, size_t ahs_len,
		  size_t data_len)
{
	uint64_t need = IDM_ISCSI_BHS_LEN + (uint64_t)ahs_len + data_len;

	if (idm_prov_sq_admit(tcp_txd_limits(tc), tc->q_entries, tc->q_bytes,
			      idm_iscsi_bhs_opcode(bhs), need))
		return 0;
	return -EAGAIN;
}

void tcp_txd_rx_stop(struct tcp_conn *tc)
{
	tc->rx_stopped = true;
	tcp_watch_update(tc);
	idm_prov_dbg(tc->ctx, "tcp: %s: send queue at %u entries, %llu bytes: "
		     "input stopped", tc->conn ? idm_conn_peer_name(tc->conn) : "?",
		     tc->q_entries, (unsigned long long)tc->q_bytes);
}

void tcp_txd_rx_resume(struct tcp_conn *tc)
{
	tc->rx_stopped = false;
	if (tc->closed)
		return;
	tcp_watch_update(tc);
	/* bytes already in the stage are invisible to epoll */
	idm_prov_defer(tc->ctx, &tc->rx_defer, tc->rx_defer.fn); /* tcp_rx.c */
}

bool tcp_txd_datain_complete(struct tcp_conn *tc, struct tcp_txd *d)
{
	/* detach first: the callback may free the task or the connection */
	struct idm_task *t = d->task;

	tcp_txd_forget_task(d);
	tcp_txd_put(tc, d);
	/* d is only read, not reused yet */
	idm_prov_data_completion(t, IDM_DATA_IN, d->wire_off, d->end,
				 d->datasn - 1, 0);
	return !tc->closed;
}

/* The control buffer a txd keeps across reuse. */
static void txd_dtor(void *obj)
{
	free(((struct tcp_txd *)obj)->cbuf);
}

void tcp_txd_free_pool(struct tcp_conn *tc)
{
	idm_pool_fini(&tc->txd_pool, txd_dtor);
}
