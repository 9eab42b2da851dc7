/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of the iSER registration cache (providers/iser/iser_mrcache.c)
 * with a fake registrar, on any host: hits and sub-range hits register
 * nothing, overlapping ranges merge, idle registrations are evicted at
 * the bounds, and memory unmapped (or discarded, or moved) and mapped
 * again at the same address is registered anew, never served by the
 * registration of the old pages.
 */

#include <check.h>
#include "check_suite.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "iser_mrcache.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* What the fake registrar saw: the range and the first byte its pages
 * held then, which tells old pages from new ones. */
struct fake_mr {
	uintptr_t addr;
	size_t len;
	char seen;
};

static _Atomic unsigned regs, deregs;

static int fake_reg(void *arg, void *addr, size_t len, void **h)
{
	struct fake_mr *m = malloc(sizeof(*m));

	(void)arg;
	if (!m)
		return -ENOMEM;
	*m = (struct fake_mr){(uintptr_t)addr, len, *(char *)addr};
	*h = m;
	regs++;
	return 0;
}

static void fake_dereg(void *arg, void *h)
{
	(void)arg;
	free(h);
	deregs++;
}

static const struct iser_mrc_ops fake_ops = {fake_reg, fake_dereg};

static size_t pg;

static struct iser_mrc *cache(uint64_t max_pinned, uint32_t max_entries)
{
	struct iser_mrc *c = iser_mrc_new(&fake_ops, NULL, max_pinned,
					  max_entries);

	ck_assert_ptr_nonnull(c);
	ck_assert(iser_mrc_caching(c));
	regs = deregs = 0;
	return c;
}

/* map(NULL, ...): new memory anywhere. map(at, ...): new pages at `at`,
 * replacing what is mapped there with MAP_FIXED, which unmaps the old
 * pages (the kernel reports it as an unmap) and maps new ones in one
 * call: a munmap() first would leave a hole that another thread (a
 * sanitizer's runtime starting the cache's monitor thread, say) may map
 * into before the test does. */
static char *map(void *at, size_t len, char fill)
{
	char *p = mmap(at, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);

	ck_assert(p != MAP_FAILED);
	if (at)
		ck_assert_ptr_eq(p, at);
	memset(p, fill, len);
	return p;
}

static struct iser_mrc_ent *get(struct iser_mrc *c, void *a, size_t len)
{
	struct iser_mrc_ent *e;

	ck_assert_int_eq(iser_mrc_get(c, a, len, &e), 0);
	ck_assert_uint_le(e->start, (uintptr_t)a);
	ck_assert_uint_ge(e->end, (uintptr_t)a + len);
	return e;
}

static struct iser_mrc_stats stats(struct iser_mrc *c)
{
	struct iser_mrc_stats st;

	iser_mrc_stats(c, &st);
	return st;
}

START_TEST(hit_and_subrange)
{
	struct iser_mrc *c = cache(1 << 20, 16);
	char *p = map(NULL, 16 * pg, 'a');
	struct iser_mrc_ent *e, *f;

	e = get(c, p + 100, 8 * pg);
	iser_mrc_put(c, e);
	ck_assert_uint_eq(regs, 1);
	/* the second command on the same memory registers nothing */
	f = get(c, p + 100, 8 * pg);
	ck_assert_ptr_eq(f, e);
	/* nor does any part of it, even while the first is in use */
	e = get(c, p + pg, 512);
	ck_assert_ptr_eq(f, e);
	iser_mrc_put(c, f);
	iser_mrc_put(c, e);
	ck_assert_uint_eq(regs, 1);
	ck_assert_uint_eq(stats(c).hits, 2);
	ck_assert_uint_eq(stats(c).misses, 1);
	ck_assert_uint_eq(stats(c).pinned_bytes, 8 * pg);
	/* a range reaching past it merges with it */
	e = get(c, p + 4 * pg, 8 * pg);
	ck_assert_uint_eq(regs, 2);
	ck_assert_uint_eq(e->start, (uintptr_t)p + 100);
	ck_assert_uint_eq(e->end, (uintptr_t)p + 12 * pg);
	iser_mrc_put(c, e);
	ck_assert_uint_eq(deregs, 1); /* the old one, idle, went */
	ck_assert_uint_eq(stats(c).pinned_bytes, 12 * pg - 100);
	f = get(c, p + 200, 10 * pg);
	ck_assert_ptr_eq(f, e);
	iser_mrc_put(c, f);
	ck_assert_uint_eq(regs, 2);
	iser_mrc_free(c);
	ck_assert_uint_eq(deregs, 2);
	munmap(p, 16 * pg);
}
END_TEST

