/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Negotiation of iSCSI login/text keys (RFC 7143 sections 6 and 13,
 * RFC 7145 section 6): a table of the known keys with their value type,
 * range and result function, and the two sides of one key exchange.
 */
#ifndef EX_KEYS_H
#define EX_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ex_key_type {
	EX_KT_BOOL_AND,  /* result: offer AND response (ImmediateData) */
	EX_KT_BOOL_OR,   /* result: offer OR response (InitialR2T) */
	EX_KT_NUM_MIN,   /* result: the smaller (MaxBurstLength) */
	EX_KT_NUM_MAX,   /* result: the larger (DefaultTime2Wait) */
	EX_KT_NUM_DECL,  /* declarative number (MaxRecvDataSegmentLength) */
	EX_KT_BOOL_DECL, /* declarative boolean (iSERHelloRequired) */
	EX_KT_LIST,      /* responder picks the first offered value it
	                    supports (HeaderDigest, AuthMethod) */
	EX_KT_STR_DECL,  /* declarative string (InitiatorName, SessionType) */
	EX_KT_OBSOLETE,  /* RFC 3720 keys RFC 7143 dropped: OFMarkInt... */
};

/* ex_key.flags */
#define EX_KF_LEADING 0x1   /* leading-only: first connection of a session */
#define EX_KF_SECURITY 0x2  /* security stage key */
#define EX_KF_ISER 0x4      /* RFC 7145 key; irrelevant unless iSER */
#define EX_KF_NO_DISC 0x8   /* irrelevant in a discovery session */
#define EX_KF_SESSION 0x10  /* session-wide: an initiator offers it in a
                               normal session (ex_params_session_key) */
#define EX_KF_VALUE 0x20    /* stated from struct ex_params alike by both
                               roles (ex_params_value) */
#define EX_KF_NOTICE 0x40   /* in Notice_Key_Values (ex_params_notice) */
#define EX_KF_NOTICE_RDMA 0x80 /* there only with RDMAExtensions=Yes */
#define EX_KF_DIRECTIONAL 0x100 /* declares its sender's own receive limit
                                   (MaxRecvDataSegmentLength): whose
                                   limit it is depends on who sent it */

struct ex_key {
	const char *name;
	enum ex_key_type type;
	uint32_t flags;
	uint64_t min, max; /* numeric range (inclusive) */
	/* where its result lives in struct ex_params (ex_params.h), plus
	 * one; 0: nowhere */
	size_t param;
};

/** The i-th entry of the table (in RFC 7143 order), NULL past the last. */
const struct ex_key *ex_key_at(size_t i);

/** The table entry of `name`, or NULL for a key we do not understand. */
const struct ex_key *ex_key_find(const char *name);

/**
 * The value a node must use for `key` on an iSER connection whatever it
 * would offer, answer or was told with --key: "None" for HeaderDigest and
 * DataDigest (RFC 7145 sections 5.1 and 6.2: the RDMA transport carries
 * its own CRC, and a discovery session over iSER is no exception); NULL
 * for every other key. A peer's CRC32C-only offer is answered Reject.
 */
const char *ex_key_iser_value(const char *key);

/** Parse an RFC 7143 numeric value (decimal or 0x hex). 0 or -EINVAL. */
int ex_parse_num(const char *s, uint64_t *v);
/** Parse "Yes"/"No". 0 or -EINVAL. */
int ex_parse_bool(const char *s, bool *v);

/**
 * Check a local setting "Name=Value" (idm-target -k, a config file)
 * before any peer sees it: the key must be one we negotiate (or an X-
 * extension key, RFC 7143 13.5.4) and the value of its type and within
 * its RFC 7143/7145 range; a list key (HeaderDigest=CRC32C,None) may
 * only name values we support. Returns 0, or -EINVAL with a message in
 * `why` that names the key and what it allows.
 */
int ex_key_check_setting(const char *kv, char *why, size_t whylen);

/**
 * Responder side: the peer offered `offer` for key `k`; `mine` is our
 * setting (a value, or a comma list for EX_KT_LIST in preference order).
 * Writes the value to answer into `out` ("Reject" for a bad offer, in
 * which case -EINVAL is returned; "Irrelevant" for obsolete keys).
 * Returns 0 when `out` is the negotiated result.
 */
int ex_key_respond(const struct ex_key *k, const char *offer, const char *mine,
		   char *out, size_t outlen);

/**
 * Originator side: we offered `offered` for `k` and the peer answered
 * `answer`. Writes the negotiated result into `out`. Returns 0, -ENOENT
 * when the peer answered NotUnderstood/Irrelevant/Reject (keep the
 * default), or -EINVAL when the answer is not a legal outcome of the
 * offer (a protocol error: the login should fail).
 */
int ex_key_accept(const struct ex_key *k, const char *offered, const char *answer,
		  char *out, size_t outlen);

#endif
