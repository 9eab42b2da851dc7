/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm_conn_sockaddr() (since 1.2) over real TCP sockets on 127.0.0.1: both
 * ends of both connections are known once logged in, the initiator's
 * local address is the target's peer address and the other way round,
 * and each matches what the *_name() accessors print.
 */
#include "harness.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

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

int main(int argc, char **argv)
{
	Suite *s = suite_create("addr");
	TCase *tc = tcase_create("addr");

	(void)argc;
	if (!h_main_prologue(argv[0], 60))
		return 77;
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_sockaddr_both_ends);
	suite_add_tcase(s, tc);
	return h_run_suite(s);
}
