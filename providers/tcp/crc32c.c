/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CRC32C: the SSE4.2 crc32 instruction when the CPU has it (chosen once at
 * run time), else slicing-by-8 tables. Digests run over every byte of
 * payload, so this is on the hot path of any connection with DataDigest.
 */
#include "crc32c.h"

#include <pthread.h>
#include <string.h>

#define POLY 0x82f63b78u /* reflected Castagnoli polynomial */

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (POLY & (0u - (c & 1u)));
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^
				      table[0][table[t - 1][i] & 0xff];
}

uint32_t tcp_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&table_once, table_init);
	while (len && ((uintptr_t)p & 7)) {
		crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
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
		crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^
		      table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
		      table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
		      table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>

__attribute__((target("sse4.2"))) static uint32_t
crc_sse42(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t c = crc;

	while (len && ((uintptr_t)p & 7)) {
		c = _mm_crc32_u8((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return (uint32_t)c;
}

int tcp_crc32c_have_hw(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2") ? 1 : 0;
}

uint32_t tcp_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	if (tcp_crc32c_have_hw())
		return crc_sse42(crc, buf, len);
	return tcp_crc32c_sw(crc, buf, len);
}

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);
static crc_fn chosen;
static pthread_once_t choose_once = PTHREAD_ONCE_INIT;

static void choose(void)
{
	chosen = tcp_crc32c_have_hw() ? crc_sse42 : tcp_crc32c_sw;
}

uint32_t tcp_crc32c(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&choose_once, choose);
	return chosen(crc, buf, len);
}
#else
int tcp_crc32c_have_hw(void)
{
	return 0;
}

uint32_t tcp_crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
	return tcp_crc32c_sw(crc, buf, len);
}

uint32_t tcp_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return tcp_crc32c_sw(crc, buf, len);
}
#endif
