/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Handing a connection to another loop (--threads): a login that joins
 * or reinstates a session owned by another loop ends there. The accepting
 * loop queues the connection in its outbox (from a callback, where a move
 * would only be queued by libidm), moves it with idm_conn_move() after its
 * progress pass, outside callbacks, and puts it in the owner's inbox; the
 * owner picks it up after its own next pass and finishes the login
 * through the resume function the login code passed (login.c's
 * login_resume()). The inbox is the only thing two loops share here: a
 * mutex guards it, and the owner looks at an atomic flag first, so a
 * loop with nothing handed to it takes no lock. The handing loop wakes
 * the owner (idm_ctx_wakeup()), which may sleep with no timeout.
 */
#include "target.h"
#include "budget.h"
#include "ex_log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct handoff {
	struct handoff *next;
	struct tconn *c;
	struct loop *to;
	loop_resume_fn resume; /* goes on with the login on `to` */
	bool moved;           /* the connection's callbacks run on `to` */
	uint8_t req[IDM_ISCSI_BHS_LEN];
	uint8_t flags;
	size_t len;
	char data[];          /* the final Login Response's text */
};

static pthread_mutex_t inbox_lock = PTHREAD_MUTEX_INITIALIZER;

_Thread_local struct loop *g_loop;
struct loop *g_loops;
int g_nloops = 1;

int loop_handoff(struct tconn *c, struct loop *to, loop_resume_fn resume,
		 const uint8_t *req, uint8_t flags, const char *data, size_t len)
{
	struct handoff *h = malloc(sizeof(*h) + len);

	if (!h)
		return -ENOMEM;
	h->c = c;
	h->to = to;
	h->resume = resume;
	h->moved = false;
	memcpy(h->req, req, IDM_ISCSI_BHS_LEN);
	h->flags = flags;
	h->len = len;
	if (len)
		memcpy(h->data, data, len);
	/* the login list is per loop: c leaves this one's now (its login is
	 * all but done) */
	budget_login_done(c);
	c->handoff = h;
	h->next = g_loop->outbox;
	g_loop->outbox = h;
	ex_dbg("%s: login continues on loop %d, the session's", idm_conn_peer_name(c->ic),
	       to->index);
	return 0;
}

struct loop *loop_for_new_session(const struct tconn *c)
{
	static unsigned next; /* atomic: any loop may start a session */

	/* A TCP connection is on the loop the kernel gave it (REUSEPORT
	 * listeners on every loop spread them); iSER listens on loop 0
	 * alone (an RDMA CM id cannot share its port), so its sessions are
	 * spread here. Not those whose connections take their receive
	 * buffers from loop 0's shared receive queue: they cannot move. */
	if (g_nloops == 1 || !c->iser || g_loop != &g_loops[0] || g_tgt.shared_recv)
		return g_loop;
	return &g_loops[__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % (unsigned)g_nloops];
}

static void unlink_conn(struct tconn *c)
{
	for (struct tconn **pp = &g_loop->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			return;
		}
}

/* From the connection's terminate callback. Not moved yet: the handoff
 * is forgotten, the caller frees the connection. Moved: it is in (or on
 * its way to) this loop's inbox; true tells the caller to leave the
 * connection for loop_run_handoffs() to free. */
bool loop_handoff_dying(struct tconn *c)
{
	struct handoff *h = c->handoff;

	if (!h)
		return false;
	if (h->moved)
		return true;
	for (struct handoff **pp = &g_loop->outbox; *pp; pp = &(*pp)->next)
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	c->handoff = NULL;
	free(h);
	return false;
}

static void move_out(void)
{
	struct handoff *h;

	while ((h = g_loop->outbox)) {
		struct tconn *c = h->c;
		struct loop *to;
		int r;

		g_loop->outbox = h->next;
		unlink_conn(c);
		/* set before the move: from then on, c's callbacks (which
		 * read it) run on h->to, ordered by the contexts' locks */
		h->moved = true;
		r = idm_conn_move(c->ic, h->to->ctx);
		if (r < 0) {
			h->moved = false;
			c->handoff = NULL;
			c->next = g_loop->conns;
			g_loop->conns = c;
			ex_warn("%s: cannot move to loop %d: %s", idm_conn_peer_name(c->ic),
				h->to->index, idm_strerror(r));
			conn_close(c, "move failed");
			free(h);
			continue;
		}
		to = h->to; /* h is the owner's once in its inbox */
		pthread_mutex_lock(&inbox_lock);
		h->next = to->inbox;
		to->inbox = h;
		__atomic_store_n(&to->inbox_pending, 1, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&inbox_lock);
		/* after the push: the owner's next pass returns and finds it */
		idm_ctx_wakeup(to->ctx);
	}
}


/* Take what other loops handed to this one: c joins this loop. */
static struct handoff *take_inbox(void)
{
	struct handoff *list;

	if (!__atomic_load_n(&g_loop->inbox_pending, __ATOMIC_ACQUIRE))
		return NULL;
	pthread_mutex_lock(&inbox_lock);
	list = g_loop->inbox;
	g_loop->inbox = NULL;
	__atomic_store_n(&g_loop->inbox_pending, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&inbox_lock);
	return list;
}

/* A connection handed to this loop joins its list; true if it is still
 * alive (one that ended in between is forgotten here). */
static bool join_loop(struct tconn *c)
{
	c->handoff = NULL;
	c->next = g_loop->conns;
	g_loop->conns = c;
	if (c->state != CS_DEAD)
		return true;
	conn_forget(c); /* it ended in between: loop_handoff_dying() */
	return false;
}

void loop_run_handoffs(void)
{
	struct handoff *h, *next;

	if (g_loop->outbox)
		move_out();
	for (h = take_inbox(); h; h = next) {
		next = h->next;
		if (join_loop(h->c))
			h->resume(h->c, h->req, h->flags, h->data, h->len);
		free(h);
	}
}

/* At shutdown: connections still in the outbox stay here, those in the
 * inbox join, so that conn_destroy_all() ends them all. */
void loop_handoff_flush(void)
{
	struct handoff *h, *next;

	for (h = g_loop->outbox; h; h = next) {
		next = h->next;
		h->c->handoff = NULL;
		free(h);
	}
	g_loop->outbox = NULL;
	for (h = take_inbox(); h; h = next) {
		next = h->next;
		join_loop(h->c);
		free(h);
	}
}
