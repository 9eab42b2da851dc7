/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Failed logins from one address, rate-limited: after max_failures
 * failed authentications from one initiator address within
 * AUTHLIMIT_WINDOW_S seconds, that address's logins are refused for
 * AUTHLIMIT_WINDOW_S seconds, and said so once. The table is fixed
 * (AUTHLIMIT_SLOTS addresses); when it is full the oldest address that
 * is not refused gives its place.
 */
#ifndef IDM_TARGET_AUTHLIMIT_H
#define IDM_TARGET_AUTHLIMIT_H

#include <stdbool.h>

#define AUTHLIMIT_SLOTS 256
#define AUTHLIMIT_WINDOW_S 60
#define AUTHLIMIT_MAX_FAILURES 10 /* default of --max-auth-failures */

/* --max-auth-failures: 0 turns the limit off */
extern unsigned g_authlimit_max;

/** True while logins from `addr` are refused. */
bool authlimit_blocked(const char *addr);
/** A login from `addr` failed to authenticate. */
void authlimit_failed(const char *addr);
/** Forget every address (the fuzz harness, between inputs). */
void authlimit_reset(void);

#endif
