/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The context's progress: one epoll set that folds every provider fd, an
 * eventfd for deferred work and idm_ctx_wakeup(), the passes that
 * dispatch both under the context's lock (nested when a callback runs
 * another context's progress), and the optional progress thread.
 */
#include "core.h"
#include "lock.h"
#include "progress.h"
#include "wakeup.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define IDMP_EVENTS_PER_PASS 64


/*
 * Wakeups. The eventfd exists to end an epoll_wait that would otherwise
 * sleep through queued work, and writing it is a syscall (plus an
 * epoll_wait return and a read to drain it). So it is written only when
 * someone may be asleep on the epoll set:
 *
 * - a thread inside progress_once() between its epoll_wait announcement
 *   and its return (ctx->sleepers; the progress thread and a caller's own
 *   idm_ctx_progress() alike), or
 * - a caller polling idm_ctx_get_fd() itself (ctx->fd_shared, set for
 *   good by the first idm_ctx_get_fd(): we cannot see that poll).
 *
 * An item queued from inside a pass on the same thread needs no write:
 * run_deferred() of that pass runs it, or leaves it for the next pass,
 * whose epoll_wait then does not sleep (below).
 *
 * No lost wakeup, by a Dekker-style handshake on two sequentially
 * consistent atomics:
 *
 *   progress_once():          idm_prov_defer() (any thread, lock held):
 *     sleepers++                queue the item; defer_pending = true
 *     if (defer_pending)        if (sleepers || fd_shared)
 *         timeout = 0               write the eventfd
 *     epoll_wait(timeout)
 *     sleepers--
 *
 * In the single total order of seq_cst operations, either the loop's
 * load of defer_pending comes after the deferrer's store (the loop does
 * not sleep), or the loop's increment comes before the deferrer's load of
 * sleepers (the deferrer writes the eventfd, which is level-triggered
 * readable until drained, so the epoll_wait returns). A pass that skips
 * its epoll_wait (skip_poll, see progress_once()) sleeps on nothing.
 * idm_ctx_wakeup() (lib/wakeup.c) follows the same handshake with a flag
 * of its own, wake_pending.
 * ctx->kicked only saves a second write while the first is undrained; it
 * changes under the lock, as does the drain.
 */

/*
 * The passes this thread is inside, innermost first: one, or more when a
 * callback of one context runs idm_ctx_progress() of another (the caller
 * below holds the outer contexts' locks; see idm.h for the lock order).
 * Each frame lives on its pass's stack. A watch removed during a nested
 * pass is cleared from the events of every frame of its context.
 */
struct pass_frame {
	struct idm_ctx *ctx;
	struct epoll_event *events; /* the batch being dispatched */
	int n;
	struct pass_frame *up;
};
static __thread struct pass_frame *pass_top;

static bool in_pass(const struct idm_ctx *ctx)
{
	for (const struct pass_frame *f = pass_top; f; f = f->up)
		if (f->ctx == ctx)
			return true;
	return false;
}

static void ev_drain(struct idm_prov_watch *w, uint32_t revents)
{
	struct idm_ctx *ctx = IDM_PROV_CONTAINER_OF(w, struct idm_ctx, ev_watch);
	uint64_t v;
	ssize_t r;

	(void)revents;
	/* One read empties a (non-semaphore) eventfd. The queue itself is
	 * the state: this pass runs what is queued. */
	ctx->kicked = false;
	r = read(w->fd, &v, sizeof(v));
	(void)r;
}

static void ev_write(struct idm_ctx *ctx)
{
	uint64_t one = 1;
	ssize_t r = write(ctx->evfd, &one, sizeof(one));
	(void)r; /* EAGAIN: counter full, already readable */
}

/* Lock held, something queued: wake whoever may sleep on the epoll set. */
static void ev_kick_if_waiter(struct idm_ctx *ctx)
{
	if (ctx->kicked)
		return;
	if (atomic_load(&ctx->sleepers) == 0 && !atomic_load(&ctx->fd_shared))
		return;
	ctx->kicked = true;
	ev_write(ctx);
}

/* The context's epoll set and its eventfd, watched for the wakeups
 * above; 0 or a negative errno (what was made is left for
 * idmp_progress_close()). */
int idmp_progress_open(struct idm_ctx *ctx)
{
	ctx->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ctx->epfd < 0)
		return -errno;
	ctx->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ctx->evfd < 0)
		return -errno;
	return idm_prov_watch_add(ctx, &ctx->ev_watch, ctx->evfd, EPOLLIN, ev_drain);
}

