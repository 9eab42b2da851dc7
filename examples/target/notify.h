/* SPDX-License-Identifier: BSD-2-Clause */
/* Service manager readiness (the sd_notify protocol, without libsystemd). */
#ifndef IDM_TARGET_NOTIFY_H
#define IDM_TARGET_NOTIFY_H

/**
 * Send `state` ("READY=1", "RELOADING=1", "STOPPING=1", ...) to
 * $NOTIFY_SOCKET. Does nothing when it is unset. 0 or -errno.
 */
int notify_send(const char *state);

#endif
