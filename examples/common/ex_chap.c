/* SPDX-License-Identifier: BSD-2-Clause */
/* CHAP helpers (ex_chap.h). The hashes are libcrypto's (EVP): no digest
 * is written here. */
#include "ex_chap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

static const struct {
	int alg;
	const char *name;
	size_t len;
} algs[] = {
	{ EX_CHAP_MD5, "md5", 16 },
	{ EX_CHAP_SHA1, "sha1", 20 },
	{ EX_CHAP_SHA256, "sha256", 32 },
	{ EX_CHAP_SHA3_256, "sha3-256", 32 },
};

static int alg_index(int alg)
{
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (algs[i].alg == alg)
			return (int)i;
	return -1;
}

size_t ex_chap_digest_len(int alg)
{
	int i = alg_index(alg);

	return i < 0 ? 0 : algs[i].len;
}

const char *ex_chap_alg_name(int alg)
{
	int i = alg_index(alg);

	return i < 0 ? NULL : algs[i].name;
}

static const EVP_MD *evp_md(int alg)
{
	switch (alg) {
	case EX_CHAP_MD5: return EVP_md5();
	case EX_CHAP_SHA1: return EVP_sha1();
	case EX_CHAP_SHA256: return EVP_sha256();
	case EX_CHAP_SHA3_256: return EVP_sha3_256();
	default: return NULL;
	}
}

static int alg_by_name(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
		if (strlen(algs[i].name) == n && !strncasecmp(s, algs[i].name, n))
			return algs[i].alg;
	/* open-iscsi's spellings (SHA3-256, SHA256) match above; "sha-256"
	 * and the bare numbers too */
	if (n == 7 && !strncasecmp(s, "sha-256", 7))
		return EX_CHAP_SHA256;
	if (n == 1 && *s >= '5' && *s <= '8')
		return *s - '0';
	return -1;
}

int ex_chap_alg_list_parse(const char *s, int *out, int max)
{
	int n = 0;

	while (*s) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		int a;

		while (len && (*s == ' ' || *s == '\t'))
			s++, len--;
		while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
			len--;
		a = alg_by_name(s, len);
		if (a < 0)
			return -EINVAL;
		for (int i = 0; i < n; i++)
			if (out[i] == a)
				return -EINVAL;
		if (n == max)
			return -EINVAL;
		out[n++] = a;
		if (!e)
			break;
		s = e + 1;
		if (!*s)
			return -EINVAL;
	}
	return n ? n : -EINVAL;
}

int ex_chap_alg_list_format(const int *list, int n, char *out, size_t cap)
{
	size_t len = 0;

	if (!cap)
		return -ENOSPC;
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (len + 3 > cap)
			return -ENOSPC;
		if (i)
			out[len++] = ',';
		out[len++] = (char)('0' + list[i] % 10);
		out[len] = '\0';
	}
	return 0;
}

int ex_chap_alg_choose(const int *pref, int n, const char *offered)
{
	for (int i = 0; i < n; i++) {
		const char *p = offered;

		while (p && *p) {
			char *end;
			long v = strtol(p, &end, 10);

			if (end != p && (*end == ',' || !*end) && v == pref[i])
				return pref[i];
			p = strchr(p, ',');
			if (p)
				p++;
		}
	}
	return -1;
}

int ex_chap_response(int alg, uint8_t id, const char *secret, const uint8_t *chal,
		     size_t chal_len, uint8_t *out)
{
	const EVP_MD *md = evp_md(alg);
	size_t sl = strlen(secret);
	unsigned int olen = 0;
	EVP_MD_CTX *ctx;
	int ok;

	if (!md || sl > EX_CHAP_SECRET_MAX || chal_len > EX_CHAP_CHAL_MAX)
		return -EINVAL;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -EIO;
	ok = EVP_DigestInit_ex(ctx, md, NULL) == 1 &&
	     EVP_DigestUpdate(ctx, &id, 1) == 1 &&
	     EVP_DigestUpdate(ctx, secret, sl) == 1 &&
	     EVP_DigestUpdate(ctx, chal, chal_len) == 1 &&
	     EVP_DigestFinal_ex(ctx, out, &olen) == 1;
	EVP_MD_CTX_free(ctx);
	if (!ok || olen != ex_chap_digest_len(alg))
		return -EIO;
	return (int)olen;
}

bool ex_chap_equal(const void *a, const void *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n) == 0;
}

int ex_chap_random(uint8_t *chal, size_t len, uint8_t *id)
{
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	/* the fuzz harnesses only (tests/fuzz/meson.build): a challenge
	 * the seed corpus can answer, 00 01 02 ... with CHAP_I 1, so that
	 * the fuzzer reaches what follows a right response */
	for (size_t i = 0; i < len; i++)
		chal[i] = (uint8_t)i;
	if (id)
		*id = 1;
	return 0;
#endif
	if (getrandom(chal, len, 0) != (ssize_t)len)
		return -EIO;
	if (id && getrandom(id, 1, 0) != 1)
		return -EIO;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int b64val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int ex_bin_decode(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X' && s[1] != 'b' && s[1] != 'B'))
		return -EINVAL;
	if (s[1] == 'x' || s[1] == 'X') {
		const char *p = s + 2;
		size_t len = strlen(p);
		if (!len)
			return -EINVAL;
		if (len % 2) { /* odd digit count: a leading zero nibble */
			int v = hexval(*p++);
			if (v < 0 || cap < 1)
				return -EINVAL;
			out[n++] = (uint8_t)v;
		}
		for (; *p; p += 2) {
			int hi = hexval(p[0]), lo = hexval(p[1]);
			if (hi < 0 || lo < 0 || n == cap)
				return -EINVAL;
			out[n++] = (uint8_t)(hi << 4 | lo);
		}
		return (int)n;
	}
	uint32_t acc = 0;
	int bits = 0;
	for (const char *p = s + 2; *p && *p != '='; p++) {
		int v = b64val(*p);
		if (v < 0)
			return -EINVAL;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == cap)
				return -EINVAL;
			out[n++] = (uint8_t)(acc >> bits);
		}
	}
	return n ? (int)n : -EINVAL;
}

int ex_hex_encode(const uint8_t *b, size_t len, char *out, size_t cap)
{
	static const char digits[] = "0123456789abcdef";

	if (cap < 2 * len + 3)
		return -ENOSPC;
	out[0] = '0';
	out[1] = 'x';
	for (size_t i = 0; i < len; i++) {
		out[2 + 2 * i] = digits[b[i] >> 4];
		out[3 + 2 * i] = digits[b[i] & 15];
	}
	out[2 + 2 * len] = '\0';
	return 0;
}
