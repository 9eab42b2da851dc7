/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The context: creation arguments, the pollable fd, idm_ctx_progress() and
 * deferred work, the opt-in progress thread, logging, and destruction with
 * objects still open.
 */
#include "unit.h"
#include "core.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

static bool fd_readable(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

START_TEST(create_arguments)
{
	struct idm_ctx_attr attr = {.size = sizeof(attr), .log_level = -1};
	idm_ctx *ctx = (idm_ctx *)&attr;

	ck_assert_int_eq(idm_ctx_create(NULL, NULL), -EINVAL);
	ck_assert_int_eq(idm_ctx_create(&attr, NULL), -EINVAL);
	attr.size = 4; /* older than any released struct */
	ck_assert_int_eq(idm_ctx_create(&attr, &ctx), -EINVAL);
	ck_assert_ptr_null(ctx);
	attr.size = sizeof(attr);
	attr.flags = 1u << 31; /* unknown flag */
	ck_assert_int_eq(idm_ctx_create(&attr, &ctx), -EINVAL);
	attr.flags = 0;
	ck_assert_int_eq(idm_ctx_create(&attr, &ctx), 0);
	idm_ctx_destroy(ctx);
	ck_assert_int_eq(idm_ctx_create(NULL, &ctx), 0);
	ck_assert_int_ge(idm_ctx_get_fd(ctx), 0);
	idm_ctx_destroy(ctx);
	idm_ctx_destroy(NULL);
}
END_TEST

static int order[8], n_order;
static idm_ctx *g_ctx;
static struct idm_prov_defer d1, d2, d3;

static void run1(struct idm_prov_defer *d)
{
	(void)d;
	order[n_order++] = 1;
}

static void run3(struct idm_prov_defer *d)
{
	(void)d;
	order[n_order++] = 3;
}

static void run2(struct idm_prov_defer *d)
{
	(void)d;
	order[n_order++] = 2;
	/* queued from a deferred item: runs in the next pass, not this one */
	idm_prov_defer(g_ctx, &d3, run3);
}

START_TEST(defer_and_fd)
{
	idm_ctx *ctx = unit_ctx();
	int fd = idm_ctx_get_fd(ctx);

	g_ctx = ctx;
	ck_assert_int_ge(fd, 0);
	ck_assert(!fd_readable(fd));
	ck_assert_int_eq(idm_ctx_progress(ctx, 0), 0);

	idm_prov_defer(ctx, &d1, run1);
	idm_prov_defer(ctx, &d2, run2);
	idm_prov_defer(ctx, &d1, run1); /* already queued: no-op */
	ck_assert_int_eq(n_order, 0); /* never inside the call */
	ck_assert(fd_readable(fd));

	ck_assert_int_ge(idm_ctx_progress(ctx, 0), 2);
	ck_assert_int_eq(n_order, 2);
	ck_assert_int_eq(order[0], 1);
	ck_assert_int_eq(order[1], 2);
	ck_assert(fd_readable(fd)); /* d3 waits */
	ck_assert_int_ge(idm_ctx_progress(ctx, 0), 1);
	ck_assert_int_eq(n_order, 3);
	ck_assert_int_eq(order[2], 3);

	/* a cancelled item never runs */
	idm_prov_defer(ctx, &d1, run1);
	idm_prov_defer(ctx, &d2, run1);
	idm_prov_defer_cancel(ctx, &d1);
	idm_prov_defer_cancel(ctx, &d1); /* twice is harmless */
	ck_assert_int_ge(idm_ctx_progress(ctx, 0), 1);
	ck_assert_int_eq(n_order, 4);
	ck_assert_int_eq(idm_ctx_progress(ctx, 0), 0);
	ck_assert_int_eq(n_order, 4);
	ck_assert(!fd_readable(fd));
	idm_ctx_destroy(ctx);
}
END_TEST

/* idm_prov_defer() from threads of a provider's own while the progress
 * pass runs: each thread requeues its item as soon as it ran, so every
 * queueing must run exactly once; a lost or doubly linked item (an
 * unlocked queue) hangs or miscounts. */
#define DEFER_THREADS 4
#define DEFER_ROUNDS 2000

struct defer_worker {
	struct idm_prov_defer d;
	atomic_int ran;
	pthread_t th;
};

static idm_ctx *g_defer_ctx;

static void worker_item(struct idm_prov_defer *d)
{
	struct defer_worker *w = IDM_PROV_CONTAINER_OF(d, struct defer_worker, d);

	atomic_fetch_add(&w->ran, 1);
}

static void *defer_thread(void *arg)
{
	struct defer_worker *w = arg;

	for (int i = 0; i < DEFER_ROUNDS; i++) {
		idm_prov_defer(g_defer_ctx, &w->d, worker_item);
		while (atomic_load(&w->ran) <= i)
			sched_yield();
	}
	return NULL;
}

START_TEST(defer_from_other_threads)
{
	struct defer_worker w[DEFER_THREADS];
	idm_ctx *ctx = unit_ctx();
	int total;

	memset(w, 0, sizeof(w));
	g_defer_ctx = ctx;
	for (int i = 0; i < DEFER_THREADS; i++)
		ck_assert_int_eq(pthread_create(&w[i].th, NULL, defer_thread, &w[i]), 0);
	do {
		/* sleeps in epoll: only the threads' eventfd kick wakes it */
		ck_assert_int_ge(idm_ctx_progress(ctx, 1000), 0);
		total = 0;
		for (int i = 0; i < DEFER_THREADS; i++)
			total += atomic_load(&w[i].ran);
	} while (total < DEFER_THREADS * DEFER_ROUNDS);
	for (int i = 0; i < DEFER_THREADS; i++) {
		pthread_join(w[i].th, NULL);
		ck_assert_int_eq(atomic_load(&w[i].ran), DEFER_ROUNDS);
		ck_assert(!w[i].d.queued);
	}
	ck_assert_int_eq(idm_ctx_progress(ctx, 0), 0);
	idm_ctx_destroy(ctx);
}
END_TEST

/* A deferral from another thread while the loop sleeps in epoll_wait
 * with no timeout must wake it (lib/progress.c "Wakeups"). Half the rounds
 * wait until the loop announced its sleep, half race its announcement. */
#define WAKE_ROUNDS 400

static idm_ctx *g_wake_ctx;
static struct idm_prov_defer wake_d;
static atomic_int wake_ran, wake_round;

static void wake_item(struct idm_prov_defer *d)
{
	(void)d;
	atomic_fetch_add(&wake_ran, 1);
}

static void *wake_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < WAKE_ROUNDS; i++) {
		while (atomic_load(&wake_round) <= i)
			sched_yield();
		if (i & 1)
			while (atomic_load(&g_wake_ctx->sleepers) == 0)
				sched_yield();
		idm_prov_defer(g_wake_ctx, &wake_d, wake_item);
	}
	return NULL;
}

