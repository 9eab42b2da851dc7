/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The context: one epoll set that folds every provider fd, an eventfd for
 * deferred work, and the lock that serialises the caller with the optional
 * progress thread.
 */
#include "core.h"
#include "ctx_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define IDMP_EVENTS_PER_PASS 64

void idmp_ctx_lock(struct idm_ctx *ctx)
{
	pthread_mutex_lock(&ctx->lock);
}

void idmp_ctx_unlock(struct idm_ctx *ctx)
{
	pthread_mutex_unlock(&ctx->lock);
}

static void ev_drain(struct idm_prov_watch *w, uint32_t revents)
{
	uint64_t v;
	(void)revents;
	/* The eventfd only wakes the loop; the queue itself is the state. */
	while (read(w->fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		;
}

static void ev_kick(struct idm_ctx *ctx)
{
	uint64_t one = 1;
	ssize_t r = write(ctx->evfd, &one, sizeof(one));
	(void)r; /* EAGAIN: counter full, already readable */
}

IDM_API int idm_ctx_create(const struct idm_ctx_attr *attr, idm_ctx **out)
{
	struct idm_ctx *ctx;
	pthread_mutexattr_t ma;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (attr && attr->size < offsetof(struct idm_ctx_attr, log_level) +
					 sizeof(attr->log_level))
		return -EINVAL;
	if (attr && (attr->flags & ~IDM_CTX_PROGRESS_THREAD))
		return -EINVAL;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->epfd = -1;
	ctx->evfd = -1;

	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&ctx->lock, &ma);
	pthread_mutexattr_destroy(&ma);

	idmp_log_init(ctx, attr);

	ctx->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ctx->epfd < 0) {
		ret = -errno;
		goto fail;
	}
	ctx->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ctx->evfd < 0) {
		ret = -errno;
		goto fail;
	}
	ret = idm_prov_watch_add(ctx, &ctx->ev_watch, ctx->evfd, EPOLLIN, ev_drain);
	if (ret < 0)
		goto fail;

	*out = ctx;
	if (attr && (attr->flags & IDM_CTX_PROGRESS_THREAD)) {
		ret = idm_ctx_start_progress_thread(ctx);
		if (ret < 0) {
			*out = NULL;
			goto fail;
		}
	}
	return 0;
fail:
	if (ctx->evfd >= 0)
		close(ctx->evfd);
	if (ctx->epfd >= 0)
		close(ctx->epfd);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
	return ret;
}

IDM_API void idm_ctx_destroy(idm_ctx *ctx)
{
	if (!ctx)
		return;
	if (ctx->thread_running)
		idm_ctx_stop_progress_thread(ctx);

	idmp_ctx_lock(ctx);
	while (ctx->portals)
		idm_portal_destroy(ctx->portals);
	while (ctx->conns)
		idm_conn_destroy(ctx->conns);
	idmp_providers_unload(ctx);
	idm_prov_watch_del(ctx, &ctx->ev_watch);
	idmp_ctx_unlock(ctx);

	close(ctx->evfd);
	close(ctx->epfd);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

IDM_API int idm_ctx_get_fd(idm_ctx *ctx)
{
	if (!ctx)
		return -EINVAL;
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
 * pointer from the array of the pass under way (as libuv does).
 */
static __thread struct epoll_event *pass_events;
static __thread int pass_n;
static __thread bool in_pass;
static __thread struct idm_ctx *pass_ctx;

struct idm_ctx *idmp_pass_ctx(void)
{
	return pass_ctx;
}

void idm_prov_watch_del(struct idm_ctx *ctx, struct idm_prov_watch *w)
{
	if (!w || !w->added)
		return;
	epoll_ctl(ctx->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	w->added = false;
	for (int i = 0; i < pass_n; i++)
		if (pass_events[i].data.ptr == w)
			pass_events[i].data.ptr = NULL;
}

/* Both take the context lock: a provider may queue from a thread of its
 * own (an RDMA CM or async-event thread), and the lock is recursive, so a
 * caller already holding it pays one uncontended lock/unlock (tens of ns)
 * next to the eventfd write (a syscall) each queueing costs anyway. */
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
		ev_kick(ctx);
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
	if (ctx->defer_head)
		ev_kick(ctx);
	return n;
}

/*
 * One pass. The lock is held only around dispatch, never while sleeping in
 * epoll_wait, so other threads can call into the context meanwhile.
 * Deferred work always kicks the eventfd, so a pass never sleeps on it.
 */
static int progress_once(struct idm_ctx *ctx, int timeout_ms)
{
	struct epoll_event evs[IDMP_EVENTS_PER_PASS];
	unsigned moved = ctx->moved_out;
	int n, handled = 0;

	n = epoll_wait(ctx->epfd, evs, IDMP_EVENTS_PER_PASS, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;

	idmp_ctx_lock(ctx);
	if (ctx->moved_out != moved)
		n = 0; /* a watch may have moved away: wait again */
	in_pass = true;
	pass_ctx = ctx;
	pass_events = evs;
	pass_n = n;
	for (int i = 0; i < n; i++) {
		struct idm_prov_watch *w = evs[i].data.ptr;

		if (!w || !w->added)
			continue;
		w->fn(w, evs[i].events);
		handled++;
	}
	pass_events = NULL;
	pass_n = 0;
	handled += run_deferred(ctx);
	in_pass = false;
	pass_ctx = NULL;
	idmp_ctx_unlock(ctx);
	return handled;
}

IDM_API int idm_ctx_progress(idm_ctx *ctx, int timeout_ms)
{
	if (!ctx)
		return -EINVAL;
	if (ctx->thread_running)
		return -EBUSY;
	if (in_pass)
		return -EDEADLK; /* called from a callback */
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
	ev_kick(ctx);
	pthread_join(ctx->thread, NULL);
	ctx->thread_running = false;
	return 0;
}
