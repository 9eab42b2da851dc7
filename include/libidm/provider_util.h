/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libidm provider SDK, header-only helpers every transport needs: an
 * intrusive singly-linked tail queue (send queues, pending lists) and an
 * object pool that grows in chunks and frees only at the end (per-I/O
 * descriptors without a malloc per I/O once warm). No libidm symbol is
 * used: they work with any allocator-free discipline the caller keeps.
 * Not thread-safe; like the rest of a provider, use them under the
 * context lock.
 */
#ifndef LIBIDM_PROVIDER_UTIL_H
#define LIBIDM_PROVIDER_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Tail queue: O(1) push at the tail, pop at the head, removal while    */
/* walking. Embed a struct idm_sq_link in the element; find the element */
/* again with IDM_PROV_CONTAINER_OF (<libidm/provider.h>).              */
/* ------------------------------------------------------------------ */

struct idm_sq_link {
	struct idm_sq_link *next;
};

struct idm_sq {
	struct idm_sq_link *head, *tail;
};

static inline void idm_sq_init(struct idm_sq *q)
{
	q->head = q->tail = NULL;
}

static inline bool idm_sq_empty(const struct idm_sq *q)
{
	return q->head == NULL;
}

static inline void idm_sq_push(struct idm_sq *q, struct idm_sq_link *l)
{
	l->next = NULL;
	if (q->tail)
		q->tail->next = l;
	else
		q->head = l;
	q->tail = l;
}

/* The head, unlinked; NULL when empty. */
static inline struct idm_sq_link *idm_sq_pop(struct idm_sq *q)
{
	struct idm_sq_link *l = q->head;

	if (l) {
		q->head = l->next;
		if (!q->head)
			q->tail = NULL;
		l->next = NULL;
	}
	return l;
}

/* Unlink l, whose predecessor is prev (NULL: l is the head). For walks
 * that remove: keep prev, and after a removal do not advance it. */
static inline void idm_sq_remove(struct idm_sq *q, struct idm_sq_link *prev,
				 struct idm_sq_link *l)
{
	if (prev)
		prev->next = l->next;
	else
		q->head = l->next;
	if (q->tail == l)
		q->tail = prev;
	l->next = NULL;
}

/* ------------------------------------------------------------------ */
/* Object pool: fixed-size objects from chunks of `per_chunk`, zeroed   */
/* when first allocated. A free object's first pointer-sized bytes hold */
/* the pool's link; the rest of it survives idm_pool_put/idm_pool_get,  */
/* so an object may keep e.g. a buffer of its own across reuse.         */
/* ------------------------------------------------------------------ */

struct idm_pool {
	size_t obj_size; /* rounded up to keep every object aligned */
	unsigned per_chunk;
	void *free;	 /* free list, linked through each object's start */
	void **chunks;
	size_t n_chunks;
};

static inline void idm_pool_init(struct idm_pool *p, size_t obj_size,
				 unsigned per_chunk)
{
	const size_t a = sizeof(long double) > sizeof(void *) ? sizeof(long double)
							      : sizeof(void *);

	if (obj_size < sizeof(void *))
		obj_size = sizeof(void *);
	p->obj_size = (obj_size + a - 1) / a * a;
	p->per_chunk = per_chunk ? per_chunk : 1;
	p->free = NULL;
	p->chunks = NULL;
	p->n_chunks = 0;
}

/* An object, or NULL when memory is short (only when the pool grows). */
static inline void *idm_pool_get(struct idm_pool *p)
{
	void *o;

	if (!p->free) {
		void **chunks = (void **)realloc(p->chunks,
						 (p->n_chunks + 1) * sizeof(void *));
		char *mem;

		if (!chunks)
			return NULL;
		p->chunks = chunks;
		mem = (char *)calloc(p->per_chunk, p->obj_size);
		if (!mem)
			return NULL;
		p->chunks[p->n_chunks++] = mem;
		for (unsigned i = p->per_chunk; i-- > 0;) {
			*(void **)(void *)(mem + i * p->obj_size) = p->free;
			p->free = mem + i * p->obj_size;
		}
	}
	o = p->free;
	p->free = *(void **)o;
	*(void **)o = NULL;
	return o;
}

static inline void idm_pool_put(struct idm_pool *p, void *o)
{
	*(void **)o = p->free;
	p->free = o;
}

/* Free every chunk; dtor (may be NULL) first sees every object, free or
 * not, e.g. to release what objects keep across reuse. */
static inline void idm_pool_fini(struct idm_pool *p, void (*dtor)(void *obj))
{
	for (size_t c = 0; c < p->n_chunks; c++) {
		if (dtor)
			for (unsigned i = 0; i < p->per_chunk; i++)
				dtor((char *)p->chunks[c] + i * p->obj_size);
		free(p->chunks[c]);
	}
	free(p->chunks);
	p->chunks = NULL;
	p->n_chunks = 0;
	p->free = NULL;
}

#ifdef __cplusplus
}
#endif

#endif
