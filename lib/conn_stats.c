/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm_conn_get_stats(): one snapshot of a connection's counters, from the
 * provider's block (struct idm_prov_stats, kept in the connection) and
 * from what the core sees itself. Not on any I/O path: the in-flight
 * figures are counted here, by walking the tasks, rather than kept up to
 * date on every Put_Data and Get_Data.
 */
#include "core.h"
#include "conn_move.h"
#include "lock.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

static int count_xfer(struct idm_task *t, const struct idm_prov_xfer *x,
		      void *arg)
{
	(void)t;
	(void)x;
	(*(uint32_t *)arg)++;
	return 0;
}

static int count_task(struct idm_task *t, void *arg)
{
	uint32_t *n = arg;

	n[0]++;
	idm_prov_task_foreach_xfer(t, count_xfer, &n[1]);
	return 0;
}

IDM_API int idm_conn_get_stats(const idm_conn *conn, struct idm_conn_stats *st)
{
	struct idm_conn *c = (struct idm_conn *)conn;
	const struct idm_prov_stats *p;
	struct idm_conn_stats s;
	uint32_t n[2] = {0, 0};
	struct idm_ctx *ctx;
	size_t len;

	if (!c || !st || st->size < offsetof(struct idm_conn_stats, xfers_in_flight))
		return -EINVAL;
	len = st->size < sizeof(s) ? st->size : sizeof(s);
	memset(&s, 0, sizeof(s));
	ctx = idmp_conn_lock(c); /* any thread, even during idm_conn_move() */
	p = &c->stats;
	if (c->ops && IDM_PROV_OPS_HAS(c->ops, conn_stats) && c->priv)
		c->ops->conn_stats(c, &c->stats);
	idm_prov_conn_foreach_task(c, count_task, n);
	s.tasks_active = n[0];
	s.xfers_in_flight = n[1];
	s.sendq_entries = p->sendq_entries;
	s.sendq_bytes = p->sendq_bytes;
	s.pdus_tx = p->pdus_tx;
	s.pdus_rx = p->pdus_rx;
	s.bytes_tx = p->bytes_tx;
	s.bytes_rx = p->bytes_rx;
	s.data_in_pdus = p->data_in_pdus;
	s.data_out_pdus = p->data_out_pdus;
	s.r2t_pdus = p->r2t_pdus;
	s.control_tx = c->control_tx;
	s.control_rx = c->control_rx;
	s.header_digest_errors = p->header_digest_errors;
	s.data_digest_errors = p->data_digest_errors;
	s.rdma_writes = p->rdma_writes;
	s.rdma_reads = p->rdma_reads;
	s.send_invalidates = p->send_invalidates;
	s.recv_queue_empty = p->recv_queue_empty;
	s.payload_copies = p->payload_copies;
	s.payload_copy_bytes = p->payload_copy_bytes;
	s.late_pdus_dropped = p->late_pdus_dropped;
	s.mr_cache_hits = p->mr_cache_hits;
	s.mr_cache_misses = p->mr_cache_misses;
	s.mr_cache_evictions = p->mr_cache_evictions;
	s.mr_cache_invalidations = p->mr_cache_invalidations;
	s.mr_cache_uncached = p->mr_cache_uncached;
	s.mr_cache_pinned_bytes = p->mr_cache_pinned_bytes;
	idmp_ctx_unlock(ctx);
	s.size = (uint32_t)len;
	memcpy(st, &s, len);
	return 0;
}
