/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_target.c: the target's half of the receive path.
 */
#ifndef LIBIDM_TCP_TARGET_H
#define LIBIDM_TCP_TARGET_H

#include "tcp.h"

extern const struct tcp_role tcp_target_role;

#endif
