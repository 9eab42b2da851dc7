/* SPDX-License-Identifier: BSD-2-Clause */
/* Completion queue of a loop (lun_cq.h): a mutex-guarded list, an atomic
 * flag so that an empty queue costs the owner no lock, and a wakeup. */
#include "lun_cq.h"

#include <errno.h>
#include <time.h>

int lun_cq_init(struct lun_cq *q, void (*wake)(void *), void *wake_arg)
{
	pthread_condattr_t ca;
	int r;

	q->head = q->tail = NULL;
	q->pending = 0;
	q->inflight = 0;
	q->wake = wake;
	q->wake_arg = wake_arg;
	if ((r = pthread_mutex_init(&q->lock, NULL)))
		return -r;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	r = pthread_cond_init(&q->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (r) {
		pthread_mutex_destroy(&q->lock);
		return -r;
	}
	return 0;
}

void lun_cq_fini(struct lun_cq *q)
{
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
}

void lun_cq_push(struct lun_cq *q, struct lun_io *io)
{
	io->next = NULL;
	pthread_mutex_lock(&q->lock);
	if (q->tail)
		q->tail->next = io;
	else
		q->head = io;
	q->tail = io;
	__atomic_store_n(&q->pending, 1, __ATOMIC_RELEASE);
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
	/* after the push: the owner's progress call returns and drains
	 * (q outlives every I/O it takes: lun_cq_quiesce()) */
	if (q->wake)
		q->wake(q->wake_arg);
}

int lun_cq_drain(struct lun_cq *q)
{
	struct lun_io *io, *next;
	int n = 0;

	if (!__atomic_load_n(&q->pending, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&q->lock);
	io = q->head;
	q->head = q->tail = NULL;
	__atomic_store_n(&q->pending, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&q->lock);
	for (; io; io = next) {
		next = io->next; /* io may be reused or gone after */
		q->inflight--;
		lun_io_complete(io);
		n++;
	}
	return n;
}

int lun_cq_quiesce(struct lun_cq *q, int timeout_ms)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	lun_cq_drain(q);
	while (q->inflight > 0) {
		int r = 0;

		pthread_mutex_lock(&q->lock);
		while (!q->head && r != ETIMEDOUT)
			r = pthread_cond_timedwait(&q->cond, &q->lock, &until);
		pthread_mutex_unlock(&q->lock);
		if (!lun_cq_drain(q) && r == ETIMEDOUT)
			break;
	}
	return q->inflight;
}
