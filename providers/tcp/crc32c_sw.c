/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The portable half of CRC32C: slicing-by-8 tables (the fallback on any
 * CPU and the reference the tests hold the others to), the GF(2)
 * arithmetic modulo the polynomial, and the tables the hardware code
 * needs to join and fold, all built once by crc32c_init().
 */
#include "crc32c_impl.h"

#include <pthread.h>
#include <string.h>

uint32_t crc32c_table[8][256];
struct crc32c_zeros crc32c_zeros_long, crc32c_zeros_short;
struct crc32c_fold_pair crc32c_fold[CRC32C_FOLD_N];

/* x2n[k] = x^(2^k) mod P: x^n is then one product per set bit of n */
static uint32_t x2n[64];

uint32_t crc32c_multmodp(uint32_t a, uint32_t b)
{
	uint32_t p = 0;

	/* shift-and-add over a's terms from x^0 (bit 31) up, multiplying b
	 * by x (a right shift, reduced) at each step */
	for (uint32_t m = 1u << 31; a; m >>= 1) {
		if (a & m) {
			p ^= b;
			a ^= m;
		}
		b = (b >> 1) ^ (CRC32C_POLY & (0u - (b & 1u)));
	}
	return p;
}

uint32_t crc32c_xnmodp(uint64_t n)
{
	uint32_t p = 1u << 31; /* x^0 */

	for (unsigned k = 0; n; n >>= 1, k++)
		if (n & 1)
			p = crc32c_multmodp(x2n[k], p);
	return p;
}

static void zeros_init(struct crc32c_zeros *z, uint64_t len)
{
	uint32_t xn = crc32c_xnmodp(8 * len);

	for (unsigned k = 0; k < 4; k++)
		for (uint32_t b = 0; b < 256; b++)
			z->t[k][b] = crc32c_multmodp(xn, b << (8 * k));
}

static void tables_init(void)
{
	static const unsigned dist[CRC32C_FOLD_N] = {
		[CRC32C_FOLD_128] = 128,   [CRC32C_FOLD_256] = 256,
		[CRC32C_FOLD_384] = 384,   [CRC32C_FOLD_512] = 512,
		[CRC32C_FOLD_1024] = 1024, [CRC32C_FOLD_2048] = 2048,
	};
	uint32_t p = 1u << 30; /* x^1 */

	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (CRC32C_POLY & (0u - (c & 1u)));
		crc32c_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc32c_table[t][i] =
				(crc32c_table[t - 1][i] >> 8) ^
				crc32c_table[0][crc32c_table[t - 1][i] & 0xff];
	for (unsigned k = 0; k < 64; k++) {
		x2n[k] = p;
		p = crc32c_multmodp(p, p);
	}
	zeros_init(&crc32c_zeros_long, CRC32C_LONG);
	zeros_init(&crc32c_zeros_short, CRC32C_SHORT);
	for (unsigned i = 0; i < CRC32C_FOLD_N; i++) {
		crc32c_fold[i].lo = crc32c_xnmodp(dist[i] + 64 - 33);
		crc32c_fold[i].hi = crc32c_xnmodp(dist[i] - 33);
	}
}

void crc32c_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, tables_init);
}

uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len && ((uintptr_t)p & 7)) {
		crc = crc32c_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
		len--;
	}
	while (len >= 8) {
		uint32_t lo, hi;
		/* little-endian loads; memcpy keeps it alignment-clean */
		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		lo = __builtin_bswap32(lo);
		hi = __builtin_bswap32(hi);
#endif
		lo ^= crc;
		crc = crc32c_table[7][lo & 0xff] ^
		      crc32c_table[6][(lo >> 8) & 0xff] ^
		      crc32c_table[5][(lo >> 16) & 0xff] ^
		      crc32c_table[4][lo >> 24] ^ crc32c_table[3][hi & 0xff] ^
		      crc32c_table[2][(hi >> 8) & 0xff] ^
		      crc32c_table[1][(hi >> 16) & 0xff] ^
		      crc32c_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc32c_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}
