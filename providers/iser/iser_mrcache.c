/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Registration cache: caller memory registered once and found again by
 * address, so a caller that makes a new buffer per command (idm_buf_create
 * on the same memory each time) registers nothing after the first.
 *
 * Entries are kept in an index sorted by start address that never holds
 * two overlapping entries: a lookup is one binary search, and a hit is
 * any entry containing the asked range. A miss on a range overlapping
 * entries registers the union of them all and takes their place in the
 * index (the old ones live on while in use), so memory used through
 * shifting sub-ranges ends up under one registration.
 *
 * Bounds: the bytes held registered (max_pinned) and the entries
 * (max_entries); idle entries are evicted least recently used first.
 * Entries in use are never evicted; when they alone fill the bound the
 * new registration serves its one use and is not cached.
 *
 * Correctness when memory is freed and the address reused: every cached
 * range is watched by the userfaultfd monitor (iser_uffd.c), whose
 * callback unlinks the entries the change touches before the unmapping
 * thread can map anything new; a lookup waits for events being handed
 * out (iser_uffd_settle); and a miss inserts its registration only if no
 * invalidation happened while it registered (the cache's epoch).
 *
 * Locks: c->lock guards the index, the LRU and the counters, and is held
 * only for list work: registration, deregistration, malloc and free are
 * done outside it (any of them could unmap watched memory and wait for
 * the monitor, which needs c->lock). Entries the monitor drops are left
 * on a dead list that the next get or put frees.
 */
#include "iser_mrcache.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct iser_mrc {
	pthread_mutex_t lock;
	const struct iser_mrc_ops *ops;
	void *arg;
	struct iser_mrc_ent **idx; /* sorted by start, no two overlap */
	uint32_t n, cap;
	struct iser_mrc_ent lru;   /* idle indexed entries: next is oldest */
	struct iser_mrc_ent *dead; /* dropped by the monitor, to free */
	uint64_t max_pinned;
	uint64_t epoch;            /* invalidations so far */
	struct iser_mrc_stats st;
	struct iser_uffd_client mon;
	bool caching;
};

static void lru_del(struct iser_mrc_ent *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	e->prev = e->next = NULL;
}

static void lru_add(struct iser_mrc *c, struct iser_mrc_ent *e)
{
	e->prev = c->lru.prev;
	e->next = &c->lru;
	c->lru.prev->next = e;
	c->lru.prev = e;
}

