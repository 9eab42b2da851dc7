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

/* Fastest implementation this CPU has (SSE4.2 or slicing-by-8). */
uint32_t tcp_crc32c(uint32_t crc, const void *buf, size_t len);
/* The two implementations, for tests. tcp_crc32c_hw returns the software
 * result when the CPU lacks SSE4.2 (see tcp_crc32c_have_hw). */
uint32_t tcp_crc32c_sw(uint32_t crc, const void *buf, size_t len);
uint32_t tcp_crc32c_hw(uint32_t crc, const void *buf, size_t len);
int tcp_crc32c_have_hw(void);

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
