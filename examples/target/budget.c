/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Login budgets (see budget.h). Connections in login are kept in accept
 * order: they all have the same timeout, so the oldest is the first to
 * expire and the timeout check looks at the head only. Per-address
 * counts live in an open-addressing table sized for max_logins distinct
 * addresses at most, allocated once, so admitting or refusing a
 * connection allocates nothing.
 *
 * With several loops (--threads) the counts, the address table and the
 * reports are shared under one mutex, taken when a connection is
 * accepted, logs in or goes, and by the loops' ticks; never per I/O.
 * The login list is each loop's own (struct loop): it holds the loop's
 * connections, which only that loop may close.
 */
#include "budget.h"
#include "target.h"
#include "ex_log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

struct budget_cfg g_budget = {
	.login_timeout_s = BUDGET_LOGIN_TIMEOUT_S,
	.max_conns = BUDGET_MAX_CONNS,
	.max_logins = BUDGET_MAX_LOGINS,
	.max_logins_per_addr = BUDGET_MAX_LOGINS_PER_ADDR,
};

struct addr_slot {
	char addr[TCONN_ADDR_MAX]; /* "" free */
	unsigned n;                /* its connections in login */
};

static struct addr_slot *slots;
static size_t nslots; /* a power of two, > 2 * max_logins */
static unsigned nconns, nlogins;
#define lhead (g_loop->lhead)
#define ltail (g_loop->ltail)
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The reports: one line per limit and second at most. */
enum { R_CONNS, R_LOGINS, R_PER_ADDR, R_TIMEOUT, R_N };
static struct report {
	unsigned n;          /* events not reported yet */
	char last[TCONN_ADDR_MAX]; /* the latest address, for the line */
	struct timespec at;  /* last line */
} rep[R_N];

static unsigned freed_since_trim;
static struct timespec last_free;

static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void report_line(int r, unsigned n)
{
	switch (r) {
	case R_CONNS:
		ex_warn("refused %u connection(s) (latest from %s): %u connections, "
			"the --max-connections cap", n, rep[r].last, g_budget.max_conns);
		break;
	case R_LOGINS:
		ex_warn("refused %u connection(s) (latest from %s): %u connections in "
			"login, the --max-logins cap", n, rep[r].last, g_budget.max_logins);
		break;
	case R_PER_ADDR:
		ex_warn("refused %u connection(s) (latest from %s): %u connections in "
			"login from one address, the --max-logins-per-address cap",
			n, rep[r].last, g_budget.max_logins_per_addr);
		break;
	case R_TIMEOUT:
		ex_warn("closed %u connection(s) (latest from %s): not in full feature "
			"phase %u s after connecting (--login-timeout)",
			n, rep[r].last, g_budget.login_timeout_s);
		break;
	}
}

/* Count one event; say it now if this limit has been quiet for a second,
 * else leave it to budget_tick(). */
static void report(int r, const char *addr)
{
	struct timespec now;

	rep[r].n++;
	snprintf(rep[r].last, sizeof(rep[r].last), "%s", addr);
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((rep[r].at.tv_sec == 0 && rep[r].at.tv_nsec == 0) || since(&rep[r].at, &now) >= 1.0) {
		report_line(r, rep[r].n);
		rep[r].n = 0;
		rep[r].at = now;
	}
}

/* FNV-1a: the table's index of an address string */
static size_t hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h & (nslots - 1);
}

static struct addr_slot *slot_find(const char *addr, bool add)
{
	for (size_t i = hash(addr);; i = (i + 1) & (nslots - 1)) {
		if (!slots[i].addr[0]) {
			if (!add)
				return NULL;
			snprintf(slots[i].addr, sizeof(slots[i].addr), "%s", addr);
			return &slots[i];
		}
		if (!strcmp(slots[i].addr, addr))
			return &slots[i];
	}
}

/* Free slot i, moving later entries of its probe run back into the hole
 * (linear probing without tombstones). */
static void slot_del(size_t i)
{
	size_t j = i;

	for (;;) {
		j = (j + 1) & (nslots - 1);
		if (!slots[j].addr[0])
			break;
		size_t k = hash(slots[j].addr);
		/* j's entry may move to i unless its home k lies in (i, j] */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		slots[i] = slots[j];
		i = j;
	}
	slots[i].addr[0] = '\0';
	slots[i].n = 0;
}

int budget_init(int reserved_fds)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)g_budget.max_conns + (rlim_t)reserved_fds;

	for (nslots = 16; nslots <= 2 * (size_t)g_budget.max_logins; nslots *= 2)
		;
	slots = calloc(nslots, sizeof(*slots));
	if (!slots) {
		ex_err("no memory for the login budget table");
		return -1;
	}
	/* one descriptor per TCP connection: make room for the cap, or
	 * lower the cap to what the hard limit allows, rather than letting
	 * accept() fail with EMFILE */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < need) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			getrlimit(RLIMIT_NOFILE, &rl);
		if (rl.rlim_cur < need) {
			unsigned cap = rl.rlim_cur > (rlim_t)reserved_fds + 1 ?
				(unsigned)(rl.rlim_cur - (rlim_t)reserved_fds) : 1;
			ex_warn("the open-file limit (%llu) allows %u connections: "
				"--max-connections lowered from %u", (unsigned long long)rl.rlim_cur,
				cap, g_budget.max_conns);
			g_budget.max_conns = cap;
		}
	}
	ex_info("budgets: %u connections, %u in login (%u per address), login timeout %u s",
		g_budget.max_conns, g_budget.max_logins, g_budget.max_logins_per_addr,
		g_budget.login_timeout_s);
	return 0;
}