START_TEST(evict_at_bound)
{
	struct iser_mrc *c = cache(3 * 4 * pg, 16);
	char *p = map(NULL, 32 * pg, 'b');
	struct iser_mrc_ent *e[4], *big;

	for (int i = 0; i < 4; i++) {
		e[i] = get(c, p + (size_t)i * 8 * pg, 4 * pg);
		iser_mrc_put(c, e[i]);
	}
	/* the fourth pushed the least recently used idle one out */
	ck_assert_uint_eq(regs, 4);
	ck_assert_uint_eq(deregs, 1);
	ck_assert_uint_eq(stats(c).evictions, 1);
	ck_assert_uint_eq(stats(c).pinned_bytes, 3 * 4 * pg);
	e[1] = get(c, p + 8 * pg, 4 * pg); /* still there: a hit */
	ck_assert_uint_eq(regs, 4);
	e[0] = get(c, p, 4 * pg);          /* evicted: registered again */
	ck_assert_uint_eq(regs, 5);
	ck_assert_uint_eq(stats(c).evictions, 2); /* [2] was the oldest idle */
	ck_assert_uint_le(stats(c).pinned_bytes, 3 * 4 * pg);
	/* what entries in use leave no room for serves its one use only */
	e[2] = get(c, p + 16 * pg, 4 * pg);
	e[3] = get(c, p + 24 * pg, 4 * pg);
	ck_assert_uint_eq(stats(c).uncached, 1);
	ck_assert_uint_le(stats(c).pinned_bytes, 3 * 4 * pg);
	big = get(c, p, 32 * pg); /* larger than the bound itself */
	ck_assert_uint_eq(stats(c).uncached, 2);
	iser_mrc_put(c, big);
	for (int i = 0; i < 4; i++)
		iser_mrc_put(c, e[i]);
	ck_assert_uint_eq(regs - deregs, 3);
	ck_assert_uint_le(stats(c).pinned_bytes, 3 * 4 * pg);
	iser_mrc_free(c);
	ck_assert_uint_eq(regs, deregs);
	munmap(p, 32 * pg);
}
END_TEST

START_TEST(entry_bound)
{
	struct iser_mrc *c = cache(1 << 30, 2);
	char *p = map(NULL, 8 * pg, 'c');
	struct iser_mrc_ent *e;

	for (int i = 0; i < 4; i++) {
		e = get(c, p + (size_t)i * 2 * pg, pg);
		iser_mrc_put(c, e);
	}
	ck_assert_uint_eq(stats(c).evictions, 2);
	ck_assert_uint_eq(regs - deregs, 2);
	iser_mrc_free(c);
	munmap(p, 8 * pg);
}
END_TEST

/* Freed memory and new pages at the same address: the cache must miss
 * and register the new pages. */
