/* SPDX-License-Identifier: BSD-2-Clause */
/* Failed logins from one address, rate-limited: see authlimit.h. */
#include "authlimit.h"
#include "target.h"
#include "ex_log.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

unsigned g_authlimit_max = AUTHLIMIT_MAX_FAILURES;

struct slot {
	char addr[TCONN_ADDR_MAX]; /* "" free */
	unsigned fails;            /* in the window that began at `since` */
	long since;
	long until;                /* refused before this time */
	bool said;                 /* the refusal was logged */
};

/* the loops (--threads) share it */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[AUTHLIMIT_SLOTS];

static long now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec;
}

static struct slot *find(const char *addr)
{
	for (int i = 0; i < AUTHLIMIT_SLOTS; i++)
		if (slots[i].addr[0] && !strcmp(slots[i].addr, addr))
			return &slots[i];
	return NULL;
}

/* A slot for a new address: a free one, else the one whose window began
 * first among those not refusing, else the one whose refusal ends first. */
static struct slot *take(const char *addr, long now)
{
	struct slot *best = NULL;

	for (int i = 0; i < AUTHLIMIT_SLOTS; i++) {
		struct slot *s = &slots[i];
		bool refusing = s->until > now;

		if (!s->addr[0]) {
			best = s;
			break;
		}
		if (!best || (best->until > now && !refusing) ||
		    ((best->until > now) == refusing &&
		     (refusing ? s->until < best->until : s->since < best->since)))
			best = s;
	}
	memset(best, 0, sizeof(*best));
	snprintf(best->addr, sizeof(best->addr), "%s", addr);
	best->since = now;
	return best;
}

bool authlimit_blocked(const char *addr)
{
	long now = now_s();
	struct slot *s;
	bool refused = false;

	if (!g_authlimit_max || !addr[0])
		return false;
	pthread_mutex_lock(&lock);
	s = find(addr);
	if (s && s->until > now) {
		refused = true;
		if (!s->said) /* once per refusal period, not per login */
			ex_warn("%s: refusing its logins for %ld s more: %u failed "
				"authentications within %d s (--max-auth-failures)",
				addr, s->until - now, s->fails, AUTHLIMIT_WINDOW_S);
		s->said = true;
	}
	pthread_mutex_unlock(&lock);
	return refused;
}

void authlimit_failed(const char *addr)
{
	long now = now_s();
	struct slot *s;

	if (!g_authlimit_max || !addr[0])
		return;
	pthread_mutex_lock(&lock);
	s = find(addr);
	if (!s)
		s = take(addr, now);
	if (now - s->since >= AUTHLIMIT_WINDOW_S) {
		s->since = now;
		s->fails = 0;
	}
	if (++s->fails >= g_authlimit_max && s->until <= now) {
		s->until = now + AUTHLIMIT_WINDOW_S;
		s->said = false;
	}
	pthread_mutex_unlock(&lock);
}

void authlimit_reset(void)
{
	pthread_mutex_lock(&lock);
	memset(slots, 0, sizeof(slots));
	pthread_mutex_unlock(&lock);
}
