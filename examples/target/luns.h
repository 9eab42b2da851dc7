/* SPDX-License-Identifier: BSD-2-Clause */
/* The target's LUN list: built from --lun/config specs at start-up and
 * rebuilt on SIGHUP without disturbing I/O in flight. */
#ifndef IDM_TARGET_LUNS_H
#define IDM_TARGET_LUNS_H

#include <stdbool.h>
#include <stdint.h>

/**
 * Open every spec ("[N=]ram:SIZE[,ro]", "[N=]file:PATH[,ro]") into
 * g_tgt.luns. Messages name the spec. Returns 0 or -1.
 */
int luns_open_all(char *const *specs, int n, uint32_t bs);
/**
 * Replace g_tgt.luns by the LUNs of `specs`: a LUN whose number and spec
 * are unchanged is kept as it is (its state, reservations and open
 * file), new ones are opened, and removed ones leave the list at once
 * but are closed only when no command uses them (luns_reap()). All or
 * nothing: when one spec fails the list stays as it was. 0 or -1.
 */
int luns_reload(char *const *specs, int n, uint32_t bs);
/** Close removed LUNs that no command uses any more. */
void luns_reap(void);
/** Whether removed LUNs wait for luns_reap(). */
bool luns_retired(void);
/** Close every LUN (at exit, after the connections are gone). */
void luns_close_all(void);

#endif
