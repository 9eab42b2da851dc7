/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Who may log in: the default protection of a target without CHAP (only
 * loopback initiators), allow-all, and initiator ACLs. See access.h.
 */
#include "access.h"
#include "target.h"
#include "ex_log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ctype.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One rule: an initiator name (NULL: any), an address prefix in the
 * IPv6 space (IPv4 as ::ffff:a.b.c.d/96+n) or any, and the LUNs it
 * grants (NULL: all). */
struct acl_rule {
	char *name;
	bool any_addr;
	uint8_t addr[16];
	unsigned plen;
	uint64_t *luns;
};

struct access_acl {
	int n;
	struct acl_rule r[ACCESS_MAX_RULES];
};

/* The rules in force: read by every loop at login, replaced by SIGHUP. */
static pthread_mutex_t acl_lock = PTHREAD_MUTEX_INITIALIZER;
static struct access_acl *acl;
static unsigned acl_gen;

/* What decides, in order: ACLs, allow-all, then CHAP, then the address.
 * (main.c refuses ACLs with allow-all.) */
enum access_policy {
	ACCESS_LOOPBACK_ONLY, /* neither: the default */
	ACCESS_CHAP,          /* every login authenticates (login.c) */
	ACCESS_ALLOW_ALL,     /* the operator opened the target */
	ACCESS_ACL,           /* the rules name who may log in */
};

/* Under acl_lock. */
static enum access_policy policy(void)
{
	if (acl && acl->n)
		return ACCESS_ACL;
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

/* The peer's address in the IPv6 space (IPv4 mapped); false if unknown. */
static bool peer_addr16(const struct sockaddr_storage *ss, uint8_t out[16])
{
	if (ss->ss_family == AF_INET) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
		return true;
	}
	if (ss->ss_family == AF_INET6) {
		memcpy(out, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
		return true;
	}
	return false;
}

static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned plen)
{
	unsigned bytes = plen / 8, bits = plen % 8;

	if (memcmp(a, b, bytes))
		return false;
	return !bits || !((a[bytes] ^ b[bytes]) & (uint8_t)(0xff << (8 - bits)));
}

static bool rule_matches(const struct acl_rule *r, const char *iname, bool known,
			 const uint8_t *peer)
{
	if (r->name && (!iname || strcasecmp(r->name, iname)))
		return false;
	return r->any_addr || (known && prefix_match(r->addr, peer, r->plen));
}

/* Under acl_lock: the rules' verdict, and the union of their LUNs. */
static bool acl_decide(const struct access_request *rq, struct access_luns *luns)
{
	uint8_t peer[16];
	bool known = peer_addr16(&rq->addr, peer), ok = false;

	if (luns)
		memset(luns, 0, sizeof(*luns));
	for (int i = 0; i < acl->n; i++) {
		const struct acl_rule *r = &acl->r[i];

		if (!rule_matches(r, rq->iname, known, peer))
			continue;
		ok = true;
		if (!luns)
			break;
		if (!r->luns)
			luns->all = true;
		else
			for (int w = 0; w < ACCESS_LUN_WORDS; w++)
				luns->mask[w] |= r->luns[w];
	}
	return ok;
}

int access_decide(const struct access_request *rq, struct access_luns *luns, char *why,
		  size_t n)
{
	char addr[INET6_ADDRSTRLEN + 1];
	enum access_policy p;

	pthread_mutex_lock(&acl_lock);
	p = policy();
	if (p == ACCESS_ACL) {
		bool ok = acl_decide(rq, luns);

		pthread_mutex_unlock(&acl_lock);
		if (ok)
			return 0;
		snprintf(why, n,
			 "%s from %s: no initiator ACL rule allows it; to serve it add "
			 "one (--acl, or acl = NAME ADDRESS in the config file)",
			 rq->iname, addr_text(&rq->addr, addr, sizeof(addr)));
		return -EACCES;
	}
	pthread_mutex_unlock(&acl_lock);
	if (luns) {
		memset(luns, 0, sizeof(*luns));
		luns->all = true;
	}
	if (p != ACCESS_LOOPBACK_ONLY || access_addr_is_loopback(&rq->addr))
		return 0;
	/* the one line an operator sees: who, why, and how to open */
	snprintf(why, n,
		 "%s from %s: without CHAP or allow-all only loopback initiators "
		 "may log in; to serve others require CHAP (--credentials FILE) "
		 "or set allow-all (--allow-all, or allow-all = yes in the config file)",
		 rq->iname, addr_text(&rq->addr, addr, sizeof(addr)));
	return -EACCES;
}

int access_check(const struct access_request *rq, char *why, size_t n)
{
	return access_decide(rq, NULL, why, n);
}

/* --- parsing rules */