START_TEST(defer_wakes_infinite_wait)
{
	idm_ctx *ctx = unit_ctx();
	pthread_t th;

	g_wake_ctx = ctx;
	atomic_store(&wake_ran, 0);
	atomic_store(&wake_round, 0);
	ck_assert_int_eq(pthread_create(&th, NULL, wake_thread, NULL), 0);
	for (int i = 0; i < WAKE_ROUNDS; i++) {
		atomic_store(&wake_round, i + 1);
		/* -1: only the other thread's deferral can end this wait (a
		 * lost wakeup hangs until the test's timeout) */
		while (atomic_load(&wake_ran) <= i)
			ck_assert_int_ge(idm_ctx_progress(ctx, -1), 0);
	}
	pthread_join(th, NULL);
	ck_assert_int_eq(atomic_load(&wake_ran), WAKE_ROUNDS);
	idm_ctx_destroy(ctx);
}
END_TEST

/* Queueing with nobody asleep and the fd never handed out costs no
 * eventfd write; the next progress call still runs the item at once
 * instead of sleeping. Queueing from inside a pass never writes it. */
static int self_rounds;
static struct idm_prov_defer self_d;

static void self_requeue(struct idm_prov_defer *d)
{
	(void)d;
	if (++self_rounds < 3)
		idm_prov_defer(g_ctx, &self_d, self_requeue);
}

