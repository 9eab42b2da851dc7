/* SPDX-License-Identifier: BSD-2-Clause */
/* Parser for SCHEME://host... portal URLs (iscsi://, iser://, ...). */
#include "ex_url.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Copy [s, s+n) into dst[cap] with NUL; -EINVAL if it does not fit. */
static int cpy(char *dst, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		return -EINVAL;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

/*
 * The scheme before "://": ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
 * (RFC 3986 section 3.1), folded to lower case as that section asks.
 * Returns where the authority starts, or NULL.
 */
static const char *parse_scheme(const char *s, char *dst, size_t cap)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			     "0123456789+-.");

	if (n == 0 || !isalpha((unsigned char)s[0]) || strncmp(s + n, "://", 3) ||
	    cpy(dst, cap, s, n))
		return NULL;
	for (char *c = dst; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return s + n + 3;
}

/* [user[%password]@]: up to the last '@' before the path (a '%' in the
 * password stays). Returns where the host starts, or NULL. */
static const char *parse_userinfo(const char *p, const char *slash, struct ex_url *u)
{
	const char *at = NULL, *pct;

	for (const char *q = p; q < slash; q++)
		if (*q == '@')
			at = q;
	if (!at)
		return p;
	pct = memchr(p, '%', (size_t)(at - p));
	if (!pct)
		return cpy(u->user, sizeof(u->user), p, (size_t)(at - p)) ? NULL : at + 1;
	if (cpy(u->user, sizeof(u->user), p, (size_t)(pct - p)) ||
	    cpy(u->password, sizeof(u->password), pct + 1, (size_t)(at - pct - 1)))
		return NULL;
	return at + 1;
}

/* host, [v6 host] or either with :port, up to the path. */
static int parse_hostport(const char *p, const char *slash, struct ex_url *u)
{
	const char *colon = NULL, *hend;

	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(slash - p));

		if (!rb || cpy(u->host, sizeof(u->host), p + 1, (size_t)(rb - p - 1)))
			return -EINVAL;
		hend = rb + 1;
		if (hend < slash && *hend == ':')
			colon = hend;
		else if (hend != slash)
			return -EINVAL;
	} else {
		colon = memchr(p, ':', (size_t)(slash - p));
		hend = colon ? colon : slash;
		if (cpy(u->host, sizeof(u->host), p, (size_t)(hend - p)))
			return -EINVAL;
	}
	if (!u->host[0])
		return -EINVAL;
	if (colon) {
		size_t n = (size_t)(slash - colon - 1);

		if (n == 0 || strspn(colon + 1, "0123456789") < n ||
		    cpy(u->port, sizeof(u->port), colon + 1, n) || atoi(u->port) > 65535)
			return -EINVAL;
	}
	return 0;
}

/* [/target-iqn[/lun]] */
static int parse_path(const char *slash, struct ex_url *u)
{
	const char *t = slash + 1, *l;
	char *end;
	long v;

	if (*slash != '/')
		return 0;
	l = strchr(t, '/');
	if (cpy(u->target, sizeof(u->target), t, l ? (size_t)(l - t) : strlen(t)))
		return -EINVAL;
	if (!l)
		return 0;
	v = strtol(l + 1, &end, 10);
	if (end == l + 1 || *end || v < 0 || v > 16383)
		return -EINVAL;
	u->lun = (int)v;
	return 0;
}

int ex_url_parse(const char *s, struct ex_url *u)
{
	const char *p, *slash;

	memset(u, 0, sizeof(*u));
	u->lun = -1;
	strcpy(u->port, "3260");
	p = parse_scheme(s, u->scheme, sizeof(u->scheme));
	if (!p)
		return -EINVAL;
	slash = strchr(p, '/');
	if (!slash)
		slash = p + strlen(p);
	p = parse_userinfo(p, slash, u);
	if (!p || parse_hostport(p, slash, u))
		return -EINVAL;
	return parse_path(slash, u);
}
