/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_rx_check.c: what a received Send holds, checked before use. */
#ifndef IDM_ISER_RX_CHECK_H
#define IDM_ISER_RX_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libidm/provider.h>
#include "iser_wire.h"

/* A received Send, parsed: a Hello/HelloReply, or the iSER header and the
 * iSCSI PDU after it (pdu's pointers lie inside the message). */
struct iser_rx {
	bool is_hello;
	struct iser_hello hello; /* is_hello */
	struct iser_hdr hdr;	 /* !is_hello */
	struct idm_pdu pdu;	 /* !is_hello: bhs, ahs, data; task NULL */
	/* full feature phase: a well-framed PDU with an opcode the sender's
	 * role does not send there (unknown, vendor-specific, the other
	 * role's): not an error, the caller answers with a Reject */
	bool unexpected;
};

/* The checks of a Send of `len` bytes delivered into a `size`-byte
 * receive buffer, on a connection of role `role` (we receive from the
 * other one) in the login or full feature phase: the iSER header, the
 * PDU's lengths against the Send, the opcode against the sender and
 * phase (RFC 7143 section 11, shared table), and no Data-In or R2T (RDMA
 * operations replace them, RFC 7145 7.3.5/7.3.6). 0 with *rx filled, or
 * -EPROTO with the reason in why; rx->pdu.bhs is set then if the lengths
 * fitted (a PDU refused for its opcode). Verbs-free and without side effects,
 * so it is fuzzed on its own (tests/fuzz/fuzz_iser_parser.c). */
int iser_rx_check(const uint8_t *msg, uint32_t len, uint32_t size,
		  enum idm_role role, bool login, struct iser_rx *rx,
		  char *why, size_t whylen);

/* The PDU view of a received BHS whose lengths were checked. */
void iser_rx_pdu(struct idm_pdu *pdu, const uint8_t *bhs);

/* The target's HelloReply to a Hello, with `ord` the RDMA Read depth it
 * may issue (RFC 7145 5.1.3, 9.4): versions, iSER-ORD, and whether it
 * rejects (a version outside ours, or RDMA Reads asked of a target that
 * may issue none). */
void iser_hello_answer(const struct iser_hello *h, uint32_t ord,
		       struct iser_hello *rep);

#endif
