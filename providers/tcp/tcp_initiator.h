/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_initiator.c: the initiator's half of the receive path
 * (tcp_initiator_role, in tcp.h) and its command send.
 */
#ifndef LIBIDM_TCP_INITIATOR_H
#define LIBIDM_TCP_INITIATOR_H

#include "tcp.h"

extern const struct tcp_role tcp_initiator_role;

int tcp_ini_send_cmd(struct tcp_conn *tc, const uint8_t *bhs, const void *ahs,
		     size_t ahs_len, struct idm_task *task);

#endif
