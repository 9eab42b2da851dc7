/* SPDX-License-Identifier: BSD-2-Clause */
/* Parsing and building of iSCSI text key=value data segments. */
#include "ex_text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int ex_text_parse(char *buf, size_t len, struct ex_kv *kv, size_t max)
{
	size_t n = 0, i = 0;

	buf[len] = '\0'; /* the caller guarantees this byte exists */
	while (i < len) {
		char *s = buf + i;
		size_t slen = strlen(s); /* stops at a NUL inside or at buf[len] */
		char *eq;

		i += slen + 1;
		if (slen == 0)
			continue; /* padding or an empty string */
		eq = memchr(s, '=', slen);
		if (!eq || eq == s || (size_t)(eq - s) > EX_KEY_MAX)
			return -EINVAL;
		if (n == max)
			return -E2BIG;
		*eq = '\0';
		kv[n].key = s;
		kv[n].val = eq + 1;
		n++;
	}
	return (int)n;
}

const char *ex_text_get(const struct ex_kv *kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(kv[i].key, key) == 0)
			return kv[i].val;
	return NULL;
}

int ex_text_add(struct ex_textbuf *tb, const char *key, const char *fmt, ...)
{
	size_t room = tb->cap - tb->len;
	int k, v;
	va_list ap;

	k = snprintf(tb->p + tb->len, room, "%s=", key);
	if (k < 0 || (size_t)k >= room)
		return -ENOSPC;
	va_start(ap, fmt);
	v = vsnprintf(tb->p + tb->len + k, room - (size_t)k, fmt, ap);
	va_end(ap);
	/* +1: the NUL that ends the pair must fit too */
	if (v < 0 || (size_t)k + (size_t)v + 1 > room)
		return -ENOSPC;
	tb->len += (size_t)k + (size_t)v + 1;
	return 0;
}
