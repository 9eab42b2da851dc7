/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iSCSI text parameters (RFC 7143 section 6): a data segment of
 * "key=value" strings, each ended by a NUL byte.
 */
#ifndef EX_TEXT_H
#define EX_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Limits from RFC 7143 section 6.1. */
#define EX_KEY_MAX 63
#define EX_VALUE_MAX 8192 /* 255 for most keys; 8192 for lists/binary */

struct ex_kv {
	const char *key; /* points into the buffer given to ex_text_parse */
	const char *val;
};

/**
 * Split `buf` (len bytes) into key=value pairs, in place: each '=' and each
 * separator becomes NUL. `buf` must have one writable byte past `len` (a
 * final pair may lack its NUL when it was cut by a Continue). Empty strings
 * (padding) are skipped. Returns the number of pairs, -EINVAL for a pair
 * without '=' or an over-long key, -E2BIG if more than `max` pairs.
 */
int ex_text_parse(char *buf, size_t len, struct ex_kv *kv, size_t max);

/** Value of `key` among the `n` pairs, or NULL. */
const char *ex_text_get(const struct ex_kv *kv, size_t n, const char *key);

/* A bounded builder of text data segments. */
struct ex_textbuf {
	char *p;    /* caller storage */
	size_t cap; /* its size */
	size_t len; /* bytes used, NULs included */
};

static inline void ex_textbuf_init(struct ex_textbuf *tb, char *p, size_t cap)
{
	tb->p = p;
	tb->cap = cap;
	tb->len = 0;
}

/** Append "key=value\0" (value printf-style). -ENOSPC if it does not fit
 * (nothing appended then). */
int ex_text_add(struct ex_textbuf *tb, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
