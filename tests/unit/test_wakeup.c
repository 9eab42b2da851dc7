/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm_ctx_wakeup(): a pass consumes it (wakeup_fn once, counted as an
 * event), wakeups coalesce, the context fd turns readable, threads
 * hammering it never leave an infinite wait asleep with their work
 * undrained, a signal handler may call it, and the progress thread runs
 * wakeup_fn. ThreadSanitizer runs this file (suite unit).
 */
#include "unit.h"
#include "core.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

static bool fd_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	return poll(&pfd, 1, timeout_ms) == 1 && (pfd.revents & POLLIN);
}

static atomic_int fn_calls;
static idm_ctx *fn_ctx_seen;
static void *fn_arg_seen;

static void count_fn(idm_ctx *ctx, void *arg)
{
	fn_ctx_seen = ctx;
	fn_arg_seen = arg;
	atomic_fetch_add(&fn_calls, 1);
}

static idm_ctx *wake_ctx(idm_ctx_wakeup_fn fn, void *arg)
{
	struct idm_ctx_attr attr = {
		.size = sizeof(attr),
		.log_level = -1,
		.wakeup_fn = fn,
		.wakeup_arg = arg,
	};
	idm_ctx *ctx = NULL;

	ck_assert_int_eq(idm_ctx_create(&attr, &ctx), 0);
	return ctx;
}

START_TEST(wakeup_consumed_once)
{
	int tag;
	idm_ctx *ctx = wake_ctx(count_fn, &tag);

	atomic_store(&fn_calls, 0);
	ck_assert_int_eq(idm_ctx_wakeup(NULL), -EINVAL);
	/* nobody asleep, fd not handed out: no eventfd write, and the
	 * next infinite wait does not sleep */
	ck_assert_int_eq(idm_ctx_wakeup(ctx), 0);
	ck_assert(!fd_readable(ctx->evfd, 0));
	ck_assert_int_eq(idm_ctx_progress(ctx, -1), 1);
	ck_assert_int_eq(atomic_load(&fn_calls), 1);
	ck_assert_ptr_eq(fn_ctx_seen, ctx);
	ck_assert_ptr_eq(fn_arg_seen, &tag);
	ck_assert_int_eq(idm_ctx_progress(ctx, 0), 0); /* consumed */

	/* many wakeups, one event */
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(idm_ctx_wakeup(ctx), 0);
	ck_assert_int_eq(idm_ctx_progress(ctx, -1), 1);
	ck_assert_int_eq(atomic_load(&fn_calls), 2);
	ck_assert_int_eq(idm_ctx_progress(ctx, 0), 0);

	/* the fd handed out: readable until a pass consumes the wakeup,
	 * once for many; errno is left as it was */
	int fd = idm_ctx_get_fd(ctx);
	ck_assert(!fd_readable(fd, 0));
	errno = 4242;
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(idm_ctx_wakeup(ctx), 0);
	ck_assert_int_eq(errno, 4242);
	ck_assert(fd_readable(fd, 0));
	ck_assert_int_ge(idm_ctx_progress(ctx, 0), 1);
	ck_assert_int_eq(atomic_load(&fn_calls), 3);
	ck_assert(!fd_readable(fd, 0));
	ck_assert_int_eq(idm_ctx_progress(ctx, 0), 0);
	idm_ctx_destroy(ctx);
}
END_TEST

/* A context made with a 1.2-sized attr has no wakeup_fn: a wakeup
 * still ends the wait. */
START_TEST(wakeup_without_fn)
{
	struct idm_ctx_attr attr = {
		.size = offsetof(struct idm_ctx_attr, domain) + sizeof(attr.domain),
		.log_level = -1,
		.wakeup_fn = count_fn, /* beyond size: not read */
	};
	idm_ctx *ctx = NULL;

	atomic_store(&fn_calls, 0);
	ck_assert_int_eq(idm_ctx_create(&attr, &ctx), 0);
	ck_assert_int_eq(idm_ctx_wakeup(ctx), 0);
	ck_assert_int_eq(idm_ctx_progress(ctx, -1), 1);
	ck_assert_int_eq(atomic_load(&fn_calls), 0);
	idm_ctx_destroy(ctx);
	ck_assert_int_eq(idm_ctx_create(NULL, &ctx), 0);
	ck_assert_int_eq(idm_ctx_wakeup(ctx), 0);
	ck_assert_int_eq(idm_ctx_progress(ctx, -1), 1);
	idm_ctx_destroy(ctx);
}
END_TEST

/*
 * The pattern of idm.h: threads push to a queue (here a counter) and
 * wake; the owner waits forever, then drains. Every push must be drained
 * by a pass that returned: a lost wakeup leaves the owner asleep with work
 * pending (the test's timeout). Half the pushers wait until the owner
 * announced its sleep, so both sides of the handshake are raced.
 */
#define HAMMER_THREADS 4
#define HAMMER_PUSHES 3000

static idm_ctx *g_hctx;
static atomic_long pushed;
static atomic_int hammer_err;

