/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * CHAP for iSCSI login (RFC 7143 section 12.1.3, RFC 1994): the
 * responses of the four algorithms IANA lists for CHAP_A (5 MD5, 6 SHA1,
 * 7 SHA-256, 8 SHA3-256), computed by libcrypto; random challenges;
 * constant-time comparison; the binary value encodings of iSCSI text
 * (0x hex, 0b base64).
 */
#ifndef EX_CHAP_H
#define EX_CHAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CHAP_A values (IANA "PPP Authentication Algorithms") */
#define EX_CHAP_MD5 5
#define EX_CHAP_SHA1 6
#define EX_CHAP_SHA256 7
#define EX_CHAP_SHA3_256 8

#define EX_CHAP_MAX_DIGEST 32 /* the longest response (SHA-256, SHA3-256) */
#define EX_CHAP_MAX_ALGS 4
#define EX_CHAP_CHAL_MAX 1024 /* the longest challenge accepted */
#define EX_CHAP_SECRET_MAX 256

/** Digest (and response) length of CHAP_A `alg`, 0 if unknown. */
size_t ex_chap_digest_len(int alg);

/** "md5", "sha1", "sha256", "sha3-256"; NULL if unknown. */
const char *ex_chap_alg_name(int alg);

/**
 * Parse a list of algorithm names ("sha3-256,sha256,sha1,md5"; numbers
 * 5-8 too) into algs[max], in order, without repeats. Returns the count
 * (>= 1) or -EINVAL.
 */
int ex_chap_alg_list_parse(const char *s, int *algs, int max);

/** Format algs[n] as a CHAP_A value ("8,7,6,5") into out[cap]. 0 or -ENOSPC. */
int ex_chap_alg_list_format(const int *algs, int n, char *out, size_t cap);

/**
 * The first of pref[n] (our order) that the CHAP_A list `offered`
 * ("7,5" or one value) holds; -1 if none. Values that are not numbers
 * are skipped (RFC 7143 6.2: a list may carry values we do not know).
 */
int ex_chap_alg_choose(const int *pref, int n, const char *offered);

/**
 * CHAP_R = H(id || secret || challenge) with CHAP_A `alg` into
 * out[ex_chap_digest_len(alg)]. Returns that length, -EINVAL for an
 * unknown algorithm or a too long secret or challenge, -EIO if
 * libcrypto fails (e.g. the algorithm is disabled there).
 */
int ex_chap_response(int alg, uint8_t id, const char *secret, const uint8_t *chal,
		     size_t chal_len, uint8_t *out);

/** a[n] == b[n], in time that does not depend on where they differ. */
bool ex_chap_equal(const void *a, const void *b, size_t n);

/** Fill chal[len] (and *id if not NULL) from the kernel's random source. 0 or -EIO. */
int ex_chap_random(uint8_t *chal, size_t len, uint8_t *id);

/**
 * Decode an iSCSI binary value ("0x..." hex or "0b..." base64) into
 * out[cap]. Returns the number of bytes or -EINVAL.
 */
int ex_bin_decode(const char *s, uint8_t *out, size_t cap);

/** Encode as "0x" + hex into out[cap]. -ENOSPC if it does not fit. */
int ex_hex_encode(const uint8_t *b, size_t len, char *out, size_t cap);

#endif
