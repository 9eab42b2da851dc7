/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A loop's queue of LUN calls that completed on other threads (librbd's):
 * any thread pushes, the loop that owns the queue drains it and runs the
 * completions there, so that the session code stays single-threaded. A
 * push wakes the owner through `wake` (idm-target: idm_ctx_wakeup() of
 * the loop's context), so a loop sleeping in idm_ctx_progress() with no
 * timeout comes back for it.
 */
#ifndef IDM_TARGET_LUN_CQ_H
#define IDM_TARGET_LUN_CQ_H

#include <pthread.h>
#include <stdbool.h>

#include "lun.h"

struct lun_cq {
	pthread_mutex_t lock;
	pthread_cond_t cond;       /* lun_cq_quiesce() waits on it */
	struct lun_io *head, *tail;/* under lock, oldest first */
	int pending;               /* atomic: head != NULL */
	int inflight;              /* submitted, not drained (owner only) */
	void (*wake)(void *arg);   /* from any thread, after a push */
	void *wake_arg;
};

int lun_cq_init(struct lun_cq *q, void (*wake)(void *), void *wake_arg);
void lun_cq_fini(struct lun_cq *q);
/** Owner: an I/O that will complete through q is on its way. */
static inline void lun_cq_submitted(struct lun_cq *q)
{
	q->inflight++;
}
/** Any thread: io is complete (io->result set); wakes the owner. */
void lun_cq_push(struct lun_cq *q, struct lun_io *io);
/** Owner: run the completions queued so far, oldest first. Returns how
 * many ran. Takes no lock when the queue is empty. */
int lun_cq_drain(struct lun_cq *q);
/** Owner, at shutdown: drain until nothing is in flight or `timeout_ms`
 * passed. Returns what is still in flight. */
int lun_cq_quiesce(struct lun_cq *q, int timeout_ms);

#endif