START_TEST(defer_without_waiter_writes_no_eventfd)
{
	idm_ctx *ctx = unit_ctx();

	g_ctx = ctx;
	n_order = 0;
	idm_prov_defer(ctx, &d1, run1);
	ck_assert(!fd_readable(ctx->evfd));
	ck_assert_int_eq(idm_ctx_progress(ctx, -1), 1); /* does not sleep */
	ck_assert_int_eq(n_order, 1);

	self_rounds = 0;
	idm_prov_defer(ctx, &self_d, self_requeue);
	while (self_rounds < 3) {
		ck_assert_int_eq(idm_ctx_progress(ctx, -1), 1);
		ck_assert(!fd_readable(ctx->evfd));
	}
	ck_assert_int_eq(idm_ctx_progress(ctx, 0), 0);

	/* once the fd is handed out, a caller may poll it: work queued
	 * before (written nowhere yet) and after must make it readable */
	idm_prov_defer(ctx, &d1, run1);
	ck_assert(fd_readable(idm_ctx_get_fd(ctx)));
	ck_assert_int_ge(idm_ctx_progress(ctx, 0), 1);
	ck_assert_int_eq(n_order, 2);
	ck_assert(!fd_readable(idm_ctx_get_fd(ctx)));
	idm_prov_defer(ctx, &d1, run1);
	ck_assert(fd_readable(idm_ctx_get_fd(ctx)));
	ck_assert_int_ge(idm_ctx_progress(ctx, 0), 1);
	ck_assert_int_eq(n_order, 3);
	ck_assert(!fd_readable(idm_ctx_get_fd(ctx)));
	idm_ctx_destroy(ctx);
}
END_TEST

/* An item that requeues itself forever must not starve the fds: a pass
 * may skip its epoll_wait after a pass that polled, never twice. */
static int spin_runs, pipe_hits;
static struct idm_prov_defer spin_d;

static void spin_item(struct idm_prov_defer *d)
{
	(void)d;
	spin_runs++;
	idm_prov_defer(g_ctx, &spin_d, spin_item);
}

static void pipe_ready(struct idm_prov_watch *w, uint32_t revents)
{
	(void)w;
	(void)revents;
	pipe_hits++; /* left readable: level-triggered, fires every poll */
}