static void rule_free(struct acl_rule *r)
{
	free(r->name);
	free(r->luns);
	memset(r, 0, sizeof(*r));
}

struct access_acl *access_acl_new(void)
{
	return calloc(1, sizeof(struct access_acl));
}

void access_acl_free(struct access_acl *a)
{
	if (!a)
		return;
	for (int i = 0; i < a->n; i++)
		rule_free(&a->r[i]);
	free(a);
}

int access_acl_count(const struct access_acl *a)
{
	return a ? a->n : 0;
}

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return strlen(s) == n;
}

/* An iSCSI name (RFC 7143 4.2.7): iqn., eui. (16 hex digits) or naa.
 * (16 or 32), at most 223 bytes. */
static int parse_name(const char *tok, struct acl_rule *r, char *why, size_t n)
{
	size_t len = strlen(tok);

	if (!strcmp(tok, "*"))
		return 0;
	if (len > 223) {
		snprintf(why, n, "initiator name longer than 223 bytes");
		return -EINVAL;
	}
	if (!((!strncasecmp(tok, "iqn.", 4) && len > 4) ||
	      (!strncasecmp(tok, "eui.", 4) && all_hex(tok + 4, 16)) ||
	      (!strncasecmp(tok, "naa.", 4) && (all_hex(tok + 4, 16) || all_hex(tok + 4, 32))))) {
		snprintf(why, n, "'%.64s' is not an iSCSI name (iqn.DATE.AUTHORITY[:ID], eui. and 16 hex "
			 "digits, naa. and 16 or 32) nor *", tok);
		return -EINVAL;
	}
	r->name = strdup(tok);
	return r->name ? 0 : -ENOMEM;
}

/* "*", "A.B.C.D[/N]", "X::Y[/N]" or "[X::Y][/N]". */
/* The host part of an address token into host[HOST_MAX] and where its
 * prefix length starts (*slash: at the '/', NULL without one). False: not
 * an address's shape. */
#define HOST_MAX (INET6_ADDRSTRLEN + 8)
static bool split_host(const char *tok, char *host, const char **slash)
{
	size_t len;

	if (tok[0] == '[') {
		const char *rb = strchr(tok, ']');

		if (!rb || (rb[1] && rb[1] != '/') || (size_t)(rb - tok - 1) >= HOST_MAX)
			return false;
		snprintf(host, HOST_MAX, "%.*s", (int)(rb - tok - 1), tok + 1);
		*slash = rb[1] ? rb + 1 : NULL;
		return strchr(host, ':') != NULL; /* brackets are for IPv6 */
	}
	*slash = strchr(tok, '/');
	len = *slash ? (size_t)(*slash - tok) : strlen(tok);
	if (len >= HOST_MAX)
		return false;
	snprintf(host, HOST_MAX, "%.*s", (int)len, tok);
	return true;
}

/* The host as a 16-byte address, IPv4 mapped into IPv6 (::ffff:a.b.c.d) */
static bool host_addr(const char *host, bool v6, uint8_t *addr)
{
	if (v6)
		return inet_pton(AF_INET6, host, addr) == 1;
	memset(addr, 0, 10);
	addr[10] = addr[11] = 0xff;
	return inet_pton(AF_INET, host, addr + 12) == 1;
}

/* "/N": at most three digits. Returns N, or -1 when it is not a number. */
static int prefix_digits(const char *d)
{
	int v = 0;

	if (!*d || strlen(d) > 3)
		return -1;
	for (; *d; d++) {
		if (!isdigit((unsigned char)*d))
			return -1;
		v = v * 10 + (*d - '0');
	}
	return v;
}

/* Bits beyond the prefix are a mistake: say which network it is */
static int check_host_bits(const char *tok, const struct acl_rule *r, bool v6, unsigned plen,
			   char *why, size_t n)
{
	char text[INET6_ADDRSTRLEN + 1];
	uint8_t masked[16];

	memset(masked, 0, sizeof(masked));
	memcpy(masked, r->addr, r->plen / 8);
	if (r->plen % 8)
		masked[r->plen / 8] = r->addr[r->plen / 8] & (uint8_t)(0xff << (8 - r->plen % 8));
	if (!memcmp(masked, r->addr, 16))
		return 0;
	inet_ntop(v6 ? AF_INET6 : AF_INET, v6 ? masked : masked + 12, text, sizeof(text));
	snprintf(why, n, "'%.64s': host bits set; the network is %s/%u", tok, text, plen);
	return -EINVAL;
}