void idmp_progress_close(struct idm_ctx *ctx)
{
	if (ctx->evfd >= 0)
		close(ctx->evfd);
	if (ctx->epfd >= 0)
		close(ctx->epfd);
}


IDM_API int idm_ctx_get_fd(idm_ctx *ctx)
{
	if (!ctx)
		return -EINVAL;
	/* From now on queued work must make epfd readable even when no
	 * thread of ours sleeps on it ("Wakeups"), and so must the work
	 * queued before this call, which wrote nothing. */
	if (!atomic_load(&ctx->fd_shared)) {
		idmp_ctx_lock(ctx);
		atomic_store(&ctx->fd_shared, true);
		if (ctx->defer_head)
			ev_kick_if_waiter(ctx);
		idmp_ctx_unlock(ctx);
	}
	return ctx->epfd;
}

int idm_prov_watch_add(struct idm_ctx *ctx, struct idm_prov_watch *w, int fd,
		   uint32_t events, idm_prov_watch_fn fn)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};

	if (!ctx || !w || fd < 0 || !fn)
		return -EINVAL;
	w->fd = fd;
	w->events = events;
	w->fn = fn;
	if (epoll_ctl(ctx->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	w->added = true;
	return 0;
}

int idm_prov_watch_mod(struct idm_ctx *ctx, struct idm_prov_watch *w, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};

	if (!w->added)
		return -EINVAL;
	if (w->events == events)
		return 0;
	if (epoll_ctl(ctx->epfd, EPOLL_CTL_MOD, w->fd, &ev) < 0)
		return -errno;
	w->events = events;
	return 0;
}

/*
 * Removing a watch while a progress pass still holds its pointer in the
 * events array is the classic epoll use-after-free: removal clears the
 * pointer from the array of the pass under way (as libuv does), and of an
 * outer pass of the same context if a nested one removes it.
 */
struct idm_ctx *idmp_pass_ctx(void)
{
	return pass_top ? pass_top->ctx : NULL;
}

bool idmp_in_pass(const struct idm_ctx *ctx)
{
	return in_pass(ctx);
}