START_TEST(requeueing_item_does_not_starve_fds)
{
	idm_ctx *ctx = unit_ctx();
	struct idm_prov_watch w;
	int p[2];

	g_ctx = ctx;
	spin_runs = pipe_hits = 0;
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	ck_assert_int_eq(idm_prov_watch_add(ctx, &w, p[0], EPOLLIN, pipe_ready), 0);
	idm_prov_defer(ctx, &spin_d, spin_item);
	for (int i = 0; i < 20; i++)
		ck_assert_int_ge(idm_ctx_progress(ctx, -1), 1);
	ck_assert_int_eq(spin_runs, 20);
	ck_assert_int_ge(pipe_hits, 10);
	idm_prov_defer_cancel(ctx, &spin_d);
	idm_prov_watch_del(ctx, &w);
	close(p[0]);
	close(p[1]);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(progress_waits_for_timeout)
{
	idm_ctx *ctx = unit_ctx();
	struct timespec a, b;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &a);
	ck_assert_int_eq(idm_ctx_progress(ctx, 60), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	ck_assert_int_ge(ms, 50);
	ck_assert_int_lt(ms, 5000);
	ck_assert_int_eq(idm_ctx_progress(NULL, 0), -EINVAL);
	idm_ctx_destroy(ctx);
}
END_TEST

static int nested_rc = 1;

static void nested(struct idm_prov_defer *d)
{
	(void)d;
	nested_rc = idm_ctx_progress(g_ctx, 0);
}

START_TEST(progress_from_callback_refused)
{
	idm_ctx *ctx = unit_ctx();

	g_ctx = ctx;
	idm_prov_defer(ctx, &d1, nested);
	ck_assert_int_ge(idm_ctx_progress(ctx, 0), 1);
	ck_assert_int_eq(nested_rc, -EDEADLK);
	idm_ctx_destroy(ctx);
}
END_TEST

/*
 * A callback of context A may run context B's progress to completion
 * (since 1.3), but never the progress of a context whose pass the thread
 * is inside: B's callback asking for A's or B's gets -EDEADLK. A watch
 * of A that B's callback removes is cleared from A's pending batch.
 */
static idm_ctx *nest_a, *nest_b;
static struct idm_prov_defer nest_da, nest_db;
static struct idm_prov_watch nest_w[2];
static int nest_pipes[2][2];
static int nest_hits, nest_inner_a, nest_inner_b, nest_outer_b, nest_b_runs;

static void nest_b_item(struct idm_prov_defer *d)
{
	(void)d;
	nest_b_runs++;
	nest_inner_a = idm_ctx_progress(nest_a, 0);
	nest_inner_b = idm_ctx_progress(nest_b, 0);
	/* both of A's watches were readable: whichever is not running
	 * goes, and A's pass must not call it */
	for (int i = 0; i < 2; i++)
		idm_prov_watch_del(nest_a, &nest_w[i]);
}

static void nest_watch(struct idm_prov_watch *w, uint32_t revents)
{
	(void)w;
	(void)revents;
	nest_hits++;
	idm_prov_defer(nest_b, &nest_db, nest_b_item);
	/* B's item runs inside this call, on this thread */
	nest_outer_b = idm_ctx_progress(nest_b, -1);
}

static int nest_c_runs;

static void nest_c_item(struct idm_prov_defer *d)
{
	(void)d;
	nest_c_runs++;
}

static void nest_a_item(struct idm_prov_defer *d)
{
	static struct idm_prov_defer dc;
	idm_ctx *c = NULL;

	(void)d;
	nest_outer_b = idm_ctx_progress(nest_b, -1);
	/* a context made, driven and destroyed inside A's callback */
	ck_assert_int_eq(idm_ctx_create(NULL, &c), 0);
	idm_prov_defer(c, &dc, nest_c_item);
	ck_assert_int_eq(idm_ctx_progress(c, -1), 1);
	idm_ctx_destroy(c);
}

START_TEST(progress_of_another_context_from_callback)
{
	nest_a = unit_ctx();
	nest_b = unit_ctx();
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(pipe(nest_pipes[i]), 0);
		ck_assert_int_eq(write(nest_pipes[i][1], "x", 1), 1);
		ck_assert_int_eq(idm_prov_watch_add(nest_a, &nest_w[i], nest_pipes[i][0],
						    EPOLLIN, nest_watch), 0);
	}
	nest_hits = nest_b_runs = nest_c_runs = 0;
	nest_inner_a = nest_inner_b = nest_outer_b = 1;
	ck_assert_int_ge(idm_ctx_progress(nest_a, -1), 1);
	ck_assert_int_eq(nest_hits, 1);
	ck_assert_int_eq(nest_b_runs, 1);
	ck_assert_int_eq(nest_outer_b, 1); /* B's pass ran its item */
	ck_assert_int_eq(nest_inner_a, -EDEADLK);
	ck_assert_int_eq(nest_inner_b, -EDEADLK);
	ck_assert_int_eq(idm_ctx_progress(nest_a, 0), 0);

	/* from a deferred item of A too; A's own progress stays refused
	 * inside and works again after */
	nest_outer_b = 1;
	idm_prov_defer(nest_b, &nest_db, nest_b_item);
	idm_prov_defer(nest_a, &nest_da, nest_a_item);
	ck_assert_int_ge(idm_ctx_progress(nest_a, 0), 1);
	ck_assert_int_eq(nest_b_runs, 2);
	ck_assert_int_eq(nest_c_runs, 1);
	ck_assert_int_eq(nest_outer_b, 1);
	ck_assert_int_eq(nest_inner_a, -EDEADLK);
	ck_assert_int_eq(idm_ctx_progress(nest_a, 0), 0);
	for (int i = 0; i < 2; i++) {
		close(nest_pipes[i][0]);
		close(nest_pipes[i][1]);
	}
	idm_ctx_destroy(nest_b);
	idm_ctx_destroy(nest_a);
}
END_TEST

START_TEST(progress_thread)
{
	struct idm_conn_attr attr = unit_conn_attr("fake");
	idm_ctx *ctx;
	idm_conn *conn;

	unit_use_providers("good", "fake");
	ctx = unit_ctx();
	memset(&unit_ev, 0, sizeof(unit_ev));
	ck_assert_int_eq(idm_ctx_stop_progress_thread(ctx), -EINVAL);
	ck_assert_int_eq(idm_ctx_start_progress_thread(ctx), 0);
	ck_assert_int_eq(idm_ctx_start_progress_thread(ctx), -EALREADY);
	ck_assert_int_eq(idm_ctx_progress(ctx, 0), -EBUSY);

	/* the connected callback arrives without any progress call */
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "3260", &attr, &conn), 0);
	for (int i = 0; i < 3000 && !__atomic_load_n(&unit_ev.connected, __ATOMIC_ACQUIRE); i++)
		usleep(10000); /* 30 s: a hang guard */
	ck_assert_int_eq(__atomic_load_n(&unit_ev.connected, __ATOMIC_ACQUIRE), 1);

	ck_assert_int_eq(idm_ctx_stop_progress_thread(ctx), 0);
	ck_assert_int_eq(idm_ctx_stop_progress_thread(ctx), -EINVAL);
	ck_assert_int_eq(idm_ctx_progress(ctx, 0), 0);
	idm_conn_destroy(conn);
	idm_ctx_destroy(ctx);
	ck_assert_int_eq(idm_ctx_start_progress_thread(NULL), -EINVAL);
	ck_assert_int_eq(idm_ctx_stop_progress_thread(NULL), -EINVAL);
}
END_TEST

