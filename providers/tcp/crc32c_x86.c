/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CRC32C on x86-64, fastest first:
 *  - avx512: VPCLMULQDQ folding, four 512-bit accumulators (256 bytes a
 *    round), then the 128-bit code below for the last bytes;
 *  - clmul: PCLMULQDQ folding, four 128-bit accumulators (64 bytes a
 *    round);
 *  - sse42: three crc32q streams over adjacent blocks, joined by a table
 *    shift (for CPUs with SSE4.2 but no PCLMULQDQ).
 * One crc32q stream is latency bound (3 cycles per 8 bytes); all three
 * keep several independent operations in flight instead. Each function
 * carries its own target attribute so the build flags stay generic and
 * the CPU is asked at run time (cpuid, and xgetbv for the OS saving the
 * AVX-512 registers).
 */
#include "crc32c_impl.h"

#ifdef CRC32C_HAVE_X86
#include <cpuid.h>
#include <immintrin.h>
#include <string.h>

#define T_SSE42 __attribute__((target("sse4.2")))
#define T_CLMUL __attribute__((target("sse4.2,pclmul")))
#define T_AVX512 __attribute__((target("sse4.2,pclmul,avx512f,vpclmulqdq")))

/* cpuid leaf 1 ecx; 0 when cpuid fails */
static unsigned cpuid1_ecx(void)
{
	unsigned a, b, c, d;

	return __get_cpuid(1, &a, &b, &c, &d) ? c : 0;
}

int crc32c_sse42_usable(void)
{
	return (cpuid1_ecx() & bit_SSE4_2) != 0;
}

int crc32c_clmul_usable(void)
{
	unsigned c = cpuid1_ecx();

	return (c & bit_SSE4_2) && (c & bit_PCLMUL);
}

int crc32c_avx512_usable(void)
{
	unsigned a, b, c, d, lo, hi;

	if (!crc32c_clmul_usable() || !(cpuid1_ecx() & bit_OSXSAVE))
		return 0;
	/* XCR0: the OS saves SSE, AVX, opmask and both halves of zmm */
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	(void)hi;
	if ((lo & 0xe6) != 0xe6)
		return 0;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	return (b & bit_AVX512F) && (c & bit_VPCLMULQDQ);
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* one stream: short buffers and the tails of the others */
static inline T_SSE42 uint32_t one_stream(uint32_t crc, const uint8_t *p,
					  size_t len)
{
	uint64_t c = crc;

	for (; len >= 8; p += 8, len -= 8)
		c = _mm_crc32_u64(c, load64(p));
	if (len & 4) {
		uint32_t v;
		memcpy(&v, p, 4);
		c = _mm_crc32_u32((uint32_t)c, v);
		p += 4;
	}
	for (len &= 3; len; len--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return (uint32_t)c;
}

/* whole rounds of three blk-byte blocks, one stream each */
static inline T_SSE42 uint32_t three_streams(uint32_t crc, const uint8_t **pp,
					     size_t *lenp, size_t blk,
					     const struct crc32c_zeros *z)
{
	const uint8_t *p = *pp;
	size_t len = *lenp;
	uint64_t c0 = crc;

	for (; len >= 3 * blk; len -= 3 * blk) {
		const uint8_t *end = p + blk;
		uint64_t c1 = 0, c2 = 0;
		do {
			c0 = _mm_crc32_u64(c0, load64(p));
			c1 = _mm_crc32_u64(c1, load64(p + blk));
			c2 = _mm_crc32_u64(c2, load64(p + 2 * blk));
			p += 8;
		} while (p < end);
		c0 = crc32c_zeros_shift(z, (uint32_t)c0) ^ c1;
		c0 = crc32c_zeros_shift(z, (uint32_t)c0) ^ c2;
		p += 2 * blk;
	}
	*pp = p;
	*lenp = len;
	return (uint32_t)c0;
}

T_SSE42 uint32_t crc32c_sse42(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	crc = three_streams(crc, &p, &len, CRC32C_LONG, &crc32c_zeros_long);
	crc = three_streams(crc, &p, &len, CRC32C_SHORT, &crc32c_zeros_short);
	return one_stream(crc, p, len);
}

static inline T_CLMUL __m128i fold_pair(int which)
{
	return _mm_set_epi64x((long long)crc32c_fold[which].hi,
			      (long long)crc32c_fold[which].lo);
}

/* x moved k's distance along, plus the data found there */
static inline T_CLMUL __m128i fold(__m128i x, __m128i k, __m128i data)
{
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
					   _mm_clmulepi64_si128(x, k, 0x11)),
			     data);
}

static inline T_CLMUL __m128i load128(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)(const void *)p);
}

