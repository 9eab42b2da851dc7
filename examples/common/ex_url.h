/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libiscsi-style portal URLs:
 *   SCHEME://[user[%password]@]host[:port][/target-iqn[/lun]]
 * host may be a name, an IPv4 address or a bracketed IPv6 address. The
 * scheme is kept as written ("iscsi", "iser", or one an added provider
 * declares): which provider serves it is the library's to say
 * (idm_provider_for_scheme()), so that a new provider needs no change here.
 */
#ifndef EX_URL_H
#define EX_URL_H

struct ex_url {
	char scheme[32];    /* "iscsi", "iser", ...: RFC 3986 syntax, lower case */
	char user[256];     /* CHAP name, "" if none */
	char password[256]; /* CHAP secret, "" if none */
	char host[256];     /* without brackets */
	char port[8];       /* "3260" if not given */
	char target[224];   /* "" if not given */
	int lun;            /* -1 if not given */
};

/** Parse `s`. 0, or -EINVAL with nothing guaranteed about *u. */
int ex_url_parse(const char *s, struct ex_url *u);

#endif
