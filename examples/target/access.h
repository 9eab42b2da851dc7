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
 * left out, as tgt and LIO do).
 *
 * Initiator ACLs (--acl RULE, acl = RULE): once there is a rule, the
 * rules alone decide who may log in, loopback included: a login is
 * allowed when some rule matches both its InitiatorName and its address.
 * A rule is "NAME ADDRESS [luns=LIST]": NAME an iSCSI name (compared
 * without regard to case, RFC 3722) or *, ADDRESS an IPv4 or IPv6
 * address or prefix (10.9.0.0/24, fd00::/64, [fd00::]/64) or *. IPv4
 * addresses are compared as IPv4-mapped IPv6 (::ffff:a.b.c.d), so an
 * IPv4 rule matches an IPv4 peer of an IPv6 portal. luns= limits what
 * the initiator sees; every rule that matches adds its LUNs, one without
 * luns= gives every LUN. CHAP, when configured, applies on top.
 */
#ifndef IDM_TARGET_ACCESS_H
#define IDM_TARGET_ACCESS_H

#include <libidm/idm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/* --- initiator ACLs */
#define ACCESS_MAX_RULES 256
#define ACCESS_LUN_IDS 16384               /* LUN numbers 0 .. 16383 */
#define ACCESS_LUN_WORDS (ACCESS_LUN_IDS / 64)

/* What a login may see: every LUN, or those set in `mask` (bit N: LUN N). */
struct access_luns {
	bool all;
	uint64_t mask[ACCESS_LUN_WORDS];
};

struct access_acl;

/** A new, empty set of rules; NULL without memory. */
struct access_acl *access_acl_new(void);
void access_acl_free(struct access_acl *a);
/**
 * Parse `rule` and add it to `a`. 0; -EINVAL with `why` saying what is
 * wrong; -E2BIG beyond ACCESS_MAX_RULES; -ENOMEM.
 */
int access_acl_add(struct access_acl *a, const char *rule, char *why, size_t n);
/** Rules in `a` (NULL: 0). */
int access_acl_count(const struct access_acl *a);
/**
 * Put `a` in force (NULL or empty: no ACLs) and free the set it replaces;
 * the generation goes up, so that every loop checks its sessions again.
 * Safe while other loops log in.
 */
void access_acl_install(struct access_acl *a);
/** Bumped by every access_acl_install(). */
unsigned access_generation(void);

/**
 * access_check() that also says which LUNs the login may see (`luns`
 * may be NULL): all of them but under an ACL rule with luns=.
 */
int access_decide(const struct access_request *rq, struct access_luns *luns, char *why,
		  size_t n);

#endif
