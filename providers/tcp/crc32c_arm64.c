/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CRC32C on arm64 with the ARMv8 CRC32 instructions: three crc32cx
 * streams over adjacent blocks, joined by a table shift, as the x86
 * sse42 code does (one stream waits on each instruction's latency).
 * CRC32 is optional before ARMv8.1, so unless the build targets it
 * (__ARM_FEATURE_CRC32) the function carries a target attribute and the
 * kernel's hwcap decides at run time.
 */
#include "crc32c_impl.h"

#ifdef CRC32C_HAVE_ARM64
#include <string.h>
#include <sys/auxv.h>

#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1ul << 7)
#endif

#if defined(__ARM_FEATURE_CRC32)
#define T_CRC
#elif defined(__clang__)
#define T_CRC __attribute__((target("crc")))
#else
#define T_CRC __attribute__((target("+crc")))
#endif

#if defined(__clang__)
#define crc32cb(c, v) __builtin_arm_crc32cb(c, v)
#define crc32cw(c, v) __builtin_arm_crc32cw(c, v)
#define crc32cd(c, v) __builtin_arm_crc32cd(c, v)
#else
#define crc32cb(c, v) __builtin_aarch64_crc32cb(c, v)
#define crc32cw(c, v) __builtin_aarch64_crc32cw(c, v)
#define crc32cd(c, v) __builtin_aarch64_crc32cx(c, v)
#endif

int crc32c_armv8_usable(void)
{
#if defined(__ARM_FEATURE_CRC32)
	return 1;
#else
	return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#endif
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static inline T_CRC uint32_t one_stream(uint32_t c, const uint8_t *p,
					size_t len)
{
	for (; len >= 8; p += 8, len -= 8)
		c = crc32cd(c, load64(p));
	if (len & 4) {
		uint32_t v;
		memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		v = __builtin_bswap32(v);
#endif
		c = crc32cw(c, v);
		p += 4;
	}
	for (len &= 3; len; len--)
		c = crc32cb(c, *p++);
	return c;
}

static inline T_CRC uint32_t three_streams(uint32_t c0, const uint8_t **pp,
					   size_t *lenp, size_t blk,
					   const struct crc32c_zeros *z)
{
	const uint8_t *p = *pp;
	size_t len = *lenp;

	for (; len >= 3 * blk; len -= 3 * blk) {
		const uint8_t *end = p + blk;
		uint32_t c1 = 0, c2 = 0;
		do {
			c0 = crc32cd(c0, load64(p));
			c1 = crc32cd(c1, load64(p + blk));
			c2 = crc32cd(c2, load64(p + 2 * blk));
			p += 8;
		} while (p < end);
		c0 = crc32c_zeros_shift(z, c0) ^ c1;
		c0 = crc32c_zeros_shift(z, c0) ^ c2;
		p += 2 * blk;
	}
	*pp = p;
	*lenp = len;
	return c0;
}

T_CRC uint32_t crc32c_armv8(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	crc = three_streams(crc, &p, &len, CRC32C_LONG, &crc32c_zeros_long);
	crc = three_streams(crc, &p, &len, CRC32C_SHORT, &crc32c_zeros_short);
	return one_stream(crc, p, len);
}
#endif
