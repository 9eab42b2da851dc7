/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Socket activation: sockets a service manager opened for us (systemd's
 * LISTEN_FDS protocol, read without libsystemd).
 */
#ifndef IDM_TARGET_ACTIVATION_H
#define IDM_TARGET_ACTIVATION_H

#include <stdbool.h>

/* The first descriptor passed (SD_LISTEN_FDS_START). */
#define ACTIVATION_FD_START 3

/**
 * How many descriptors the service manager passed from fd 3 on: 0 when
 * LISTEN_PID is not this process or LISTEN_FDS is unset, -1 (after a
 * message) when they are malformed or more than max. LISTEN_PID, LISTEN_FDS and
 * LISTEN_FDNAMES are removed from the environment either way, so that no
 * child takes them for its own; the descriptors get FD_CLOEXEC.
 */
int activation_fds(int max);

/** A listening socket (Accept=no) or a connection (Accept=yes)? */
bool activation_is_listener(int fd);

/**
 * Serve a connected socket the manager passed (Accept=yes) as a target
 * connection, admitted like one from a portal. 0 or -errno (fd is closed
 * once libidm took it, left open if libidm refused it).
 */
int activation_adopt(int fd);

#endif
