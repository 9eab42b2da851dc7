/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The TCP provider's receive path, target role, with idm-target's iSCSI
 * layer on top: the input is the byte stream a hostile initiator sends,
 * written into a connection accepted by a 127.0.0.1 portal of the real
 * libidm and tcp provider (public API only, no internal file of either), read by
 * the provider's receive state machine, and whatever it delivers handled
 * by examples/target as idm-target would. What the target sends back is
 * read and dropped. An input ends when the target has closed the
 * connection after the stream's end (EOF).
 *
 * The context, provider, portal and LUNs are set up once; each input gets
 * a connection of its own, a socketpair the provider accepts in place of
 * a TCP connection (sock_shim.c: a TCP handshake and teardown per input
 * cost more than the code under test). The digests are whatever the
 * stream's own login negotiates (HeaderDigest/DataDigest keys).
 *
 * In a -Dfuzz=true build libidm and the provider are instrumented too
 * (top-level meson.build), so their coverage guides the fuzzing and ASan
 * watches them. Needs IDM_PROVIDER_PATH to find the provider in the build
 * tree (meson test and run-long.sh set it; `meson devenv` too).
 */
#include "fuzz.h"

#include "authlimit.h"
#include "budget.h"
#include "ex_log.h"
#include "sock_shim.h"
#include "target.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_ROUNDS 4000 /* progress calls per input: a bound, never reached */

struct target g_tgt;
/* the target's one event loop (examples/target/loop.c) */
static struct loop loop0;
static idm_portal *portal;

static void init_once(void)
{
	const char *l = getenv("IDM_FUZZ_LOG"); /* 3: what the target says */
	struct idm_ctx_attr ca = {
		.size = sizeof(ca),
		.log_fn = ex_log_idm_sink,
		.log_level = l ? atoi(l) : -1,
	};
	struct idm_portal_attr pa = {
		.size = sizeof(pa),
		.providers = "tcp",
		.accept = conn_accept,
	};
	const struct idm_provider_info *prov;
	size_t nprov;
	int r;

	g_loop = &loop0;
	ex_log_init("fuzz_tcp_target", l ? atoi(l) : -1);
	/* A socketpair has no dead-peer timers to set: spare the provider
	 * failing setsockopt()s and a TCP_INFO per connection
	 * (providers/tcp/README.md) */
	setenv("IDM_TCP_USER_TIMEOUT_MS", "0", 0);
	setenv("IDM_TCP_ZERO_WINDOW_TIMEOUT_MS", "0", 0);
	setenv("IDM_TCP_KEEPIDLE", "0", 0);
	setenv("IDM_TCP_KEEPINTVL", "0", 0);
	setenv("IDM_TCP_KEEPCNT", "0", 0);
	/* the login budgets (budget.c) with their defaults */
	if (budget_init(0) < 0)
		abort();
	g_tgt.name = "iqn.2026-11.org.libidm:fuzz";
	/* the peer is a socketpair, not loopback: what is fuzzed here is
	 * the provider's receive path, past the access check (access.c) */
	g_tgt.allow_all = true;
	/* failed logins of one input must not refuse the next ones */
	g_authlimit_max = 0;
	if (lun_open("ram:64K", 0, 512, &g_tgt.luns[0]) < 0 ||
	    lun_open("ram:64K,ro", 1, 4096, &g_tgt.luns[1]) < 0)
		abort();
	g_tgt.nluns = 2;
	r = idm_ctx_create(&ca, &g_loop->ctx);
	if (r < 0) {
		fprintf(stderr, "idm_ctx_create: %s\n", idm_strerror(r));
		abort();
	}
	if (idm_get_providers(g_loop->ctx, &prov, &nprov) == 0)
		for (size_t i = 0; i < nprov; i++)
			g_tgt.caps |= prov[i].caps;
	for (int i = 0; i < g_tgt.nluns; i++)
		if (lun_attach_ctx(g_tgt.luns[i], g_loop->ctx) < 0)
			abort();
	r = idm_portal_create(g_loop->ctx, "127.0.0.1", "0", &pa, &portal);
	if (r < 0) {
		fprintf(stderr, "no tcp portal on 127.0.0.1 (IDM_PROVIDER_PATH=%s): %s\n",
			getenv("IDM_PROVIDER_PATH") ? getenv("IDM_PROVIDER_PATH") : "",
			idm_strerror(r));
		abort();
	}
	r = shim_listener(idm_portal_port(portal));
	if (r < 0) {
		fprintf(stderr, "the portal's listening socket: %s\n", strerror(-r));
		abort();
	}
}

/* A fresh connection: our end, and the provider's to accept. */
static int dial(void)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("socketpair");
		abort();
	}
	shim_accept_next(sv[1]);
	return sv[0];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t sink[65536];
	size_t off = 0;
	bool shut = false, eof = false, seen = false;
	int fd;

	if (!portal)
		init_once();
	fd = dial();
	for (int round = 0; round < MAX_ROUNDS; round++) {
		bool busy = false;
		ssize_t n;

		if (off < size) {
			n = send(fd, data + off, size - off, MSG_NOSIGNAL);
			if (n > 0) {
				off += (size_t)n;
				busy = true;
			} else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
				off = size; /* the target closed: the rest is moot */
			}
		}
		if (off == size && !shut) {
			shutdown(fd, SHUT_WR); /* EOF: the stream is all there */
			shut = true;
		}
		while ((n = recv(fd, sink, sizeof(sink), 0)) > 0)
			busy = true;
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
			eof = true;
		idm_ctx_progress(g_loop->ctx, busy ? 0 : 1);
		conn_reap();
		session_timers();
		if (g_loop->conns)
			seen = true;
		/* done: the target let go of the connection, or closed it after
		 * the whole stream went in */
		if (shut && ((seen && !g_loop->conns) || eof))
			break;
	}
	close(fd);
	/* the provider sees the close; the target releases the connection */
	for (int round = 0; round < 100 && g_loop->conns; round++) {
		idm_ctx_progress(g_loop->ctx, 1);
		conn_reap();
	}
	conn_destroy_all();
	while (g_loop->sessions)
		session_destroy(g_loop->sessions);
	return 0;
}
