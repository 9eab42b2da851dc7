/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Who may log in: the default protection of a target without CHAP (only
 * loopback initiators) and allow-all. See access.h.
 */
#include "access.h"
#include "target.h"
#include "ex_log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

/* What decides, in order: allow-all, then CHAP, then the address. */
enum access_policy {
	ACCESS_LOOPBACK_ONLY, /* neither: the default */
	ACCESS_CHAP,          /* every login authenticates (login.c) */
	ACCESS_ALLOW_ALL,     /* the operator opened the target */
};

static enum access_policy policy(void)
{
	if (g_tgt.allow_all)
		return ACCESS_ALLOW_ALL;
	if (tgt_chap_required())
		return ACCESS_CHAP;
	return ACCESS_LOOPBACK_ONLY;
}

bool access_addr_is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (ss->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;

		/* an IPv4 peer of a dual-stack portal ([::]) shows as
		 * ::ffff:a.b.c.d: its loopback is 127/8 there too */
		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false; /* unknown (0) or another family: not trusted */
}

void access_request_init(struct access_request *rq, const idm_conn *ic, const char *iname,
			 const char *target)
{
	socklen_t len = sizeof(rq->addr);

	rq->iname = iname;
	rq->target = target;
	if (idm_conn_sockaddr(ic, IDM_ADDR_PEER, &rq->addr, &len) < 0)
		memset(&rq->addr, 0, sizeof(rq->addr));
}

/* The peer's address without the port, for messages. */
static const char *addr_text(const struct sockaddr_storage *ss, char *buf, size_t n)
{
	const void *a = NULL;

	if (ss->ss_family == AF_INET)
		a = &((const struct sockaddr_in *)ss)->sin_addr;
	else if (ss->ss_family == AF_INET6)
		a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
	if (!a || !inet_ntop(ss->ss_family, a, buf, (socklen_t)n))
		snprintf(buf, n, "an unknown address");
	return buf;
}

int access_check(const struct access_request *rq, char *why, size_t n)
{
	char addr[INET6_ADDRSTRLEN + 1];

	if (policy() != ACCESS_LOOPBACK_ONLY || access_addr_is_loopback(&rq->addr))
		return 0;
	/* the one line an operator sees: who, why, and how to open */
	snprintf(why, n,
		 "%s from %s: without CHAP or allow-all only loopback initiators "
		 "may log in; to serve others require CHAP (--credentials FILE) "
		 "or set allow-all (--allow-all, or allow-all = yes in the config file)",
		 rq->iname, addr_text(&rq->addr, addr, sizeof(addr)));
	return -EACCES;
}

void access_log_policy(void)
{
	switch (policy()) {
	case ACCESS_ALLOW_ALL:
		ex_warn("allow-all: every initiator that reaches a portal may log in "
			"and read and write every LUN%s; iSCSI does not encrypt: keep "
			"the portals on a private network or under IPsec",
			tgt_chap_required() ? " once CHAP passed" : ", without authentication");
		break;
	case ACCESS_CHAP:
		ex_info("access: CHAP required from every initiator, from any address");
		break;
	case ACCESS_LOOPBACK_ONLY:
		ex_info("access: loopback initiators only (no CHAP, no allow-all); "
			"see idm-target(8), SECURITY");
		break;
	}
}