START_TEST(progress_thread_flag_and_destroy)
{
	struct idm_ctx_attr attr = {
		.size = sizeof(attr),
		.flags = IDM_CTX_PROGRESS_THREAD,
		.log_level = -1,
	};
	idm_ctx *ctx;

	ck_assert_int_eq(idm_ctx_create(&attr, &ctx), 0);
	ck_assert_int_eq(idm_ctx_progress(ctx, 0), -EBUSY);
	ck_assert_int_eq(idm_ctx_start_progress_thread(ctx), -EALREADY);
	idm_ctx_destroy(ctx); /* stops the thread itself */
}
END_TEST

static char last_msg[512];
static int n_msgs;

static void sink(enum idm_log_level level, const char *msg, void *arg)
{
	(void)level;
	ck_assert_ptr_eq(arg, &n_msgs);
	n_msgs++;
	strncpy(last_msg, msg, sizeof(last_msg) - 1);
}

START_TEST(logging_levels)
{
	struct idm_ctx_attr attr = {
		.size = sizeof(attr),
		.log_fn = sink,
		.log_arg = &n_msgs,
		.log_level = IDM_LOG_ERROR,
	};
	idm_ctx *ctx;

	ck_assert_int_eq(idm_ctx_create(&attr, &ctx), 0);
	idm_prov_log(ctx, IDM_LOG_WARN, "hidden %d", 1);
	ck_assert_int_eq(n_msgs, 0);
	idm_prov_log(ctx, IDM_LOG_ERROR, "shown %d", 2);
	ck_assert_int_eq(n_msgs, 1);
	ck_assert_str_eq(last_msg, "shown 2");
	idm_ctx_destroy(ctx);

	/* -1: the IDM_LOG_LEVEL environment variable decides */
	setenv("IDM_LOG_LEVEL", "debug", 1);
	attr.log_level = -1;
	ck_assert_int_eq(idm_ctx_create(&attr, &ctx), 0);
	idm_prov_log(ctx, IDM_LOG_DEBUG, "debug %s", "line");
	ck_assert_int_eq(n_msgs, 2);
	ck_assert_str_eq(last_msg, "debug line");
	idm_ctx_destroy(ctx);

	/* default without the variable: warnings, not info */
	unsetenv("IDM_LOG_LEVEL");
	ck_assert_int_eq(idm_ctx_create(&attr, &ctx), 0);
	idm_prov_log(ctx, IDM_LOG_INFO, "info");
	ck_assert_int_eq(n_msgs, 2);
	idm_prov_log(ctx, IDM_LOG_WARN, "warn");
	ck_assert_int_eq(n_msgs, 3);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(destroy_with_objects_open)
{
	struct fake_stats *st;
	idm_portal *portal;
	idm_ctx *ctx;

	/* keep the module mapped after the context unloads it */
	setenv("IDM_DLCLOSE", "0", 1);
	unit_use_providers("good", "fake");
	ctx = unit_ctx();
	(void)unit_initiator(ctx, true);
	(void)unit_target(ctx, &portal, false);
	st = unit_fake_stats();
	/* a failure queued but not yet notified must not be notified */
	idm_prov_conn_failed(unit_ev.accepted_conn, -ECONNRESET);
	idm_ctx_destroy(ctx);
	ck_assert_int_eq(unit_ev.terminate, 0);
	ck_assert_int_eq(st->conn_free, 2);
	ck_assert_int_eq(st->unlisten, 1);
	ck_assert_int_eq(st->fini, 1);
	/* the live initiator was terminated; the failed target needs no more */
	ck_assert_int_ge(st->conn_terminate, 1);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { create_arguments,
				       defer_and_fd,
				       defer_from_other_threads,
				       defer_wakes_infinite_wait,
				       defer_without_waiter_writes_no_eventfd,
				       requeueing_item_does_not_starve_fds,
				       progress_waits_for_timeout,
				       progress_from_callback_refused,
				       progress_of_another_context_from_callback,
				       progress_thread,
				       progress_thread_flag_and_destroy,
				       logging_levels,
				       destroy_with_objects_open,
				       NULL };

	return test_suite_run_case("ctx", "ctx", 0, tests);
}
