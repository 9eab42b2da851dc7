/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CRC32C (Castagnoli), the iSCSI header and data digest (RFC 7143 12.1).
 * Usage: crc = tcp_crc32c(TCP_CRC32C_INIT, p, n) ... then
 * digest = crc ^ 0xffffffff (tcp_crc32c_final), sent least significant
 * byte first (tcp_crc32c_put).
 */
#ifndef LIBIDM_TCP_CRC32C_H
#define LIBIDM_TCP_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#define TCP_CRC32C_INIT 0xffffffffu

/* The fastest implementation this CPU has, chosen on first use (or the
 * one named by IDM_TCP_CRC32C, see tcp_crc32c_force). */
uint32_t tcp_crc32c(uint32_t crc, const void *buf, size_t len);

/* The portable slicing-by-8 code: the reference the others are tested
 * against. */
uint32_t tcp_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* crc advanced over len zero bytes without reading them: with it the CRC
 * of A then B is tcp_crc32c_shift(crc_A, len_B) ^ tcp_crc32c(0, B, len_B). */
uint32_t tcp_crc32c_shift(uint32_t crc, uint64_t len);

/* Every implementation compiled in, for the tests and the benchmark. */
typedef uint32_t (*tcp_crc32c_fn)(uint32_t crc, const void *buf, size_t len);
struct tcp_crc32c_impl {
	const char *name;
	tcp_crc32c_fn fn;
	int (*usable)(void); /* 1 when this CPU runs it */
};
/* The table, best first; the last entry is "sw". */
const struct tcp_crc32c_impl *tcp_crc32c_impls(size_t *n);
/* Make tcp_crc32c use the implementation called name (NULL: the best
 * usable). -ENOENT if none is called so, -ENOTSUP if this CPU lacks it. */
int tcp_crc32c_force(const char *name);
/* The name of the implementation tcp_crc32c uses now. */
const char *tcp_crc32c_name(void);

static inline uint32_t tcp_crc32c_final(uint32_t crc)
{
	return crc ^ 0xffffffffu;
}

/* The digest on the wire: little-endian, as RFC 3720 B.4 lists it. */
static inline void tcp_crc32c_put(uint8_t *p, uint32_t digest)
{
	p[0] = (uint8_t)digest;
	p[1] = (uint8_t)(digest >> 8);
	p[2] = (uint8_t)(digest >> 16);
	p[3] = (uint8_t)(digest >> 24);
}

static inline uint32_t tcp_crc32c_get(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

#endif
