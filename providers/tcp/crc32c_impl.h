/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Shared by the CRC32C implementations (crc32c*.c), not by their users:
 * the tables they build once, the GF(2) arithmetic that builds them, and
 * each implementation's entry point. Every function here expects
 * crc32c_init() to have run; tcp_crc32c and tcp_crc32c_impls see to it.
 */
#ifndef LIBIDM_TCP_CRC32C_IMPL_H
#define LIBIDM_TCP_CRC32C_IMPL_H

#include <stddef.h>
#include <stdint.h>

/* The Castagnoli polynomial, bit-reflected: bit 31 is x^0, bit 0 x^31,
 * which is how every value below holds a polynomial. */
#define CRC32C_POLY 0x82f63b78u

/* Builds all the tables below, once (pthread_once). */
void crc32c_init(void);

/* a(x) * b(x) mod P and x^n mod P. */
uint32_t crc32c_multmodp(uint32_t a, uint32_t b);
uint32_t crc32c_xnmodp(uint64_t n);

/* The byte-at-a-time table, for heads and tails of the table code. */
extern uint32_t crc32c_table[8][256];

/*
 * Three-stream code (SSE4.2, ARMv8 CRC32) runs three independent CRCs
 * over three adjacent blocks of a fixed length, then joins them: shifting
 * a CRC over that many zero bytes is linear in the CRC's bits, so it is 4
 * lookups in a table built for that length (Mark Adler's crc32c.c).
 * LONG amortises the joins on big buffers, SHORT keeps 4 KiB buffers on
 * three streams.
 */
#define CRC32C_LONG 8192u
#define CRC32C_SHORT 256u
struct crc32c_zeros {
	uint32_t t[4][256];
};
extern struct crc32c_zeros crc32c_zeros_long, crc32c_zeros_short;

static inline uint32_t crc32c_zeros_shift(const struct crc32c_zeros *z,
					  uint32_t crc)
{
	return z->t[0][crc & 0xff] ^ z->t[1][(crc >> 8) & 0xff] ^
	       z->t[2][(crc >> 16) & 0xff] ^ z->t[3][crc >> 24];
}

/*
 * Carry-less multiply folding (PCLMULQDQ): a 128-bit block moves D bits
 * further along the message as lo64 * x^(D+64) + hi64 * x^D, both mod P.
 * Multiplying a reflected 64-bit block by a reflected 32-bit constant
 * gives a product that, read as a reflected 128-bit value, is the true
 * one times x^33; so each constant is stored divided by that:
 * x^(D+64-33) and x^(D-33) mod P. crc32c_fold[CRC32C_FOLD_<D>] holds the
 * pair for each distance the folding code uses.
 */
struct crc32c_fold_pair {
	uint64_t lo; /* multiplies the block's low (earlier) 64 bits */
	uint64_t hi;
};
enum {
	CRC32C_FOLD_128,
	CRC32C_FOLD_256,
	CRC32C_FOLD_384,
	CRC32C_FOLD_512,
	CRC32C_FOLD_1024,
	CRC32C_FOLD_2048,
	CRC32C_FOLD_N
};
extern struct crc32c_fold_pair crc32c_fold[CRC32C_FOLD_N];

/* The implementations; each *_usable says whether this CPU runs it. */
uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CRC32C_HAVE_X86 1
int crc32c_sse42_usable(void);
int crc32c_clmul_usable(void);
int crc32c_avx512_usable(void);
uint32_t crc32c_sse42(uint32_t crc, const void *buf, size_t len);
uint32_t crc32c_clmul(uint32_t crc, const void *buf, size_t len);
uint32_t crc32c_avx512(uint32_t crc, const void *buf, size_t len);
#endif
#if defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define CRC32C_HAVE_ARM64 1
int crc32c_armv8_usable(void);
uint32_t crc32c_armv8(uint32_t crc, const void *buf, size_t len);
#endif

#endif
