/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_late.c: the initiator's set of ITTs the caller released before the
 * target answered them, so that the target's late Data-In and R2T for
 * them are dropped rather than fatal.
 */
#ifndef LIBIDM_TCP_LATE_H
#define LIBIDM_TCP_LATE_H

#include "tcp.h"

/* Remember itt: its task was released with its command sent and no final
 * status received. Bounded (oldest forgotten first); nothing remembered
 * if no memory. */
void tcp_late_add(struct tcp_conn *tc, uint32_t itt);
/* Whether itt is one of those. */
bool tcp_late_has(const struct tcp_conn *tc, uint32_t itt);
/* Its final status arrived: the target is done with it. */
void tcp_late_forget(struct tcp_conn *tc, uint32_t itt);
void tcp_late_free(struct tcp_conn *tc);

#endif
