/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_mrcache.c: a registration cache of caller memory keyed by address
 * range, for one registrar (one device's PD). Verbs-free: registration is
 * done through struct iser_mrc_ops, so the logic is unit tested on any
 * host with a fake registrar. */
#ifndef IDM_ISER_MRCACHE_H
#define IDM_ISER_MRCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iser_uffd.h"

struct iser_mrc_ops {
	/* Register [addr, addr+len): 0 and *h (the registration), or
	 * -errno. Called without any lock of the cache's. */
	int (*reg)(void *arg, void *addr, size_t len, void **h);
	void (*dereg)(void *arg, void *h);
};

struct iser_mrc_stats {
	uint64_t hits;          /* lookups a cached registration covered */
	uint64_t misses;        /* lookups that registered */
	uint64_t evictions;     /* idle registrations dropped for the bound */
	uint64_t invalidations; /* dropped: their memory was unmapped */
	uint64_t uncached;      /* registered for one use only: not
				 * cacheable (memory not watchable, over the
				 * bound, no monitor) */
	uint64_t pinned_bytes;  /* bytes the cache holds registered now */
};

/* One registration: the caller's range lies in [start, end). */
struct iser_mrc_ent {
	uintptr_t start, end;
	void *h;
	uint32_t refs;
	bool indexed; /* a lookup can still find it */
	bool cached;  /* false: one use's own registration */
	struct iser_mrc_ent *prev, *next; /* idle LRU, or the dead list */
};

struct iser_mrc;

/* Defaults of the bounds (doc/iser.md, "Registration cache"). */
#define ISER_MRC_MAX_PINNED (256ull << 20)
#define ISER_MRC_MAX_ENTRIES 4096u

/* A cache registering through ops with arg, holding at most max_pinned
 * bytes and max_entries registrations. Without a userfaultfd monitor in
 * this process it caches nothing (every get registers, counted as
 * uncached). NULL when out of memory. */
struct iser_mrc *iser_mrc_new(const struct iser_mrc_ops *ops, void *arg,
			      uint64_t max_pinned, uint32_t max_entries);
/* Every registration goes: none may be in use. */
void iser_mrc_free(struct iser_mrc *c);
/* Whether the cache caches (a monitor watches its memory). */
bool iser_mrc_caching(const struct iser_mrc *c);
/* A registration covering [addr, addr+len), held until iser_mrc_put:
 * 0, or the registrar's -errno. */
int iser_mrc_get(struct iser_mrc *c, void *addr, size_t len,
		 struct iser_mrc_ent **e);
void iser_mrc_put(struct iser_mrc *c, struct iser_mrc_ent *e);
void iser_mrc_stats(struct iser_mrc *c, struct iser_mrc_stats *st);

#endif
