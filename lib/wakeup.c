/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm_ctx_wakeup(): any thread (or a signal handler) makes the context's
 * progress return, for work that finished elsewhere. It follows the
 * handshake of lib/progress.c ("Wakeups") with wake_pending in the place
 * of defer_pending:
 *
 *   progress_once():              idm_ctx_wakeup():
 *     sleepers++                    if (exchange(wake_pending, true))
 *     if (wake_pending)                 return (coalesced)
 *         timeout = 0               if (sleepers || fd_shared)
 *     epoll_wait(timeout)               write the eventfd
 *     sleepers--
 *     ... take: exchange(wake_pending, false), run wakeup_fn
 *
 * Either the pass's load of wake_pending follows the store (it does not
 * sleep) or the waker's load of sleepers follows the increment (it writes
 * the eventfd, which stays readable until a pass drains it). A wakeup
 * raised after a pass took the flag raises it again: the next pass takes
 * it, so a caller that drains its own queue after each pass never misses
 * an item pushed before a wakeup.
 *
 * Not under the context lock (a signal handler may interrupt its holder),
 * so it leaves ctx->kicked alone: that only saves the deferral path a
 * second write; the drain empties every write at once.
 */
#include "core.h"
#include "wakeup.h"

#include <errno.h>
#include <stdatomic.h>
#include <unistd.h>

/* What makes idm_ctx_wakeup() async-signal-safe: plain loads and
 * exchanges, no lock hidden inside the atomics. */
_Static_assert(ATOMIC_BOOL_LOCK_FREE == 2, "lock-free atomic bool");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "lock-free atomic int");

IDM_API int idm_ctx_wakeup(idm_ctx *ctx)
{
	uint64_t one = 1;
	int saved = errno;
	ssize_t r;

	if (!ctx)
		return -EINVAL;
	if (atomic_exchange(&ctx->wake_pending, true))
		return 0; /* pending: whoever raised it wrote if it had to */
	if (atomic_load(&ctx->sleepers) == 0 && !atomic_load(&ctx->fd_shared))
		return 0; /* the next pass sees the flag before it sleeps */
	r = write(ctx->evfd, &one, sizeof(one));
	(void)r; /* EAGAIN: the counter is full, so readable already */
	errno = saved;
	return 0;
}

int idmp_wakeup_take(struct idm_ctx *ctx)
{
	if (!atomic_load(&ctx->wake_pending) ||
	    !atomic_exchange(&ctx->wake_pending, false))
		return 0;
	if (ctx->wakeup_fn)
		ctx->wakeup_fn(ctx, ctx->wakeup_arg);
	return 1;
}
