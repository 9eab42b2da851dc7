/* SPDX-License-Identifier: BSD-2-Clause */
/* Helpers the harness files share with each other, not with the tests. */
#ifndef TESTS_TCP_HARNESS_PRIV_H
#define TESTS_TCP_HARNESS_PRIV_H

#include "harness.h"

/* Record why the last harness call failed in h->err. */
void h_set_err(struct h *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A callback ran: count it as a contract breach if the side is already
 * terminated (by us or by a notify). */
void h_side_alive(struct h_side *s);
/* Record a connection_terminate_notify. */
void h_side_terminated(struct h_side *s, idm_conn *conn, int reason);
/* h->mu around callback bodies and the test thread's reads of what they
 * write; no-ops unless the progress thread runs (h->threaded). */
void h_lock(struct h *h);
void h_unlock(struct h *h);
/* The callbacks of each side (harness.c, harness_target.c). */
extern const struct idm_conn_cbs h_i_cbs;
extern const struct idm_conn_cbs h_t_cbs;
/* Initiator: send the Login Request with the keys of h->p. */
void h_ini_send_login(struct h *h, idm_conn *conn);
/* The portal's accept callback (harness_target.c). */
int h_target_accept(idm_portal *portal, idm_conn *conn, void *arg);

#endif
