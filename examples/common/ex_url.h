/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libiscsi-style portal URLs:
 *   iscsi://[user[%password]@]host[:port][/target-iqn[/lun]]
 *   iser://...   (same syntax, selects the iSER provider)
 * host may be a name, an IPv4 address or a bracketed IPv6 address.
 */
#ifndef EX_URL_H
#define EX_URL_H

struct ex_url {
	char provider[8];   /* "tcp" for iscsi://, "iser" for iser:// */
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