START_TEST(unmap_remap_same_address)
{
	struct iser_mrc *c = cache(1 << 20, 16);
	char *p = map(NULL, 4 * pg, 'o');
	struct iser_mrc_ent *e, *held;

	e = get(c, p, 4 * pg);
	ck_assert_int_eq(((struct fake_mr *)e->h)->seen, 'o');
	iser_mrc_put(c, e);
	ck_assert_ptr_eq(map(p, 4 * pg, 'n'), p);
	e = get(c, p, 4 * pg);
	ck_assert_uint_eq(regs, 2);
	ck_assert_int_eq(((struct fake_mr *)e->h)->seen, 'n');
	ck_assert_uint_eq(stats(c).invalidations, 1);
	ck_assert_uint_eq(stats(c).hits, 0);

	/* unmapped while a user still holds it: that user keeps its
	 * registration, no one else finds it */
	held = e;
	ck_assert_ptr_eq(map(p, 4 * pg, 'm'), p);
	e = get(c, p + pg, pg);
	ck_assert_ptr_ne(e, held);
	ck_assert_int_eq(((struct fake_mr *)e->h)->seen, 'm');
	iser_mrc_put(c, held);
	iser_mrc_put(c, e);
	ck_assert_uint_eq(stats(c).pinned_bytes, pg);

	/* pages discarded (madvise) read as new zero pages: missed too */
	e = get(c, p, 4 * pg);
	iser_mrc_put(c, e);
	ck_assert_int_eq(madvise(p, pg, MADV_DONTNEED), 0);
	e = get(c, p, 4 * pg);
	ck_assert_int_eq(((struct fake_mr *)e->h)->seen, 0);
	iser_mrc_put(c, e);

	/* moved away (mremap), and something else mapped where it was */
	e = get(c, p, 4 * pg);
	iser_mrc_put(c, e);
	{
		char *q = map(NULL, 4 * pg, 'x');
		char *r = mremap(p, 4 * pg, 4 * pg,
				 MREMAP_MAYMOVE | MREMAP_FIXED |
					 MREMAP_DONTUNMAP, q);

		ck_assert_ptr_eq(r, q);
		ck_assert_ptr_eq(map(p, 4 * pg, 'z'), p);
		e = get(c, p, 4 * pg);
		ck_assert_int_eq(((struct fake_mr *)e->h)->seen, 'z');
		iser_mrc_put(c, e);
		munmap(q, 4 * pg);
	}
	ck_assert_uint_eq(stats(c).hits, 1); /* the get before the move */
	iser_mrc_free(c);
	ck_assert_uint_eq(regs, deregs);
	munmap(p, 4 * pg);
}
END_TEST

/* Memory the monitor cannot watch (shared and file mappings: their
 * pages can change without an unmap here) is registered per use, never
 * cached. */
START_TEST(unwatchable_not_cached)
{
	struct iser_mrc *c = cache(1 << 20, 16);
	char *p = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct iser_mrc_ent *e;

	ck_assert(p != MAP_FAILED);
	for (int i = 0; i < 2; i++) {
		e = get(c, p, 4 * pg);
		iser_mrc_put(c, e);
	}
	ck_assert_uint_eq(regs, 2);
	ck_assert_uint_eq(deregs, 2);
	ck_assert_uint_eq(stats(c).uncached, 2);
	ck_assert_uint_eq(stats(c).pinned_bytes, 0);
	munmap(p, 4 * pg);
	/* a private file mapping: not anonymous either */
	{
		FILE *f = tmpfile();

		ck_assert_ptr_nonnull(f);
		ck_assert_int_eq(ftruncate(fileno(f), (off_t)(4 * pg)), 0);
		p = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE,
			 fileno(f), 0);
		ck_assert(p != MAP_FAILED);
		e = get(c, p, 4 * pg);
		iser_mrc_put(c, e);
		ck_assert_uint_eq(stats(c).uncached, 3);
		munmap(p, 4 * pg);
		fclose(f);
	}
	/* one range across an anonymous and a shared mapping: neither */
	p = map(NULL, 2 * pg, 'q');
	ck_assert(mmap(p + pg, pg, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED);
	e = get(c, p, 2 * pg);
	iser_mrc_put(c, e);
	ck_assert_uint_eq(stats(c).uncached, 4);
	iser_mrc_free(c);
	ck_assert_uint_eq(regs, deregs);
	munmap(p, 2 * pg);
}
END_TEST

/* Users on other threads while memory is unmapped and mapped again
 * under them: after each remap, a lookup must see the new pages; no
 * deadlock with the monitor; every registration goes in the end. */
struct churn {
	struct iser_mrc *c;
	char *p;
	atomic_bool stop;
};

struct churn_user_arg {
	struct churn *ch;
	unsigned seed;
};

static void *churn_user(void *arg)
{
	struct churn *ch = ((struct churn_user_arg *)arg)->ch;
	unsigned seed = ((struct churn_user_arg *)arg)->seed;

	while (!atomic_load(&ch->stop)) {
		/* pages 8..63: the main thread remaps pages 0..7 */
		size_t off = (8 + rand_r(&seed) % 48) * pg + rand_r(&seed) % pg;
		size_t len = 1 + rand_r(&seed) % (4 * pg);
		struct iser_mrc_ent *e;

		if (iser_mrc_get(ch->c, ch->p + off, len, &e) == 0)
			iser_mrc_put(ch->c, e);
	}
	return NULL;
}