/* x is the message so far with its last 16 bytes unreduced: fold in
 * whole 16-byte blocks, reduce to a CRC with two crc32q, finish the tail */
static inline T_CLMUL uint32_t finish128(__m128i x, const uint8_t *p,
					 size_t len)
{
	__m128i k = fold_pair(CRC32C_FOLD_128);
	uint64_t c;

	for (; len >= 16; p += 16, len -= 16)
		x = fold(x, k, load128(p));
	/* crc32q(0, lo) then crc32q(., hi) is x * x^32 mod P: the CRC */
	c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(x));
	c = _mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(x, 1));
	return one_stream((uint32_t)c, p, len);
}

T_CLMUL uint32_t crc32c_clmul(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	__m128i x0, x1, x2, x3, k;

	/* below this the folding setup costs more than it saves */
	if (len < 128)
		return one_stream(crc, p, len);
	/* the CRC so far joins the first 32 bits of the message */
	x0 = _mm_xor_si128(load128(p), _mm_cvtsi32_si128((int)crc));
	x1 = load128(p + 16);
	x2 = load128(p + 32);
	x3 = load128(p + 48);
	p += 64;
	len -= 64;
	k = fold_pair(CRC32C_FOLD_512);
	for (; len >= 64; p += 64, len -= 64) {
		x0 = fold(x0, k, load128(p));
		x1 = fold(x1, k, load128(p + 16));
		x2 = fold(x2, k, load128(p + 32));
		x3 = fold(x3, k, load128(p + 48));
	}
	k = fold_pair(CRC32C_FOLD_128);
	x0 = fold(x0, k, x1);
	x0 = fold(x0, k, x2);
	x0 = fold(x0, k, x3);
	return finish128(x0, p, len);
}

static inline T_AVX512 __m512i fold512(__m512i x, __m512i k, __m512i data)
{
	/* 0x96: three-way exclusive or */
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
					 _mm512_clmulepi64_epi128(x, k, 0x11),
					 data, 0x96);
}

static inline T_AVX512 __m512i load512(const uint8_t *p)
{
	return _mm512_loadu_si512((const void *)p);
}

T_AVX512 uint32_t crc32c_avx512(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	__m512i z0, z1, z2, z3, k;
	__m128i x;

	/* short buffers would spend their time in setup and reduction */
	if (len < 512)
		return crc32c_clmul(crc, p, len);
	z0 = _mm512_xor_si512(load512(p),
			      _mm512_inserti32x4(_mm512_setzero_si512(),
						 _mm_cvtsi32_si128((int)crc), 0));
	z1 = load512(p + 64);
	z2 = load512(p + 128);
	z3 = load512(p + 192);
	p += 256;
	len -= 256;
	/* each 128-bit lane moves 4 x 512 bits a round */
	k = _mm512_broadcast_i32x4(fold_pair(CRC32C_FOLD_2048));
	for (; len >= 256; p += 256, len -= 256) {
		z0 = fold512(z0, k, load512(p));
		z1 = fold512(z1, k, load512(p + 64));
		z2 = fold512(z2, k, load512(p + 128));
		z3 = fold512(z3, k, load512(p + 192));
	}
	k = _mm512_broadcast_i32x4(fold_pair(CRC32C_FOLD_512));
	z0 = fold512(z0, k, z1);
	z0 = fold512(z0, k, z2);
	z0 = fold512(z0, k, z3);
	for (; len >= 64; p += 64, len -= 64)
		z0 = fold512(z0, k, load512(p));
	/* lanes 0, 1, 2 move 384, 256, 128 bits onto lane 3 */
	k = _mm512_set_epi64(0, 0, (long long)crc32c_fold[CRC32C_FOLD_128].hi,
			     (long long)crc32c_fold[CRC32C_FOLD_128].lo,
			     (long long)crc32c_fold[CRC32C_FOLD_256].hi,
			     (long long)crc32c_fold[CRC32C_FOLD_256].lo,
			     (long long)crc32c_fold[CRC32C_FOLD_384].hi,
			     (long long)crc32c_fold[CRC32C_FOLD_384].lo);
	z1 = _mm512_xor_si512(_mm512_clmulepi64_epi128(z0, k, 0x00),
			      _mm512_clmulepi64_epi128(z0, k, 0x11));
	x = _mm_xor_si128(_mm512_extracti32x4_epi32(z1, 0),
			  _mm512_extracti32x4_epi32(z1, 1));
	x = _mm_xor_si128(x, _mm512_extracti32x4_epi32(z1, 2));
	x = _mm_xor_si128(x, _mm512_extracti32x4_epi32(z0, 3));
	return finish128(x, p, len);
}
#endif
