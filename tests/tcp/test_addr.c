/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm_conn_sockaddr() (since 1.2) over real TCP sockets on 127.0.0.1: both
 * ends of both connections are known once logged in, the initiator's
 * local address is the target's peer address and the other way round,
 * and each matches what the *_name() accessors print. IDM_PORTAL_V6ONLY
 * (since 1.2): a portal on "::" leaves the port's IPv4 side to a portal
 * on "0.0.0.0", each accepts its own family; without it the "::" portal
 * is dual-stack (Linux default) and the IPv4 portal cannot bind.
 */
#include "harness.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void get_in(idm_conn *c, enum idm_addr_end end, struct sockaddr_in *out)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;

	ck_assert_int_eq(idm_conn_sockaddr(c, end, &ss, &len), 0);
	ck_assert_int_eq(len, sizeof(struct sockaddr_in));
	ck_assert_int_eq(ss.ss_family, AF_INET);
	memcpy(out, &ss, sizeof(*out));
	ck_assert_uint_eq(ntohl(out->sin_addr.s_addr), INADDR_LOOPBACK);
}

static void same_as_name(const struct sockaddr_in *in, const char *name)
{
	char want[64];

	snprintf(want, sizeof(want), "127.0.0.1:%u", ntohs(in->sin_port));
	ck_assert_str_eq(name, want);
}

START_TEST(test_sockaddr_both_ends)
{
	struct h h;
	struct h_params p;
	struct sockaddr_in ip, il, tp, tl;

	h_params_default(&p);
	ck_assert_msg(h_init(&h, 65536, 1) == 0, "h_init: %s", h.err);
	ck_assert_msg(h_connect_login(&h, &p, 5000) == 0, "login: %s", h.err);
	get_in(h.i.conn, IDM_ADDR_PEER, &ip);
	get_in(h.i.conn, IDM_ADDR_LOCAL, &il);
	get_in(h.t.conn, IDM_ADDR_PEER, &tp);
	get_in(h.t.conn, IDM_ADDR_LOCAL, &tl);
	ck_assert_uint_eq(ntohs(ip.sin_port), (unsigned)h.port);
	ck_assert_uint_eq(ntohs(tl.sin_port), (unsigned)h.port);
	ck_assert_uint_eq(il.sin_port, tp.sin_port);
	same_as_name(&ip, idm_conn_peer_name(h.i.conn));
	same_as_name(&il, idm_conn_local_name(h.i.conn));
	same_as_name(&tp, idm_conn_peer_name(h.t.conn));
	same_as_name(&tl, idm_conn_local_name(h.t.conn));
	h_log("idm_conn_sockaddr: initiator %s -> %s, target sees %s from %s",
	      idm_conn_local_name(h.i.conn), idm_conn_peer_name(h.i.conn),
	      idm_conn_peer_name(h.t.conn), idm_conn_local_name(h.t.conn));
	h_fini(&h);
}
END_TEST

struct v6_seen {
	int accepted;
	int family; /* of the peer, from idm_conn_sockaddr() */
	idm_conn *conn;
};

static const struct idm_conn_cbs v6_cbs = { .size = sizeof(v6_cbs) };

static int v6_accept(idm_portal *portal, idm_conn *conn, void *arg)
{
	struct v6_seen *seen = arg;
	struct sockaddr_storage ss;
	socklen_t len;

	(void)portal;
	seen->accepted++;
	seen->family = idm_conn_sockaddr(conn, IDM_ADDR_PEER, &ss, &len) == 0 ?
		       ss.ss_family : -1;
	seen->conn = conn;
	return idm_conn_set_cbs(conn, &v6_cbs, NULL);
}

/* connect() a plain socket to host:port; the fd, or -1 */
static int raw_connect(int family, int port)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		in6->sin6_addr = in6addr_loopback;
		len = sizeof(*in6);
	}
	if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void progress_until_accepted(idm_ctx *ctx, struct v6_seen *seen)
{
	for (int i = 0; i < 200 && !seen->accepted; i++)
		(void)idm_ctx_progress(ctx, 10);
}

START_TEST(test_portal_v6only)
{
	struct v6_seen s6 = { 0 }, s4 = { 0 };
	struct idm_portal_attr a6 = { .size = sizeof(a6), .accept = v6_accept,
				      .arg = &s6, .flags = IDM_PORTAL_V6ONLY };
	struct idm_portal_attr a4 = { .size = sizeof(a4), .accept = v6_accept,
				      .arg = &s4 };
	struct idm_ctx_attr ca = { .size = sizeof(ca) };
	idm_portal *p6 = NULL, *p4 = NULL;
	idm_ctx *ctx;
	char port[16];
	int fd6, fd4, r;

	ck_assert_int_eq(idm_ctx_create(&ca, &ctx), 0);
	r = idm_portal_create(ctx, "::", "0", &a6, &p6);
	if (r == -EAFNOSUPPORT || r == -EADDRNOTAVAIL) {
		h_log("no IPv6 here (%s): IDM_PORTAL_V6ONLY not checked", idm_strerror(r));
		idm_ctx_destroy(ctx);
		return;
	}
	ck_assert_msg(r == 0, "portal on :: with IDM_PORTAL_V6ONLY: %s", idm_strerror(r));
	snprintf(port, sizeof(port), "%d", idm_portal_port(p6));
	r = idm_portal_create(ctx, "0.0.0.0", port, &a4, &p4);
	ck_assert_msg(r == 0, "IPv4 portal beside a V6ONLY one on port %s: %s",
		      port, idm_strerror(r));
	/* each family reaches its own portal */
	fd6 = raw_connect(AF_INET6, atoi(port));
	ck_assert_int_ge(fd6, 0);
	progress_until_accepted(ctx, &s6);
	fd4 = raw_connect(AF_INET, atoi(port));
	ck_assert_int_ge(fd4, 0);
	progress_until_accepted(ctx, &s4);
	ck_assert_int_eq(s6.accepted, 1);
	ck_assert_int_eq(s6.family, AF_INET6);
	ck_assert_int_eq(s4.accepted, 1);
	ck_assert_int_eq(s4.family, AF_INET);
	idm_conn_destroy(s6.conn);
	idm_conn_destroy(s4.conn);
	close(fd6);
	close(fd4);
	idm_portal_destroy(p4);
	idm_portal_destroy(p6);

	/* without the flag: dual-stack (Linux default, bindv6only 0), the
	 * IPv4 portal on the same port is refused */
	a6.flags = 0;
	ck_assert_int_eq(idm_portal_create(ctx, "::", "0", &a6, &p6), 0);
	snprintf(port, sizeof(port), "%d", idm_portal_port(p6));
	p4 = NULL;
	r = idm_portal_create(ctx, "0.0.0.0", port, &a4, &p4);
	ck_assert_msg(r == -EADDRINUSE, "IPv4 portal beside a dual-stack one: %s",
		      idm_strerror(r));
	ck_assert_ptr_null(p4);
	idm_portal_destroy(p6);
	idm_ctx_destroy(ctx);
	h_log("IDM_PORTAL_V6ONLY: :: and 0.0.0.0 on port %s, each accepted its family; without it EADDRINUSE", port);
}
END_TEST

int main(int argc, char **argv)
{
	const TTest *const tests[] = { test_sockaddr_both_ends,
				       test_portal_v6only, NULL };

	(void)argc;
	return h_main(argv[0], 60, "addr", "addr", 30, tests);
}