void idm_prov_watch_del(struct idm_ctx *ctx, struct idm_prov_watch *w)
{
	if (!w || !w->added)
		return;
	epoll_ctl(ctx->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	w->added = false;
	for (struct pass_frame *f = pass_top; f; f = f->up) {
		if (f->ctx != ctx)
			continue;
		for (int i = 0; i < f->n; i++)
			if (f->events[i].data.ptr == w)
				f->events[i].data.ptr = NULL;
	}
}

/* Both take the context lock: a provider may queue from a thread of its
 * own (an RDMA CM or async-event thread), and the lock is recursive, so a
 * caller already holding it pays one uncontended lock/unlock (tens of ns).
 * The eventfd is written only when a waiter may sleep ("Wakeups"). */
void idm_prov_defer(struct idm_ctx *ctx, struct idm_prov_defer *d, idm_prov_defer_fn fn)
{
	idmp_ctx_lock(ctx);
	if (!d->queued) {
		d->fn = fn;
		d->next = NULL;
		d->queued = true;
		if (ctx->defer_tail)
			ctx->defer_tail->next = d;
		else
			ctx->defer_head = d;
		ctx->defer_tail = d;
		atomic_store(&ctx->defer_pending, true);
		if (!in_pass(ctx))
			ev_kick_if_waiter(ctx);
	}
	idmp_ctx_unlock(ctx);
}

void idm_prov_defer_cancel(struct idm_ctx *ctx, struct idm_prov_defer *d)
{
	struct idm_prov_defer **pp, *prev = NULL;

	idmp_ctx_lock(ctx);
	if (d->queued) {
		for (pp = &ctx->defer_head; *pp; prev = *pp, pp = &(*pp)->next) {
			if (*pp == d) {
				*pp = d->next;
				if (ctx->defer_tail == d)
					ctx->defer_tail = prev;
				/* the pass under way stops before what it had
				 * not seen, even if d was its last item */
				if (ctx->defer_mark == d)
					ctx->defer_mark = prev;
				break;
			}
		}
		d->queued = false;
		d->next = NULL;
		atomic_store(&ctx->defer_pending, ctx->defer_head != NULL);
	}
	idmp_ctx_unlock(ctx);
}

/* Run the deferred items queued before this call; items they queue run in
 * the next pass so a chatty provider cannot starve the fds. */
static int run_deferred(struct idm_ctx *ctx)
{
	int n = 0;

	ctx->defer_mark = ctx->defer_tail;
	while (ctx->defer_head && ctx->defer_mark) {
		struct idm_prov_defer *d = ctx->defer_head;
		bool was_last = d == ctx->defer_mark;

		ctx->defer_head = d->next;
		if (!ctx->defer_head)
			ctx->defer_tail = NULL;
		d->next = NULL;
		d->queued = false;
		d->fn(d);
		n++;
		if (was_last)
			break;
	}
	ctx->defer_mark = NULL;
	/* What is left (queued by the items above) runs next pass: this
	 * thread's next epoll_wait sees defer_pending and does not sleep;
	 * another thread asleep, or a caller's poll(), needs the eventfd. */
	atomic_store(&ctx->defer_pending, ctx->defer_head != NULL);
	if (ctx->defer_head)
		ev_kick_if_waiter(ctx);
	return n;
}

/*
 * One pass. The lock is held only around dispatch, never while sleeping in
 * epoll_wait, so other threads can call into the context meanwhile.
 * Queued work makes epoll_wait not sleep ("Wakeups").
 */
static int progress_once(struct idm_ctx *ctx, int timeout_ms)
{
	struct epoll_event evs[IDMP_EVENTS_PER_PASS];
	struct pass_frame frame = {.ctx = ctx, .events = evs};
	unsigned moved = ctx->moved_out;
	bool polled = !(atomic_exchange(&ctx->skip_poll, false) &&
			atomic_load(&ctx->defer_pending));
	int n, handled = 0;

	if (!polled) {
		/* The last pass polled the fds moments ago and left work
		 * (items queued by items, such as a write's Get_Data
		 * completion sending its status): run it now rather than
		 * first asking epoll, at timeout 0, about the fds. This pass
		 * does not set skip_poll, so the next one polls: fds wait at
		 * most one pass of deferred items, never starve. */
		n = 0;
	} else {
		atomic_fetch_add(&ctx->sleepers, 1);
		if (timeout_ms != 0 && (atomic_load(&ctx->defer_pending) ||
					atomic_load(&ctx->wake_pending)))
			timeout_ms = 0;
		n = epoll_wait(ctx->epfd, evs, IDMP_EVENTS_PER_PASS, timeout_ms);
		atomic_fetch_sub(&ctx->sleepers, 1);
		if (n < 0)
			return errno == EINTR ? 0 : -errno;
	}

	idmp_ctx_lock(ctx);
	if (ctx->moved_out != moved)
		n = 0; /* a watch may have moved away: wait again */
	frame.n = n;
	frame.up = pass_top;
	pass_top = &frame;
	for (int i = 0; i < n; i++) {
		struct idm_prov_watch *w = evs[i].data.ptr;

		if (!w || !w->added)
			continue;
		w->fn(w, evs[i].events);
		handled++;
	}
	frame.n = 0;
	/* before the deferred items, so that what wakeup_fn queues runs in
	 * this pass */
	handled += idmp_wakeup_take(ctx);
	handled += run_deferred(ctx);
	atomic_store(&ctx->skip_poll, polled && ctx->defer_head);
	pass_top = frame.up;
	idmp_ctx_unlock(ctx);
	return handled;
}

IDM_API int idm_ctx_progress(idm_ctx *ctx, int timeout_ms)
{
	if (!ctx)
		return -EINVAL;
	if (ctx->thread_running)
		return -EBUSY;
	if (in_pass(ctx))
		return -EDEADLK; /* from a callback of its own pass */
	return progress_once(ctx, timeout_ms);
}

static void *progress_thread(void *arg)
{
	struct idm_ctx *ctx = arg;

	while (!ctx->thread_stop)
		progress_once(ctx, 100);
	return NULL;
}

IDM_API int idm_ctx_start_progress_thread(idm_ctx *ctx)
{
	int ret;

	if (!ctx)
		return -EINVAL;
	idmp_ctx_lock(ctx);
	if (ctx->thread_running) {
		idmp_ctx_unlock(ctx);
		return -EALREADY;
	}
	ctx->thread_stop = false;
	ret = -pthread_create(&ctx->thread, NULL, progress_thread, ctx);
	if (ret == 0)
		ctx->thread_running = true;
	idmp_ctx_unlock(ctx);
	return ret;
}

IDM_API int idm_ctx_stop_progress_thread(idm_ctx *ctx)
{
	if (!ctx)
		return -EINVAL;
	if (!ctx->thread_running)
		return -EINVAL;
	if (pthread_equal(pthread_self(), ctx->thread))
		return -EDEADLK;
	ctx->thread_stop = true;
	ev_write(ctx); /* unconditional: the thread may be about to sleep */
	pthread_join(ctx->thread, NULL);
	ctx->thread_running = false;
	return 0;
}

