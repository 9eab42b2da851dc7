/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_cm.c: connections made with librdmacm (the provider's listen,
 * connect and conn_is_capable ops). */
#ifndef IDM_ISER_CM_H
#define IDM_ISER_CM_H

#include "iser.h"

int iser_listen(struct idm_prov_listener *l, const struct sockaddr *sa,
		socklen_t salen, int backlog);
void iser_unlisten(struct idm_prov_listener *l);
int iser_listener_port(struct idm_prov_listener *l);
int iser_connect(struct idm_conn *c, const struct sockaddr *sa, socklen_t salen,
		 int timeout_ms);
int iser_conn_is_capable(struct idm_prov *prov, const struct sockaddr *sa,
			 socklen_t salen);

#endif
