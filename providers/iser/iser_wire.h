/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iSER wire formats: the 28-byte iSER header that starts every Send
 * (RFC 7145 section 9, InfiniBand Annex A12 Table 4), Hello/HelloReply, and
 * the 4-byte iSER word of the CM REQ/REP private data (Annex A12 Tables 2/3).
 * Pure functions with no verbs dependency, so they are unit-tested on hosts
 * without RDMA.
 */
#ifndef IDM_ISER_WIRE_H
#define IDM_ISER_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ISER_HDR_LEN 28

/* byte 0: opcode in the high nibble, flags in the low one */
#define ISER_OP_MASK 0xf0
#define ISER_OP_CTRL 0x10
#define ISER_OP_HELLO 0x20
#define ISER_OP_HELLO_REPLY 0x30
#define ISER_WSV 0x08
#define ISER_RSV 0x04
#define ISER_HELLO_REJ 0x01
#define ISER_VERSION 10 /* RFC 7145 section 9.3: MaxVer/MinVer "10" */

/* CM private data, first byte of the iSER word (Annex A12 bit 31 / 30). */
#define ISER_CM_ZBVA_NOT_SUP 0x80     /* REQ: initiator cannot do ZBVA */
#define ISER_CM_SEND_INV_NOT_SUP 0x40 /* REQ: don't invalidate my STags */
#define ISER_CM_ZBVA_NOT_USED 0x80    /* REP: virtual addresses used */
#define ISER_CM_SEND_INV_NOT_USED 0x40 /* REP: plain Sends, no SendInv */
#define ISER_CM_WORD_LEN 4

struct iser_hdr {
	uint8_t opcode; /* ISER_OP_* */
	bool wsv, rsv;
	uint32_t write_stag;
	uint64_t write_va;
	uint32_t read_stag;
	uint64_t read_va;
};

struct iser_hello {
	uint8_t opcode;   /* ISER_OP_HELLO or ISER_OP_HELLO_REPLY */
	bool reject;      /* HelloReply only */
	uint8_t max_ver;
	uint8_t min_ver;  /* Hello: MinVer; HelloReply: CurVer */
	uint16_t ird_ord; /* Hello: iSER-IRD; HelloReply: iSER-ORD */
};

/* Encode a control-type header; STags of invalid halves are written as 0
 * as section 9.2 requires. */
void iser_hdr_encode(uint8_t out[ISER_HDR_LEN], const struct iser_hdr *h);

/* Decode the header of a received Send of `len` bytes. Returns 0, or
 * -EPROTO for a message too short, an unknown opcode, a control header
 * followed by less than a BHS, or a Hello/HelloReply of any length but 28.
 * Reserved bits are ignored. */
int iser_hdr_decode(const uint8_t *msg, size_t len, struct iser_hdr *h);

void iser_hello_encode(uint8_t out[ISER_HDR_LEN], const struct iser_hello *h);
int iser_hello_decode(const uint8_t *msg, size_t len, struct iser_hello *h);

/* CM private data. The REQ data arrives zero-padded by the CM (on rxe to 56
 * bytes), so only the first 4 bytes are ever looked at; fewer than 4 bytes
 * read as zero flags (what an IB CM peer sending none means). */
void iser_cm_word_encode(uint8_t out[ISER_CM_WORD_LEN], uint8_t flags);
uint8_t iser_cm_word_flags(const void *priv, size_t len);

/* What one connection ends up doing, from the two flag bytes. */
struct iser_cm_nego {
	bool send_inv; /* target answers with Send with Invalidate */
};
/* Target: the REP flags for a REQ; `can_send_inv` is what the device can. */
uint8_t iser_cm_rep_flags(uint8_t req_flags, bool can_send_inv);
/* Both: the result once REQ and REP flags are known. */
void iser_cm_negotiate(uint8_t req_flags, uint8_t rep_flags,
		       struct iser_cm_nego *out);

#endif
