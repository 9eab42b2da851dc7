/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which engine a context's TCP connections use (tcp_engine.h): chosen
 * once, when the context starts, by IDM_TCP_ENGINE.
 */
#include "tcp.h"
#include "tcp_engine.h"
#include "tcp_engine_epoll.h"
#include "tcp_engine_uring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void tcp_engine_init(struct tcp_knobs *k, struct idm_ctx *ctx)
{
	const char *v = getenv("IDM_TCP_ENGINE");
	const char *why = "";
	int err;

	k->eops = &tcp_engine_epoll;
	k->eng = NULL;
	if (v && !strcmp(v, "epoll"))
		return;
	if (v && *v && strcmp(v, "uring") && strcmp(v, "auto"))
		idm_prov_warn(ctx, "tcp: IDM_TCP_ENGINE=%s is not auto, epoll "
			      "or uring: auto", v);
	bool asked = v && !strcmp(v, "uring");

	if (!asked && !TCP_ENGINE_AUTO_URING)
		return;
	err = tcp_engine_uring.open(k, ctx, &why);
	if (!err) {
		k->eops = &tcp_engine_uring;
		return;
	}
	k->eng = NULL;
	if (err == -EOPNOTSUPP) { /* built without liburing */
		if (asked)
			idm_prov_warn(ctx, "tcp: io_uring engine unavailable, "
				      "using epoll: %s", why);
		return;
	}
	/* a warning when io_uring was asked for by name; under auto, where
	 * a container's seccomp profile commonly refuses it, information */
	idm_prov_log(ctx, asked ? IDM_LOG_WARN : IDM_LOG_INFO,
		     "tcp: io_uring engine unavailable, using epoll: %s (%s)",
		     why, strerror(-err));
}

void tcp_engine_fini(struct tcp_knobs *k)
{
	if (k->eops)
		k->eops->close(k);
	k->eops = &tcp_engine_epoll;
	k->eng = NULL;
}

void tcp_engine_bind(struct tcp_conn *tc, const struct tcp_knobs *k)
{
	tc->eops = k ? k->eops : &tcp_engine_epoll;
	tc->eng = k ? k->eng : NULL;
}

void tcp_engine_move(struct tcp_conn *tc)
{
	const struct tcp_knobs *k = (const struct tcp_knobs *)idm_prov_priv(
		idm_prov_conn_provider(tc->conn));

	tc->eops->detach(tc);
	tcp_engine_bind(tc, k);
	tc->eops->attach(tc);
}
