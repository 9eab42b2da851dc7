/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_adopt.c: sockets the caller set up (idm_conn_adopt_fd(),
 * idm_portal_create_fd()).
 */
#ifndef LIBIDM_TCP_ADOPT_H
#define LIBIDM_TCP_ADOPT_H

#include "tcp.h"

int tcp_adopt(struct idm_conn *conn, int fd);
int tcp_listen_fd(struct idm_prov_listener *l, int fd);

#endif
