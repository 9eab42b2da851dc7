/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The operational keys of one connection as values (RFC 7143 section 13,
 * RFC 7145 section 6): their defaults, a negotiated result recorded, a
 * value spelled for an offer or an answer, and the Notice_Key_Values
 * text the provider takes. Both programs use it; what each wants and how
 * it negotiates stays in its own login.c.
 */
#ifndef EX_PARAMS_H
#define EX_PARAMS_H

#include "ex_text.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ex_params {
	bool header_digest, data_digest; /* CRC32C */
	bool immediate_data, initial_r2t;
	bool data_pdu_in_order, data_seq_in_order;
	bool rdma;             /* RDMAExtensions=Yes (iSER) */
	bool tagged_solicited; /* the initiator's iSER declarations */
	bool iser_hello;       /* (RFC 7145 6.8, 6.9), for the provider */
	uint32_t max_burst, first_burst, max_outstanding_r2t, erl;
	uint32_t max_conns, t2w, t2r;
	uint32_t protocol_level; /* iSCSIProtocolLevel (RFC 7144) */
	/* the receive limits: the initiator's (InitiatorRecvDataSegmentLength,
	 * or the MaxRecvDataSegmentLength it declares on TCP) and the
	 * target's */
	uint32_t ini_dsl, tgt_dsl;
};

/** RFC 7143 section 13 defaults (<libidm/keys.h>): the value of every key
 * not negotiated. */
void ex_params_default(struct ex_params *p);

/**
 * Record the negotiated result `val` of `key`. MaxRecvDataSegmentLength
 * is not taken: it is declarative, and whose limit it is depends on who
 * declared it (the caller's role). Returns false for a key without a
 * field here, or a value that does not parse.
 */
bool ex_params_apply(struct ex_params *p, const char *key, const char *val);

/**
 * The value of `key` in p as it goes on the wire, for the keys both roles
 * state alike (EX_KF_VALUE: the session-wide ones, iSCSIProtocolLevel,
 * RFC 3720's markers, always No); NULL for any other key, whose value is
 * the caller's role's to choose. `buf` holds a number.
 */
const char *ex_params_value(const struct ex_params *p, const char *key, char *buf,
			    size_t len);

/** The i-th session-wide key a normal session's initiator offers (RFC
 * 7143 order), NULL past the last. */
const char *ex_params_session_key(size_t i);

/**
 * The negotiated values as Notice_Key_Values hands them to the provider.
 * `peer_mrdsl`: the MaxRecvDataSegmentLength the peer declared, or 0 to
 * leave the key out. 0, or nonzero when tb is too small.
 */
int ex_params_notice(const struct ex_params *p, uint32_t peer_mrdsl,
		     struct ex_textbuf *tb);

/**
 * A local setting of MaxBurstLength and FirstBurstLength among `kvs`
 * ("Name=Value", e.g. idm-target -k): FirstBurstLength must not exceed
 * MaxBurstLength (RFC 7143 13.14), checked when both are given. 0, or
 * -EINVAL with a message in `why`.
 */
int ex_params_check_bursts(const char *const *kvs, int n, char *why, size_t whylen);

#endif