void budget_fini(void)
{
	free(slots);
	slots = NULL;
}

/* "ip" of "ip:port" or "[v6]:port"; "?" when libidm could not name the
 * peer (an empty string marks a free table slot) */
static void peer_addr(const char *peer, char *out, size_t n)
{
	const char *colon = strrchr(peer, ':');
	size_t len = colon ? (size_t)(colon - peer) : strlen(peer);

	if (len >= 2 && peer[0] == '[' && peer[len - 1] == ']') {
		peer++;
		len -= 2;
	}
	snprintf(out, n, "%.*s", len ? (int)len : 1, len ? peer : "?");
}

static int admit_locked(struct tconn *c)
{
	struct addr_slot *s;

	if (nconns >= g_budget.max_conns) {
		report(R_CONNS, c->addr);
		return -EBUSY;
	}
	if (nlogins >= g_budget.max_logins) {
		report(R_LOGINS, c->addr);
		return -EBUSY;
	}
	s = slot_find(c->addr, true); /* room: nlogins < max_logins < nslots / 2 */
	if (s->n >= g_budget.max_logins_per_addr) {
		report(R_PER_ADDR, c->addr);
		return -EBUSY;
	}
	s->n++;
	nlogins++;
	nconns++;
	c->counted = true;
	c->in_login = true;
	clock_gettime(CLOCK_MONOTONIC, &c->login_deadline);
	c->login_deadline.tv_sec += g_budget.login_timeout_s;
	c->lprev = ltail;
	c->lnext = NULL;
	if (ltail)
		ltail->lnext = c;
	else
		lhead = c;
	ltail = c;
	return 0;
}

int budget_admit(struct tconn *c, const char *peer)
{
	int r;

	peer_addr(peer, c->addr, sizeof(c->addr));
	pthread_mutex_lock(&lock);
	r = admit_locked(c);
	pthread_mutex_unlock(&lock);
	return r;
}

static void login_done_locked(struct tconn *c)
{
	size_t i;

	if (!c->in_login)
		return;
	c->in_login = false;
	nlogins--;
	for (i = hash(c->addr); strcmp(slots[i].addr, c->addr); i = (i + 1) & (nslots - 1))
		;
	if (--slots[i].n == 0)
		slot_del(i);
	if (c->lprev)
		c->lprev->lnext = c->lnext;
	else
		lhead = c->lnext;
	if (c->lnext)
		c->lnext->lprev = c->lprev;
	else
		ltail = c->lprev;
	c->lprev = c->lnext = NULL;
}

void budget_login_done(struct tconn *c)
{
	if (!c->in_login)
		return;
	pthread_mutex_lock(&lock);
	login_done_locked(c);
	pthread_mutex_unlock(&lock);
}

void budget_release(struct tconn *c)
{
	if (!c->in_login && !c->counted)
		return;
	pthread_mutex_lock(&lock);
	login_done_locked(c);
	if (c->counted) {
		c->counted = false;
		nconns--;
		freed_since_trim++;
		clock_gettime(CLOCK_MONOTONIC, &last_free);
	}
	pthread_mutex_unlock(&lock);
}

struct tconn *budget_next_expired(const struct timespec *now)
{
	struct tconn *c = lhead;

	if (!c || now->tv_sec < c->login_deadline.tv_sec ||
	    (now->tv_sec == c->login_deadline.tv_sec &&
	     now->tv_nsec < c->login_deadline.tv_nsec))
		return NULL;
	pthread_mutex_lock(&lock);
	login_done_locked(c);
	if (c->state == CS_LOGIN)
		report(R_TIMEOUT, c->addr);
	pthread_mutex_unlock(&lock);
	return c;
}

/* After this many connections went away and a second without more,
 * hand the freed heap back to the system: the connections' buffers
 * interleave with long-lived allocations, so free() alone keeps most of
 * a storm's memory resident. */
#define TRIM_AFTER 64

bool budget_tick_due(void)
{
	bool due;

	pthread_mutex_lock(&lock);
	due = freed_since_trim >= TRIM_AFTER;
	for (int r = 0; r < R_N && !due; r++)
		due = rep[r].n != 0;
	pthread_mutex_unlock(&lock);
	return due;
}

void budget_tick(const struct timespec *now)
{
	static _Thread_local struct timespec last;

	/* a few times a second is enough for reports and trimming, and
	 * keeps the shared lock out of every loop pass */
	if (since(&last, now) < 0.1)
		return;
	last = *now;
	pthread_mutex_lock(&lock);
	for (int r = 0; r < R_N; r++)
		if (rep[r].n && since(&rep[r].at, now) >= 1.0) {
			report_line(r, rep[r].n);
			rep[r].n = 0;
			rep[r].at = *now;
		}
	if (freed_since_trim >= TRIM_AFTER && since(&last_free, now) >= 1.0) {
		freed_since_trim = 0;
#ifdef __GLIBC__
		malloc_trim(0);
#endif
	}
	pthread_mutex_unlock(&lock);
}