/* The index of the last entry starting at or before a; -1 if none. */
static int64_t idx_find(const struct iser_mrc *c, uintptr_t a)
{
	int64_t lo = 0, hi = (int64_t)c->n - 1, r = -1;

	while (lo <= hi) {
		int64_t mid = lo + (hi - lo) / 2;

		if (c->idx[mid]->start <= a) {
			r = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return r;
}

/* The first entry overlapping [s, e), and how many follow it that do:
 * they are consecutive in the index. */
static uint32_t idx_overlap(const struct iser_mrc *c, uintptr_t s,
			    uintptr_t e, uint32_t *first)
{
	int64_t i = idx_find(c, s);
	uint32_t k;

	if (i < 0 || c->idx[i]->end <= s)
		i++;
	for (k = (uint32_t)i; k < c->n && c->idx[k]->start < e; k++)
		;
	*first = (uint32_t)i;
	return k - (uint32_t)i;
}

static void idx_remove(struct iser_mrc *c, uint32_t i, uint32_t k)
{
	for (uint32_t j = i; j < i + k; j++)
		c->idx[j]->indexed = false;
	memmove(&c->idx[i], &c->idx[i + k],
		(c->n - i - k) * sizeof(c->idx[0]));
	c->n -= k;
}

/* An entry leaves the index: an idle one goes to *out (to deregister
 * outside the lock), one in use goes when its last user puts it. */
static void drop(struct iser_mrc *c, struct iser_mrc_ent *e,
		 struct iser_mrc_ent **out)
{
	if (e->refs)
		return;
	lru_del(e);
	c->st.pinned_bytes -= e->end - e->start;
	e->next = *out;
	*out = e;
}

/* Evict idle entries, oldest first, until the bounds hold with `more`
 * bytes and one more entry to come. */
static void evict(struct iser_mrc *c, uint64_t more, bool slot,
		  struct iser_mrc_ent **out)
{
	while (c->lru.next != &c->lru &&
	       (c->st.pinned_bytes + more > c->max_pinned ||
		(slot && c->n >= c->cap))) {
		struct iser_mrc_ent *e = c->lru.next;
		uint32_t i;

		idx_overlap(c, e->start, e->start + 1, &i);
		idx_remove(c, i, 1);
		drop(c, e, out);
		c->st.evictions++;
	}
}

static void release(struct iser_mrc *c, struct iser_mrc_ent *list)
{
	while (list) {
		struct iser_mrc_ent *e = list;

		list = e->next;
		c->ops->dereg(c->arg, e->h);
		free(e);
	}
}

/* Free what the monitor dropped (it frees nothing itself). */
static void reap(struct iser_mrc *c)
{
	struct iser_mrc_ent *d;

	if (!c->caching)
		return;
	pthread_mutex_lock(&c->lock);
	d = c->dead;
	c->dead = NULL;
	pthread_mutex_unlock(&c->lock);
	release(c, d);
}

/* The monitor thread: [s, e) was unmapped, discarded or moved. */
static void invalidate(struct iser_uffd_client *m, uintptr_t s, uintptr_t e)
{
	struct iser_mrc *c = (struct iser_mrc *)(void *)((char *)m -
		offsetof(struct iser_mrc, mon));
	uint32_t i, k;

	pthread_mutex_lock(&c->lock);
	c->epoch++;
	k = idx_overlap(c, s, e, &i);
	for (uint32_t j = i; j < i + k; j++)
		drop(c, c->idx[j], &c->dead);
	idx_remove(c, i, k);
	c->st.invalidations += k;
	pthread_mutex_unlock(&c->lock);
}

struct iser_mrc *iser_mrc_new(const struct iser_mrc_ops *ops, void *arg,
			      uint64_t max_pinned, uint32_t max_entries)
{
	struct iser_mrc *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->cap = max_entries ? max_entries : 1;
	c->idx = calloc(c->cap, sizeof(c->idx[0]));
	if (!c->idx || pthread_mutex_init(&c->lock, NULL)) {
		free(c->idx);
		free(c);
		return NULL;
	}
	c->ops = ops;
	c->arg = arg;
	c->max_pinned = max_pinned;
	c->lru.next = c->lru.prev = &c->lru;
	c->mon.invalidate = invalidate;
	c->caching = max_pinned && iser_uffd_attach(&c->mon) == 0;
	return c;
}

bool iser_mrc_caching(const struct iser_mrc *c)
{
	return c->caching;
}

void iser_mrc_free(struct iser_mrc *c)
{
	struct iser_mrc_ent *list = NULL;

	if (!c)
		return;
	if (c->caching)
		iser_uffd_detach(&c->mon);
	reap(c);
	for (uint32_t i = 0; i < c->n; i++) {
		c->idx[i]->next = list;
		list = c->idx[i];
	}
	release(c, list);
	pthread_mutex_destroy(&c->lock);
	free(c->idx);
	free(c);
}

/* A registration of [s, e) for one use, not cached. */
static int get_uncached(struct iser_mrc *c, uintptr_t s, uintptr_t e,
			struct iser_mrc_ent **out)
{
	struct iser_mrc_ent *n = calloc(1, sizeof(*n));
	int r;

	if (!n)
		return -ENOMEM;
	r = c->ops->reg(c->arg, (void *)s, e - s, &n->h);
	if (r < 0) {
		free(n);
		return r;
	}
	n->start = s;
	n->end = e;
	n->refs = 1;
	pthread_mutex_lock(&c->lock);
	c->st.uncached++;
	pthread_mutex_unlock(&c->lock);
	*out = n;
	return 0;
}

/* Register [s, e); on failure drop every idle entry (their pinned pages
 * may be what the registrar ran out of) and try once more. */
static int reg_room(struct iser_mrc *c, uintptr_t s, uintptr_t e, void **h)
{
	struct iser_mrc_ent *victims = NULL;
	int r = c->ops->reg(c->arg, (void *)s, e - s, h);

	if (r >= 0)
		return r;
	pthread_mutex_lock(&c->lock);
	evict(c, c->max_pinned + 1, false, &victims);
	pthread_mutex_unlock(&c->lock);
	if (!victims)
		return r;
	release(c, victims);
	return c->ops->reg(c->arg, (void *)s, e - s, h);
}

/* lookup: a cached registration covering [s, e), taken for the caller (a
 * hit); or NULL, with the union of [s, e) and the cached ranges it
 * overlaps in *us and *ue and the epoch to register it under (a miss). */
static struct iser_mrc_ent *lookup(struct iser_mrc *c, uintptr_t s, uintptr_t e,
				   uintptr_t *us, uintptr_t *ue, uint64_t *epoch)
{
	struct iser_mrc_ent *n;
	uint32_t i, k;
	int64_t h;

	pthread_mutex_lock(&c->lock);
	h = idx_find(c, s);
	if (h >= 0 && c->idx[h]->end >= e) {
		n = c->idx[h];
		if (n->refs++ == 0)
			lru_del(n);
		c->st.hits++;
		pthread_mutex_unlock(&c->lock);
		return n;
	}
	c->st.misses++;
	*us = s;
	*ue = e;
	k = idx_overlap(c, s, e, &i);
	if (k) {
		if (c->idx[i]->start < *us)
			*us = c->idx[i]->start;
		if (c->idx[i + k - 1]->end > *ue)
			*ue = c->idx[i + k - 1]->end;
	}
	*epoch = c->epoch;
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* insert: the new registration n into the index in place of the entries it
 * covers; it serves this use only when the memory changed while it was
 * registered (since epoch) or entries in use fill the bounds. */
static void insert(struct iser_mrc *c, struct iser_mrc_ent *n, uint64_t epoch)
{
	struct iser_mrc_ent *victims = NULL;
	uintptr_t us = n->start, ue = n->end;
	uint32_t i, k;

	pthread_mutex_lock(&c->lock);
	if (c->epoch != epoch) {
		/* memory changed while we registered: the union may hold
		 * pages no longer the caller's; serve this use only */
		n->cached = false;
		c->st.uncached++;
		pthread_mutex_unlock(&c->lock);
		return;
	}
	/* what it covers leaves the index (found again: others may have
	 * inserted meanwhile) */
	k = idx_overlap(c, us, ue, &i);
	for (uint32_t j = i; j < i + k; j++)
		drop(c, c->idx[j], &victims);
	idx_remove(c, i, k);
	evict(c, ue - us, true, &victims);
	if (c->n >= c->cap || c->st.pinned_bytes + (ue - us) > c->max_pinned) {
		/* entries in use alone fill the bounds */
		n->cached = false;
		c->st.uncached++;
	} else {
		k = idx_overlap(c, us, ue, &i);
		memmove(&c->idx[i + 1], &c->idx[i],
			(c->n - i) * sizeof(c->idx[0]));
		c->idx[i] = n;
		c->n++;
		n->indexed = n->cached = true;
		c->st.pinned_bytes += ue - us;
	}
	pthread_mutex_unlock(&c->lock);
	release(c, victims);
}

int iser_mrc_get(struct iser_mrc *c, void *addr, size_t len,
		 struct iser_mrc_ent **out)
{
	uintptr_t s = (uintptr_t)addr, e = s + len, us = 0, ue = 0;
	struct iser_mrc_ent *n;
	uint64_t epoch = 0;
	int r;

	if (!c->caching || len == 0)
		return get_uncached(c, s, e, out);
	reap(c);
	iser_uffd_settle();
	n = lookup(c, s, e, &us, &ue, &epoch);
	if (n) {
		*out = n;
		return 0;
	}
	if (ue - us > c->max_pinned || iser_uffd_watch((void *)us, ue - us) < 0)
		return get_uncached(c, s, e, out);
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	r = reg_room(c, us, ue, &n->h);
	if (r < 0) {
		free(n);
		return r;
	}
	n->start = us;
	n->end = ue;
	n->refs = 1;
	insert(c, n, epoch);
	*out = n;
	return 0;
}

void iser_mrc_put(struct iser_mrc *c, struct iser_mrc_ent *e)
{
	struct iser_mrc_ent *victims = NULL;

	if (!e->cached) {
		e->next = NULL;
		release(c, e);
		return;
	}
	pthread_mutex_lock(&c->lock);
	if (--e->refs == 0) {
		if (e->indexed) {
			lru_add(c, e);
			/* in-use entries may have pushed it over the bound */
			evict(c, 0, false, &victims);
		} else {
			c->st.pinned_bytes -= e->end - e->start;
			e->next = victims;
			victims = e;
		}
	}
	pthread_mutex_unlock(&c->lock);
	release(c, victims);
	reap(c);
}

void iser_mrc_stats(struct iser_mrc *c, struct iser_mrc_stats *st)
{
	pthread_mutex_lock(&c->lock);
	*st = c->st;
	pthread_mutex_unlock(&c->lock);
}
