/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Buffer and task pools. Data buffers come from idm_buf_alloc() (memory
 * every provider can use, registered once) in power-of-two size classes;
 * a buffer goes back to its class's free list after use and is never
 * freed before exit, so a warm target does no malloc per I/O.
 */
#include "target.h"

#include <stdlib.h>
#include <string.h>

#define CLS_MIN POOL_CLS_MIN
#define CLS_MAX POOL_CLS_MAX
#define NCLS POOL_NCLS

/* One pool per loop (struct loop), so that no lock guards it: a buffer
 * comes from the running loop's context. A connection moved to another
 * loop gives its buffers back to that loop's lists (TCP takes buffers of
 * any context on a moved connection); each is destroyed with the pool
 * that made it, after every loop stopped. */
#define free_bufs (g_loop->free_bufs)
#define all_bufs (g_loop->all_bufs)
#define free_tasks (g_loop->free_tasks)
#define all_tasks_chunks (g_loop->all_tasks_chunks)

struct pbuf *pbuf_get(size_t len)
{
	int cls = CLS_MIN;
	struct pbuf *b;

	while (cls <= CLS_MAX && ((size_t)1 << cls) < len)
		cls++;
	if (cls > CLS_MAX)
		return NULL;
	b = free_bufs[cls - CLS_MIN];
	if (b) {
		free_bufs[cls - CLS_MIN] = b->next;
		return b;
	}
	b = calloc(1, sizeof(*b)); /* first use of this buffer only */
	if (!b)
		return NULL;
	if (idm_buf_alloc(g_loop->ctx, (size_t)1 << cls, &b->ib) < 0) {
		free(b);
		return NULL;
	}
	b->addr = idm_buf_addr(b->ib);
	b->cap = (size_t)1 << cls;
	b->cls = cls;
	b->all_next = all_bufs;
	all_bufs = b;
	return b;
}

void pbuf_put(struct pbuf *b)
{
	if (!b)
		return;
	b->next = free_bufs[b->cls - CLS_MIN];
	free_bufs[b->cls - CLS_MIN] = b;
}

#define TASK_CHUNK 64

struct ttask *ttask_get(void)
{
	struct ttask *t;

	if (!free_tasks) {
		/* element 0 of each chunk links the chunks for pool_destroy */
		struct ttask *chunk = calloc(TASK_CHUNK, sizeof(*chunk));
		if (!chunk)
			return NULL;
		chunk[0].next = all_tasks_chunks;
		all_tasks_chunks = chunk;
		for (int i = 1; i < TASK_CHUNK; i++) {
			chunk[i].next = free_tasks;
			free_tasks = &chunk[i];
		}
	}
	t = free_tasks;
	free_tasks = t->next;
	memset(t, 0, sizeof(*t));
	return t;
}

void ttask_put(struct ttask *t)
{
	free(t->data);
	t->data = NULL;
	t->next = free_tasks;
	free_tasks = t;
}

void pool_destroy(void)
{
	while (all_bufs) {
		struct pbuf *b = all_bufs;
		all_bufs = b->all_next;
		idm_buf_destroy(b->ib);
		free(b);
	}
	for (int i = 0; i < NCLS; i++)
		free_bufs[i] = NULL;
	while (all_tasks_chunks) {
		struct ttask *c = all_tasks_chunks;
		all_tasks_chunks = c[0].next;
		free(c);
	}
	free_tasks = NULL;
}
