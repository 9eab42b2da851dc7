/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Login budgets: what one initiator, or many, can make idm-target hold
 * before a session exists. Caps on connections in total, in login, and
 * in login per initiator address, checked at accept time so that a
 * refused connection costs nothing after; a login timeout; each limit
 * reported at most once a second, with how often it was hit.
 */
#ifndef IDM_TARGET_BUDGET_H
#define IDM_TARGET_BUDGET_H

#include <stdbool.h>
#include <time.h>

struct tconn;

/* Defaults; doc/man/idm-target.8.scd says why these values. */
#define BUDGET_LOGIN_TIMEOUT_S 15   /* like LIO's login timeout */
#define BUDGET_MAX_CONNS 1024
#define BUDGET_MAX_LOGINS 256
#define BUDGET_MAX_LOGINS_PER_ADDR 16

struct budget_cfg {
	unsigned login_timeout_s;
	unsigned max_conns;
	unsigned max_logins;
	unsigned max_logins_per_addr;
};

extern struct budget_cfg g_budget;

/** Size the tables and the open-file limit for the caps. 0 or -1. */
int budget_init(int reserved_fds);
void budget_fini(void);
/**
 * A new connection from `peer` ("ip:port", "[v6]:port"): 0 and it is
 * counted (in total and in login), or -EBUSY when a cap is full.
 */
int budget_admit(struct tconn *c, const char *peer);
/** `c` reached full feature phase: it no longer counts as in login. */
void budget_login_done(struct tconn *c);
/** `c` is being freed. */
void budget_release(struct tconn *c);
/** The oldest connection still in login past its timeout, or NULL; it
 * no longer counts as in login (the caller closes it). */
struct tconn *budget_next_expired(const struct timespec *now);
/** From the main loop: due reports, and heap trimming after a burst. */
void budget_tick(const struct timespec *now);
/** Whether budget_tick() has a report or a trim still to do: the loop
 * then keeps a timeout rather than sleeping until an event. */
bool budget_tick_due(void);

#endif