static void *hammer(void *arg)
{
	long id = (long)(intptr_t)arg;

	for (int i = 0; i < HAMMER_PUSHES; i++) {
		if ((id & 1) && (i & 7) == 0) {
			for (int spin = 0; spin < 1000 &&
			     atomic_load(&g_hctx->sleepers) == 0; spin++)
				sched_yield();
		}
		atomic_fetch_add(&pushed, 1);
		if (idm_ctx_wakeup(g_hctx) != 0)
			atomic_store(&hammer_err, 1);
	}
	return NULL;
}

static void run_hammer(bool poll_fd)
{
	pthread_t th[HAMMER_THREADS];
	const long total = (long)HAMMER_THREADS * HAMMER_PUSHES;
	long drained = 0;
	int passes = 0;

	atomic_store(&fn_calls, 0);
	atomic_store(&pushed, 0);
	g_hctx = wake_ctx(count_fn, NULL);
	atomic_store(&hammer_err, 0);
	if (poll_fd)
		(void)idm_ctx_get_fd(g_hctx);
	for (long i = 0; i < HAMMER_THREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, hammer, (void *)(intptr_t)i), 0);
	while (drained < total) {
		if (poll_fd) {
			/* a caller's own loop: sleep on the fd, forever */
			ck_assert(fd_readable(idm_ctx_get_fd(g_hctx), -1));
			ck_assert_int_ge(idm_ctx_progress(g_hctx, 0), 0);
		} else {
			ck_assert_int_ge(idm_ctx_progress(g_hctx, -1), 0);
		}
		drained = atomic_load(&pushed);
		passes++;
	}
	for (int i = 0; i < HAMMER_THREADS; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_eq(atomic_load(&hammer_err), 0);
	/* coalesced: at most one wakeup_fn per pass, one per push */
	ck_assert_int_le(atomic_load(&fn_calls), passes);
	ck_assert_int_ge(atomic_load(&fn_calls), 1);
	/* the last push's wakeup is consumed by the next pass at the latest */
	ck_assert_int_ge(idm_ctx_progress(g_hctx, 0), 0);
	ck_assert_int_eq(idm_ctx_progress(g_hctx, 0), 0);
	idm_ctx_destroy(g_hctx);
}

START_TEST(wakeup_hammer_infinite_wait)
{
	run_hammer(false);
}
END_TEST

START_TEST(wakeup_hammer_polled_fd)
{
	run_hammer(true);
}
END_TEST

/* From a signal handler, sent to the thread asleep in progress: the
 * wait ends (EINTR or the eventfd) and a pass runs wakeup_fn. */
static idm_ctx *g_sctx;
static pthread_t owner;

static void on_usr1(int sig)
{
	(void)sig;
	idm_ctx_wakeup(g_sctx);
}

static void *signaller(void *arg)
{
	(void)arg;
	while (atomic_load(&g_sctx->sleepers) == 0)
		sched_yield();
	pthread_kill(owner, SIGUSR1);
	return NULL;
}

START_TEST(wakeup_from_signal_handler)
{
	struct sigaction sa, old;
	pthread_t th;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, &old), 0);
	atomic_store(&fn_calls, 0);
	g_sctx = wake_ctx(count_fn, NULL);
	owner = pthread_self();
	ck_assert_int_eq(pthread_create(&th, NULL, signaller, NULL), 0);
	while (atomic_load(&fn_calls) == 0)
		ck_assert_int_ge(idm_ctx_progress(g_sctx, -1), 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(atomic_load(&fn_calls), 1);
	idm_ctx_destroy(g_sctx);
	sigaction(SIGUSR1, &old, NULL);
}
END_TEST

/* The progress thread runs wakeup_fn: a caller's queue drained there. */
static atomic_long thr_pushed, thr_drained;

static void drain_fn(idm_ctx *ctx, void *arg)
{
	(void)ctx;
	(void)arg;
	atomic_store(&thr_drained, atomic_load(&thr_pushed));
}

START_TEST(wakeup_progress_thread)
{
	struct idm_ctx_attr attr = {
		.size = sizeof(attr),
		.flags = IDM_CTX_PROGRESS_THREAD,
		.log_level = -1,
		.wakeup_fn = drain_fn,
	};
	idm_ctx *ctx = NULL;

	atomic_store(&thr_pushed, 0);
	atomic_store(&thr_drained, 0);
	ck_assert_int_eq(idm_ctx_create(&attr, &ctx), 0);
	for (long i = 1; i <= 200; i++) {
		atomic_store(&thr_pushed, i);
		ck_assert_int_eq(idm_ctx_wakeup(ctx), 0);
		/* bounded by the test's timeout, not a sleep */
		while (atomic_load(&thr_drained) < i)
			sched_yield();
	}
	idm_ctx_destroy(ctx);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { wakeup_consumed_once,
				       wakeup_without_fn,
				       wakeup_hammer_infinite_wait,
				       wakeup_hammer_polled_fd,
				       wakeup_from_signal_handler,
				       wakeup_progress_thread,
				       NULL };

	return test_suite_run_case("wakeup", "wakeup", 0, tests);
}
