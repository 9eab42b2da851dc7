/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CHAP for iSCSI login (RFC 7143 section 12.1.3, RFC 1994): MD5 response
 * computation and the binary value encodings of iSCSI text (0x hex,
 * 0b base64).
 */
#ifndef EX_CHAP_H
#define EX_CHAP_H

#include <stddef.h>
#include <stdint.h>

#define EX_MD5_LEN 16

/** MD5 of [data, data+len). */
void ex_md5(const void *data, size_t len, uint8_t out[EX_MD5_LEN]);

/** CHAP_R = MD5(id || secret || challenge). */
void ex_chap_response(uint8_t id, const char *secret, const uint8_t *chal,
		      size_t chal_len, uint8_t out[EX_MD5_LEN]);

/**
 * Decode an iSCSI binary value ("0x..." hex or "0b..." base64) into
 * out[cap]. Returns the number of bytes or -EINVAL.
 */
int ex_bin_decode(const char *s, uint8_t *out, size_t cap);

/** Encode as "0x" + hex into out[cap]. -ENOSPC if it does not fit. */
int ex_hex_encode(const uint8_t *b, size_t len, char *out, size_t cap);

#endif
