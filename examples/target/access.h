/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Who may log in to idm-target (see doc/idm-target.md, "Security").
 *
 * Protected by default: with no CHAP and no allow-all, only initiators
 * that connect from loopback (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104)
 * are served, so that a target started with its defaults on 0.0.0.0
 * does not hand its LUNs to the network. CHAP (--chap, --credentials)
 * authenticates every login, so that any address may try; allow-all
 * serves everyone, as idm-target did before.
 *
 * Every decision goes through access_check(): the login of a normal
 * session (refused with 0x0202, authorization failure) and SendTargets
 * in a discovery session (targets the initiator may not log in to are
 * left out, as tgt and LIO do). Initiator ACLs, by name and by
 * address, belong there too.
 */
#ifndef IDM_TARGET_ACCESS_H
#define IDM_TARGET_ACCESS_H

#include <libidm/idm.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* Who asks: what the login told us, and the address it came from. */
struct access_request {
	const char *iname;             /* InitiatorName */
	const char *target;            /* the target asked for */
	struct sockaddr_storage addr;  /* the peer; ss_family 0 if unknown */
};

/** Fill `rq` for a login or text request on connection `ic`. */
void access_request_init(struct access_request *rq, const idm_conn *ic, const char *iname,
			 const char *target);

/**
 * May `rq` log in to (or discover) its target? 0 if so; -EACCES if not,
 * with `why` (one line, to log) saying why and how to open the target.
 */
int access_check(const struct access_request *rq, char *why, size_t n);

/** The address is a loopback one (IPv4, IPv6, or IPv4-mapped IPv6). */
bool access_addr_is_loopback(const struct sockaddr_storage *ss);

/** Log the policy in force, once at start-up (a warning for allow-all). */
void access_log_policy(void);

#endif