START_TEST(concurrent_users_and_remaps)
{
	struct churn ch = {.c = cache(32 * pg, 64)};
	struct churn_user_arg a[3];
	pthread_t t[3];

	ch.p = map(NULL, 64 * pg, 'u');
	for (int i = 0; i < 3; i++) {
		a[i] = (struct churn_user_arg){&ch, (unsigned)i + 1};
		ck_assert_int_eq(pthread_create(&t[i], NULL, churn_user, &a[i]), 0);
	}
	for (int g = 0; g < 200; g++) {
		struct iser_mrc_ent *e;
		char fill = (char)('A' + g % 26);

		ck_assert_ptr_eq(map(ch.p, 8 * pg, fill), ch.p);
		e = get(ch.c, ch.p + pg, 4 * pg);
		ck_assert_int_eq(((struct fake_mr *)e->h)->seen, fill);
		iser_mrc_put(ch.c, e);
	}
	atomic_store(&ch.stop, true);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	/* (an entry the users' churn evicted first needs no invalidation) */
	ck_assert_uint_gt(stats(ch.c).invalidations, 0);
	ck_assert_uint_le(stats(ch.c).pinned_bytes, 32 * pg);
	iser_mrc_free(ch.c);
	ck_assert_uint_eq(regs, deregs);
	munmap(ch.p, 64 * pg);
}
END_TEST

/* A bound of 0 turns the cache off: every use registers. */
START_TEST(disabled)
{
	struct iser_mrc *c = iser_mrc_new(&fake_ops, NULL, 0, 16);
	char *p = map(NULL, pg, 'd');
	struct iser_mrc_ent *e;

	ck_assert(!iser_mrc_caching(c));
	regs = deregs = 0;
	for (int i = 0; i < 2; i++) {
		e = get(c, p, pg);
		iser_mrc_put(c, e);
	}
	ck_assert_uint_eq(regs, 2);
	ck_assert_uint_eq(deregs, 2);
	iser_mrc_free(c);
	munmap(p, pg);
}
END_TEST

/* The monitor lives only while a cache does: the last cache freed leaves
 * no descriptor (nor thread) behind, and a new cache starts it again. */
static int open_fds(void)
{
	char path[64];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += access(path, F_OK) == 0;
	}
	return n;
}

START_TEST(monitor_ends_with_last_cache)
{
	int before = open_fds();
	struct iser_mrc *a = cache(1 << 20, 16), *b = cache(1 << 20, 16);
	struct iser_mrc_ent *e;
	char *p = map(NULL, pg, 'a');

	ck_assert_int_gt(open_fds(), before);
	ck_assert_int_eq(iser_mrc_get(a, p, pg, &e), 0);
	iser_mrc_put(a, e);
	iser_mrc_free(a);
	ck_assert_int_gt(open_fds(), before); /* b still uses it */
	iser_mrc_free(b);
	ck_assert_int_eq(open_fds(), before);
	/* started again, and still told of an unmap */
	a = cache(1 << 20, 16);
	ck_assert_int_eq(iser_mrc_get(a, p, pg, &e), 0);
	iser_mrc_put(a, e);
	p = map(p, pg, 'b');
	ck_assert_int_eq(iser_mrc_get(a, p, pg, &e), 0);
	ck_assert_uint_eq(regs, 2);
	iser_mrc_put(a, e);
	iser_mrc_free(a);
	ck_assert_int_eq(open_fds(), before);
	munmap(p, pg);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { hit_and_subrange, evict_at_bound,
				       entry_bound, unmap_remap_same_address,
				       unwatchable_not_cached,
				       concurrent_users_and_remaps, disabled,
				       monitor_ends_with_last_cache,
				       NULL };
	long fd;

	pg = (size_t)sysconf(_SC_PAGESIZE);
	/* the kernel feature the cache rests on; a host (or a container's
	 * seccomp policy) without it cannot run these */
	fd = syscall(SYS_userfaultfd, O_CLOEXEC | 1 /* USER_MODE_ONLY */);
	if (fd < 0) {
		printf("SKIP: userfaultfd unavailable here (%s): the cache "
		       "would register per use\n", strerror(errno));
		return 77;
	}
	close((int)fd);
	return test_suite_run_case("iser_mrcache", "pure", 0, tests);
}