static int parse_addr(const char *tok, struct acl_rule *r, char *why, size_t n)
{
	char host[HOST_MAX];
	const char *slash = NULL;
	bool v6;
	unsigned max, plen;

	if (!strcmp(tok, "*")) {
		r->any_addr = true;
		return 0;
	}
	if (!split_host(tok, host, &slash))
		goto bad;
	if (strchr(host, '%')) {
		snprintf(why, n, "'%.64s': zone indexes (%%) are not supported", tok);
		return -EINVAL;
	}
	v6 = strchr(host, ':') != NULL;
	if (!host_addr(host, v6, r->addr))
		goto bad;
	max = v6 ? 128 : 32;
	plen = max;
	if (slash) {
		int v = prefix_digits(slash + 1);

		if (v < 0)
			goto bad;
		if ((unsigned)v > max) {
			snprintf(why, n, "'%.64s': the prefix length of an %s address is 0 "
				 "to %u", tok, v6 ? "IPv6" : "IPv4", max);
			return -EINVAL;
		}
		plen = (unsigned)v;
	}
	r->plen = v6 ? plen : 96 + plen;
	return check_host_bits(tok, r, v6, plen, why, n);
bad:
	snprintf(why, n, "'%.64s' is not an address or prefix (10.9.0.0/24, fd00::/64, "
		 "[fd00::1]) nor *", tok);
	return -EINVAL;
}

/* "luns=N[,N|N-M]..." */
static int parse_luns(const char *tok, struct acl_rule *r, char *why, size_t n)
{
	const char *p = tok + 5;

	r->luns = calloc(ACCESS_LUN_WORDS, sizeof(uint64_t));
	if (!r->luns)
		return -ENOMEM;
	for (;;) {
		long lo, hi;
		char *end;

		if (!isdigit((unsigned char)*p))
			goto bad;
		lo = strtol(p, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				goto bad;
			hi = strtol(end + 1, &end, 10);
		}
		if (lo > hi || hi >= ACCESS_LUN_IDS)
			goto bad;
		for (long i = lo; i <= hi; i++)
			r->luns[i / 64] |= 1ull << (i % 64);
		if (!*end)
			return 0;
		if (*end != ',')
			goto bad;
		p = end + 1;
	}
bad:
	snprintf(why, n, "'%.64s': use luns=N,N-M,... with LUN numbers 0 to %d", tok,
		 ACCESS_LUN_IDS - 1);
	return -EINVAL;
}

int access_acl_add(struct access_acl *a, const char *rule, char *why, size_t n)
{
	char buf[512], *tok[4], *save = NULL, *t;
	struct acl_rule r = { 0 };
	int ntok = 0, rc;

	if (strlen(rule) >= sizeof(buf)) {
		snprintf(why, n, "rule longer than %zu bytes", sizeof(buf) - 1);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", rule);
	for (t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (ntok == 3) {
			ntok++;
			break;
		}
		tok[ntok++] = t;
	}
	if (ntok < 2 || ntok > 3 || (ntok == 3 && strncmp(tok[2], "luns=", 5))) {
		snprintf(why, n, "acl rule '%.128s': use NAME ADDRESS [luns=LIST], NAME an "
			 "initiator name or *, ADDRESS an address, a prefix or *", rule);
		return -EINVAL;
	}
	if (a->n == ACCESS_MAX_RULES) {
		snprintf(why, n, "too many acl rules (max %d)", ACCESS_MAX_RULES);
		return -E2BIG;
	}
	if ((rc = parse_name(tok[0], &r, why, n)) < 0 ||
	    (rc = parse_addr(tok[1], &r, why, n)) < 0 ||
	    (ntok == 3 && (rc = parse_luns(tok[2], &r, why, n)) < 0)) {
		if (rc == -ENOMEM)
			snprintf(why, n, "out of memory");
		rule_free(&r);
		return rc;
	}
	a->r[a->n++] = r;
	return 0;
}

void access_acl_install(struct access_acl *a)
{
	struct access_acl *old;

	if (a && !a->n) {
		access_acl_free(a);
		a = NULL;
	}
	pthread_mutex_lock(&acl_lock);
	old = acl;
	acl = a;
	__atomic_add_fetch(&acl_gen, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&acl_lock);
	access_acl_free(old);
}

unsigned access_generation(void)
{
	return __atomic_load_n(&acl_gen, __ATOMIC_ACQUIRE);
}

void access_log_policy(void)
{
	enum access_policy p;
	int nrules;

	pthread_mutex_lock(&acl_lock);
	p = policy();
	nrules = acl ? acl->n : 0;
	pthread_mutex_unlock(&acl_lock);
	switch (p) {
	case ACCESS_ACL:
		ex_info("access: %d initiator ACL rule(s): only the initiators and "
			"addresses they name may log in, loopback included%s",
			nrules, g_tgt.chap_user ? ", and with CHAP" : "");
		break;
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
