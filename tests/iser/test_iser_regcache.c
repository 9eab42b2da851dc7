/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The iSER registration cache in the soft-RoCE guest (suite 'rdma'): a
 * caller that makes a new idm_buf per command on the same memory (as the
 * libiscsi and tgt ports do) registers it once, and memory freed and
 * mapped again at the same address is registered anew: the data moved is
 * the new pages', never the old ones' (which a stale registration would
 * still pin and hand to the adapter).
 */
#include <check.h>
#include "check_suite.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "iser_pair.h"
#include "rdma_env.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define CAP (1024u * 1024u)
#define LEN (256u * 1024u)

static const char *ip;

static struct idm_conn_stats stats(idm_conn *c)
{
	struct idm_conn_stats st = {.size = sizeof(st)};

	ck_assert_int_eq(idm_conn_get_stats(c, &st), 0);
	return st;
}

/* One WRITE of mem and one READ into it through a buffer made for the
 * command and destroyed after it. */
static void io_new_buf(struct pair *p, uint8_t *mem, uint32_t seed)
{
	idm_buf *b;

	ck_assert_int_eq(idm_buf_create(p->ctx, mem, LEN, &b), 0);
	p->i_buf = b;
	p->i_buf_off = 0;
	p_pattern(mem, LEN, seed);
	ck_assert_msg(p_io(p, true, LEN, 60000) == 0, "%s", p->err);
	ck_assert_msg(memcmp(p->disk + P_GUARD, mem, LEN) == 0,
		      "WRITE seed %u: the disk holds other data", seed);
	memset(mem, 0, LEN);
	ck_assert_msg(p_io(p, false, LEN, 60000) == 0, "%s", p->err);
	ck_assert_msg(memcmp(p->disk + P_GUARD, mem, LEN) == 0,
		      "READ seed %u: other data read back", seed);
	p->i_buf = NULL;
	idm_buf_destroy(b);
}

START_TEST(new_buffer_per_command)
{
	struct idm_conn_stats s0, s1, s2;
	struct p_keys k;
	struct pair p;
	uint8_t *mem, *again;

	p_keys_default(&k);
	ck_assert_msg(p_init(&p, ip, CAP) == 0, "init: %s", p.err);
	ck_assert_msg(p_login(&p, &k, 10000) == 0, "login: %s", p.err);
	/* the pair's own buffers (disk, initiator memory) registered */
	ck_assert_msg(p_write_read_verify(&p, 4096, 1) == 0, "%s", p.err);
	s0 = stats(p.ic);
	if (s0.mr_cache_misses == 0) {
		/* plain MR STags (IDM_ISER_STAG=mr) or no userfaultfd:
		 * nothing is cached, say so rather than pass silently */
		ck_abort_msg("no registration cache on this device "
			     "(uncached %llu)",
			     (unsigned long long)s0.mr_cache_uncached);
	}
	mem = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(mem != MAP_FAILED);

	for (uint32_t i = 0; i < 3; i++)
		io_new_buf(&p, mem, 10 + i);
	s1 = stats(p.ic);
	/* three buffers, one registration */
	ck_assert_uint_eq(s1.mr_cache_misses - s0.mr_cache_misses, 1);
	ck_assert_uint_eq(s1.mr_cache_hits - s0.mr_cache_hits, 2);
	ck_assert_uint_eq(s1.mr_cache_uncached, s0.mr_cache_uncached);
	ck_assert_uint_ge(s1.mr_cache_pinned_bytes,
			  s0.mr_cache_pinned_bytes + LEN);
	/* the same figures through the target's connection: the device's */
	ck_assert_uint_eq(stats(p.tc).mr_cache_hits, s1.mr_cache_hits);

	/* freed, and new pages mapped at the same address: mem still
	 * holds seed 12's data in the old pages; the new ones seed 20's */
	ck_assert_int_eq(munmap(mem, LEN), 0);
	again = mmap(mem, LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ck_assert(again != MAP_FAILED);
	ck_assert_ptr_eq(again, mem);
	io_new_buf(&p, mem, 20);
	s2 = stats(p.ic);
	ck_assert_uint_ge(s2.mr_cache_invalidations - s1.mr_cache_invalidations,
			  1);
	ck_assert_uint_eq(s2.mr_cache_misses - s1.mr_cache_misses, 1);
	ck_assert_uint_eq(s2.mr_cache_hits, s1.mr_cache_hits);
	printf("regcache: hits %llu misses %llu evictions %llu "
	       "invalidations %llu uncached %llu pinned %llu\n",
	       (unsigned long long)s2.mr_cache_hits,
	       (unsigned long long)s2.mr_cache_misses,
	       (unsigned long long)s2.mr_cache_evictions,
	       (unsigned long long)s2.mr_cache_invalidations,
	       (unsigned long long)s2.mr_cache_uncached,
	       (unsigned long long)s2.mr_cache_pinned_bytes);

	ck_assert_int_eq(p.i_terminated + p.t_terminated, 0);
	p_close_conns(&p);
	p_fini(&p);
	munmap(mem, LEN);
}
END_TEST

/* us per 4 KiB READ with a buffer made and destroyed per command on the
 * same memory, on a pair whose provider read IDM_ISER_MR_CACHE_MB=mb.
 * Figures for the log, not judged (the guest's speed varies). */
static double per_cmd_us(const char *mb, uint64_t *misses)
{
	struct p_keys k;
	struct pair p;
	uint8_t *mem;
	double t0;
	int n = 200;

	setenv("IDM_ISER_MR_CACHE_MB", mb, 1);
	p_keys_default(&k);
	ck_assert_msg(p_init(&p, ip, CAP) == 0, "init: %s", p.err);
	ck_assert_msg(p_login(&p, &k, 10000) == 0, "login: %s", p.err);
	mem = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(mem != MAP_FAILED);
	t0 = p_now();
	for (int i = 0; i < n; i++) {
		idm_buf *b;

		ck_assert_int_eq(idm_buf_create(p.ctx, mem, LEN, &b), 0);
		p.i_buf = b;
		p.i_buf_off = 0;
		ck_assert_msg(p_io(&p, false, 4096, 60000) == 0, "%s", p.err);
		p.i_buf = NULL;
		idm_buf_destroy(b);
	}
	t0 = (p_now() - t0) * 1e6 / n;
	*misses = stats(p.ic).mr_cache_misses;
	p_close_conns(&p);
	p_fini(&p);
	munmap(mem, LEN);
	unsetenv("IDM_ISER_MR_CACHE_MB");
	return t0;
}

START_TEST(timing_with_and_without)
{
	uint64_t m_on, m_off;
	double on = per_cmd_us("256", &m_on), off = per_cmd_us("0", &m_off);

	/* the target's disk and the command memory, once each (the pair's
	 * own initiator buffer is never used here) */
	ck_assert_uint_eq(m_on, 2);
	ck_assert_uint_eq(m_off, 0);
	printf("regcache: 200 READs of 4 KiB, a new 256 KiB buffer each: "
	       "%.0f us per command cached, %.0f us with "
	       "IDM_ISER_MR_CACHE_MB=0\n", on, off);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { new_buffer_per_command,
				       timing_with_and_without, NULL };

	ip = rdma_test_ip();
	return test_suite_run_case("iser_regcache", "regcache", 300, tests);
}
