/* SPDX-License-Identifier: BSD-2-Clause */
/* MD5 (RFC 1321) and CHAP helpers; self-contained so the examples need
 * no crypto library. MD5 is what CHAP_A=5 mandates, not a choice. */
#include "ex_chap.h"

#include <errno.h>
#include <string.h>

static uint32_t rol(uint32_t x, int c)
{
	return (x << c) | (x >> (32 - c));
}

static void md5_block(uint32_t h[4], const uint8_t *p)
{
	static const uint32_t k[64] = {
		0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a,
		0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
		0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340,
		0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
		0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8,
		0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
		0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
		0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
		0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
		0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
		0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
	};
	static const int r[64] = {
		7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
		5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
		4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
		6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
	};
	uint32_t w[16], a = h[0], b = h[1], c = h[2], d = h[3];

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
		       (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
	for (int i = 0; i < 64; i++) {
		uint32_t f;
		int g;
		if (i < 16) {
			f = (b & c) | (~b & d);
			g = i;
		} else if (i < 32) {
			f = (d & b) | (~d & c);
			g = (5 * i + 1) % 16;
		} else if (i < 48) {
			f = b ^ c ^ d;
			g = (3 * i + 5) % 16;
		} else {
			f = c ^ (b | ~d);
			g = (7 * i) % 16;
		}
		f += a + k[i] + w[g];
		a = d;
		d = c;
		c = b;
		b += rol(f, r[i]);
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
}

void ex_md5(const void *data, size_t len, uint8_t out[EX_MD5_LEN])
{
	uint32_t h[4] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476 };
	const uint8_t *p = data;
	uint8_t tail[128];
	size_t n = len, t;
	uint64_t bits = (uint64_t)len * 8;

	for (; n >= 64; n -= 64, p += 64)
		md5_block(h, p);
	memset(tail, 0, sizeof(tail));
	memcpy(tail, p, n);
	tail[n] = 0x80;
	t = n + 1 + 8 <= 64 ? 64 : 128;
	for (int i = 0; i < 8; i++)
		tail[t - 8 + i] = (uint8_t)(bits >> (8 * i));
	md5_block(h, tail);
	if (t == 128)
		md5_block(h, tail + 64);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			out[4 * i + j] = (uint8_t)(h[i] >> (8 * j));
}

void ex_chap_response(uint8_t id, const char *secret, const uint8_t *chal,
		      size_t chal_len, uint8_t out[EX_MD5_LEN])
{
	uint8_t buf[1 + 256 + 1024];
	size_t sl = strlen(secret);

	if (sl > 256)
		sl = 256;
	if (chal_len > 1024)
		chal_len = 1024;
	buf[0] = id;
	memcpy(buf + 1, secret, sl);
	memcpy(buf + 1 + sl, chal, chal_len);
	ex_md5(buf, 1 + sl + chal_len, out);
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
