/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_conn.c: sockets (listen, accept, connect), a connection's life
 * (start, close, the teardown of a failure) and its binding to the core's.
 */
#ifndef LIBIDM_TCP_CONN_H
#define LIBIDM_TCP_CONN_H

#include "tcp.h"

int tcp_init(struct idm_prov *prov);
void tcp_fini(struct idm_prov *prov);
struct tcp_conn *tcp_conn_new(struct idm_ctx *ctx, int fd);
int tcp_conn_start(struct tcp_conn *tc);
void tcp_conn_close(struct tcp_conn *tc);
void tcp_conn_destroy(struct tcp_conn *tc);
/* TCP_NODELAY and the dead-peer options on a connection's socket. */
void tcp_tune_socket(int fd, const struct tcp_knobs *k);
int tcp_listen(struct idm_prov_listener *l, const struct sockaddr *sa,
	       socklen_t salen, int backlog);
int tcp_listener_start(struct idm_prov_listener *l, int fd);
void tcp_unlisten(struct idm_prov_listener *l);
int tcp_listener_port(struct idm_prov_listener *l);
int tcp_connect(struct idm_conn *conn, const struct sockaddr *sa,
		socklen_t salen, int timeout_ms);


/* tc is the transport of conn from now on. */
void tcp_conn_bind(struct tcp_conn *tc, struct idm_conn *conn);

/* The data segment limits of the keys in force, read once here rather
 * than per PDU. Called at bind (the defaults, 8192 both ways) and again
 * whenever keys are noticed (tcp_notice_key_values, which an adopted
 * connection gets too): the only times libidm changes them. The keys
 * never go below 512 (RFC 7143 13.12), so the limits are never 0. */
static inline void tcp_conn_note_limits(struct tcp_conn *tc)
{
	const struct idm_conn_params *p = tc->params;

	tc->send_dsl = tc->target ? p->initiator_recv_dsl : p->target_recv_dsl;
	tc->recv_dsl = tc->target ? p->target_recv_dsl : p->initiator_recv_dsl;
}

#endif
