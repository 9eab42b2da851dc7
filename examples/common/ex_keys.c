/* SPDX-License-Identifier: BSD-2-Clause */
/* Key table and result functions of iSCSI text negotiation. */
#include "ex_keys.h"
#include "ex_params.h"
#include <libidm/keys.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define U24 ((1u << 24) - 1)
/* the key's field in struct ex_params */
#define P(f) (offsetof(struct ex_params, f) + 1)
#define LD (EX_KF_LEADING | EX_KF_NO_DISC)
#define SV (EX_KF_SESSION | EX_KF_VALUE)
#define NT EX_KF_NOTICE

static const struct ex_key keys[] = {
	{ IDM_KEY_AUTH_METHOD, EX_KT_LIST, EX_KF_SECURITY, 0, 0, 0 },
	{ IDM_KEY_HEADER_DIGEST, EX_KT_LIST, NT, 0, 0, P(header_digest) },
	{ IDM_KEY_DATA_DIGEST, EX_KT_LIST, NT, 0, 0, P(data_digest) },
	{ IDM_KEY_MAX_CONNECTIONS, EX_KT_NUM_MIN, LD | SV, 1, 65535, P(max_conns) },
	{ IDM_KEY_SEND_TARGETS, EX_KT_STR_DECL, 0, 0, 0, 0 },
	{ IDM_KEY_TARGET_NAME, EX_KT_STR_DECL, 0, 0, 0, 0 },
	{ IDM_KEY_INITIATOR_NAME, EX_KT_STR_DECL, 0, 0, 0, 0 },
	{ IDM_KEY_TARGET_ALIAS, EX_KT_STR_DECL, 0, 0, 0, 0 },
	{ IDM_KEY_INITIATOR_ALIAS, EX_KT_STR_DECL, 0, 0, 0, 0 },
	{ IDM_KEY_TARGET_ADDRESS, EX_KT_STR_DECL, 0, 0, 0, 0 },
	{ IDM_KEY_TARGET_PORTAL_GROUP_TAG, EX_KT_NUM_DECL, 0, 0, 65535, 0 },
	{ IDM_KEY_INITIAL_R2T, EX_KT_BOOL_OR, LD | SV | NT, 0, 1, P(initial_r2t) },
	{ IDM_KEY_IMMEDIATE_DATA, EX_KT_BOOL_AND, LD | SV | NT, 0, 1, P(immediate_data) },
	{ IDM_KEY_MAX_RECV_DATA_SEGMENT_LENGTH, EX_KT_NUM_DECL, EX_KF_DIRECTIONAL, 512, U24, 0 },
	{ IDM_KEY_MAX_BURST_LENGTH, EX_KT_NUM_MIN, LD | SV | NT, 512, U24, P(max_burst) },
	{ IDM_KEY_FIRST_BURST_LENGTH, EX_KT_NUM_MIN, LD | SV | NT, 512, U24, P(first_burst) },
	{ IDM_KEY_DEFAULT_TIME2WAIT, EX_KT_NUM_MAX, EX_KF_LEADING | SV, 0, 3600, P(t2w) },
	{ IDM_KEY_DEFAULT_TIME2RETAIN, EX_KT_NUM_MIN, EX_KF_LEADING | SV, 0, 3600, P(t2r) },
	{ IDM_KEY_MAX_OUTSTANDING_R2T, EX_KT_NUM_MIN, LD | SV | NT, 1, 65535, P(max_outstanding_r2t) },
	{ IDM_KEY_DATA_PDU_IN_ORDER, EX_KT_BOOL_OR, LD | SV | NT, 0, 1, P(data_pdu_in_order) },
	{ IDM_KEY_DATA_SEQUENCE_IN_ORDER, EX_KT_BOOL_OR, LD | SV | NT, 0, 1, P(data_seq_in_order) },
	{ IDM_KEY_ERROR_RECOVERY_LEVEL, EX_KT_NUM_MIN, EX_KF_LEADING | SV | NT, 0, 2, P(erl) },
	{ IDM_KEY_SESSION_TYPE, EX_KT_STR_DECL, EX_KF_LEADING, 0, 0, 0 },
	{ IDM_KEY_TASK_REPORTING, EX_KT_LIST, EX_KF_LEADING | EX_KF_NO_DISC, 0, 0, 0 },
	{ IDM_KEY_ISCSI_PROTOCOL_LEVEL, EX_KT_NUM_MIN, EX_KF_LEADING | EX_KF_VALUE, 0, 31, P(protocol_level) },
	/* RFC 3720 markers: RFC 7143 section 13 keeps them only so that
	 * old peers get a clean answer. */
	{ IDM_KEY_OF_MARKER, EX_KT_BOOL_AND, EX_KF_VALUE, 0, 1, 0 },
	{ IDM_KEY_IF_MARKER, EX_KT_BOOL_AND, EX_KF_VALUE, 0, 1, 0 },
	{ IDM_KEY_OF_MARK_INT, EX_KT_OBSOLETE, 0, 0, 0, 0 },
	{ IDM_KEY_IF_MARK_INT, EX_KT_OBSOLETE, 0, 0, 0, 0 },
	/* RFC 7145 section 6 */
	{ IDM_KEY_RDMA_EXTENSIONS, EX_KT_BOOL_AND, LD | EX_KF_NOTICE_RDMA, 0, 1, P(rdma) },
	{ IDM_KEY_TARGET_RECV_DATA_SEGMENT_LENGTH, EX_KT_NUM_MIN, EX_KF_ISER | NT, 512, U24, P(tgt_dsl) },
	{ IDM_KEY_INITIATOR_RECV_DATA_SEGMENT_LENGTH, EX_KT_NUM_MIN, EX_KF_ISER | NT, 512, U24, P(ini_dsl) },
	{ IDM_KEY_MAX_OUTSTANDING_UNEXPECTED_PDUS, EX_KT_NUM_DECL, EX_KF_LEADING | EX_KF_ISER, 0, 0xffffffffu, 0 },
	{ IDM_KEY_MAX_AHS_LENGTH, EX_KT_NUM_DECL, EX_KF_LEADING | EX_KF_ISER, 0, 0xffffffffu, 0 },
	{ IDM_KEY_TAGGED_BUFFER_FOR_SOLICITED_DATA_ONLY, EX_KT_BOOL_DECL, EX_KF_LEADING | EX_KF_ISER | EX_KF_NOTICE_RDMA, 0, 1, P(tagged_solicited) },
	{ IDM_KEY_ISER_HELLO_REQUIRED, EX_KT_BOOL_DECL, EX_KF_LEADING | EX_KF_ISER | EX_KF_NOTICE_RDMA, 0, 1, P(iser_hello) },
};

#undef P
#undef LD
#undef SV
#undef NT

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

const struct ex_key *ex_key_at(size_t i)
{
	return i < NKEYS ? &keys[i] : NULL;
}

const struct ex_key *ex_key_find(const char *name)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

const char *ex_key_iser_value(const char *key)
{
	if (!strcmp(key, IDM_KEY_HEADER_DIGEST) || !strcmp(key, IDM_KEY_DATA_DIGEST))
		return "None";
	return NULL;
}

int ex_parse_num(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	/* RFC 7143 6.1: decimal (no sign, no leading garbage) or 0x hex */
	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		x = strtoull(s + 2, &end, 16);
	else
		x = strtoull(s, &end, 10);
	if (errno || *end || end == s)
		return -EINVAL;
	*v = x;
	return 0;
}

int ex_parse_bool(const char *s, bool *v)
{
	if (strcmp(s, "Yes") == 0)
		*v = true;
	else if (strcmp(s, "No") == 0)
		*v = false;
	else
		return -EINVAL;
	return 0;
}

static int put(char *out, size_t outlen, const char *s)
{
	int n = snprintf(out, outlen, "%s", s);
	return (n < 0 || (size_t)n >= outlen) ? -ENOSPC : 0;
}

static int reject(char *out, size_t outlen)
{
	put(out, outlen, "Reject");
	return -EINVAL;
}

/* Is `val` one element of the comma list `list`? */
static bool in_list(const char *list, const char *val, size_t vlen)
{
	const char *p = list;

	while (*p) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		if (l == vlen && strncmp(p, val, l) == 0)
			return true;
		if (!c)
			break;
		p = c + 1;
	}
	return false;
}

static int num_in_range(const struct ex_key *k, const char *s, uint64_t *v)
{
	if (ex_parse_num(s, v) < 0 || *v < k->min || *v > k->max)
		return -EINVAL;
	return 0;
}

/* RFC 7143 6.2: a list offer is answered with the first offered value
 * we support, or Reject. */
static int respond_list(const char *offer, const char *mine, char *out,
			size_t outlen)
{
	const char *p = offer;

	while (*p) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);

		if (l && in_list(mine, p, l)) {
			if (l >= outlen)
				return -ENOSPC;
			memcpy(out, p, l);
			out[l] = '\0';
			return 0;
		}
		if (!c)
			break;
		p = c + 1;
	}
	return reject(out, outlen);
}

int ex_key_respond(const struct ex_key *k, const char *offer, const char *mine,
		   char *out, size_t outlen)
{
	uint64_t a, b;
	bool x, y;

	switch (k->type) {
	case EX_KT_BOOL_AND:
	case EX_KT_BOOL_OR:
		if (ex_parse_bool(offer, &x) < 0 || ex_parse_bool(mine, &y) < 0)
			return reject(out, outlen);
		x = k->type == EX_KT_BOOL_AND ? (x && y) : (x || y);
		return put(out, outlen, x ? "Yes" : "No");
	case EX_KT_NUM_MIN:
	case EX_KT_NUM_MAX:
		if (num_in_range(k, offer, &a) < 0 || ex_parse_num(mine, &b) < 0)
			return reject(out, outlen);
		if (k->type == EX_KT_NUM_MIN ? b < a : b > a)
			a = b;
		snprintf(out, outlen, "%llu", (unsigned long long)a);
		return 0;
	case EX_KT_NUM_DECL:
		if (num_in_range(k, offer, &a) < 0)
			return reject(out, outlen);
		return put(out, outlen, offer);
	case EX_KT_BOOL_DECL:
		if (ex_parse_bool(offer, &x) < 0)
			return reject(out, outlen);
		return put(out, outlen, offer);
	case EX_KT_LIST:
		return respond_list(offer, mine, out, outlen);
	case EX_KT_STR_DECL:
		return put(out, outlen, offer);
	case EX_KT_OBSOLETE:
		put(out, outlen, "Irrelevant");
		return 0;
	}
	return reject(out, outlen);
}

/* The answers that leave a key at its default (RFC 7143 6.2). */
static bool is_refusal(const char *answer)
{
	return strcmp(answer, "NotUnderstood") == 0 ||
	       strcmp(answer, "Irrelevant") == 0 || strcmp(answer, "Reject") == 0;
}

int ex_key_accept(const struct ex_key *k, const char *offered, const char *answer,
		  char *out, size_t outlen)
{
	uint64_t o, a;
	bool x, y;

	if (is_refusal(answer))
		return -ENOENT;
	switch (k->type) {
	case EX_KT_BOOL_AND:
	case EX_KT_BOOL_OR:
		if (ex_parse_bool(offered, &x) < 0 || ex_parse_bool(answer, &y) < 0)
			return -EINVAL;
		/* AND offered No (or OR offered Yes): the answer cannot change it */
		if (k->type == EX_KT_BOOL_AND ? !x : x)
			return put(out, outlen, offered);
		return put(out, outlen, answer);
	case EX_KT_NUM_MIN:
	case EX_KT_NUM_MAX:
		if (ex_parse_num(offered, &o) < 0 || num_in_range(k, answer, &a) < 0)
			return -EINVAL;
		if (k->type == EX_KT_NUM_MIN ? a > o : a < o)
			return -EINVAL;
		return put(out, outlen, answer);
	case EX_KT_LIST: {
		if (strchr(answer, ',') || !in_list(offered, answer, strlen(answer)))
			return -EINVAL;
		return put(out, outlen, answer);
	}
	case EX_KT_NUM_DECL:
		if (num_in_range(k, answer, &a) < 0)
			return -EINVAL;
		return put(out, outlen, answer);
	case EX_KT_BOOL_DECL:
		if (ex_parse_bool(answer, &x) < 0)
			return -EINVAL;
		return put(out, outlen, answer);
	case EX_KT_STR_DECL:
		return put(out, outlen, answer);
	case EX_KT_OBSOLETE:
		return -ENOENT;
	}
	return -EINVAL;
}

/* The values a list key may take (RFC 7143 13.1, 13.23; 12.1 for CHAP). */
static const char *list_values(const char *name)
{
	if (!strcmp(name, IDM_KEY_HEADER_DIGEST) || !strcmp(name, IDM_KEY_DATA_DIGEST))
		return "CRC32C,None";
	if (!strcmp(name, IDM_KEY_AUTH_METHOD))
		return "CHAP,None";
	if (!strcmp(name, IDM_KEY_TASK_REPORTING))
		return "RFC3720,ResponseFence,FastAbort";
	return "";
}

/* NAME=VALUE split into name (at most 63 bytes) and *val (1 to 255). */
static int split_setting(const char *kv, char *name, size_t namelen,
			 const char **val, char *why, size_t whylen)
{
	const char *eq = kv ? strchr(kv, '=') : NULL;

	if (!eq || eq == kv) {
		snprintf(why, whylen, "'%.64s': expected NAME=VALUE", kv ? kv : "");
		return -EINVAL;
	}
	if ((size_t)(eq - kv) >= namelen) {
		snprintf(why, whylen, "key name '%.32s...' too long", kv);
		return -EINVAL;
	}
	memcpy(name, kv, (size_t)(eq - kv));
	name[eq - kv] = '\0';
	*val = eq + 1;
	if (!**val || strlen(*val) > 255) {
		snprintf(why, whylen, "%s: the value must be 1 to 255 characters", name);
		return -EINVAL;
	}
	return 0;
}

/* Every item of the comma list val among the key's values. */
static int check_list(const char *name, const char *val, char *why,
		      size_t whylen)
{
	const char *allowed = list_values(name), *p = val;

	for (;;) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);

		if (!l || !in_list(allowed, p, l)) {
			snprintf(why, whylen, "%s='%s': must be a comma list "
				 "of %s", name, val, allowed);
			return -EINVAL;
		}
		if (!c)
			return 0;
		p = c + 1;
	}
}

/* A value of the key's type and range; keys the program declares itself
 * and obsolete ones cannot be set. */
static int check_value(const struct ex_key *k, const char *name,
		       const char *val, char *why, size_t whylen)
{
	uint64_t v;
	bool b;

	switch (k->type) {
	case EX_KT_BOOL_AND:
	case EX_KT_BOOL_OR:
	case EX_KT_BOOL_DECL:
		if (ex_parse_bool(val, &b) < 0) {
			snprintf(why, whylen, "%s='%s': must be Yes or No", name, val);
			return -EINVAL;
		}
		return 0;
	case EX_KT_NUM_MIN:
	case EX_KT_NUM_MAX:
	case EX_KT_NUM_DECL:
		if (ex_parse_num(val, &v) < 0 || v < k->min || v > k->max) {
			snprintf(why, whylen, "%s='%s': must be a number from %llu "
				 "to %llu", name, val, (unsigned long long)k->min,
				 (unsigned long long)k->max);
			return -EINVAL;
		}
		return 0;
	case EX_KT_LIST:
		return check_list(name, val, why, whylen);
	case EX_KT_STR_DECL:
		snprintf(why, whylen, "%s is declared by the program itself, not "
			 "set with a key option (see --target-name, --alias)", name);
		return -EINVAL;
	case EX_KT_OBSOLETE:
		snprintf(why, whylen, "%s is obsolete (RFC 7143 section 13): "
			 "always answered Irrelevant", name);
		return -EINVAL;
	}
	snprintf(why, whylen, "%s: cannot be set", name);
	return -EINVAL;
}

int ex_key_check_setting(const char *kv, char *why, size_t whylen)
{
	const struct ex_key *k;
	char name[64];
	const char *val;

	if (split_setting(kv, name, sizeof(name), &val, why, whylen) < 0)
		return -EINVAL;
	/* RFC 7143 13.5.4: X-reversed.domain.name keys, X# for IANA ones */
	if (!strncmp(name, "X-", 2) || !strncmp(name, "X#", 2))
		return 0;
	k = ex_key_find(name);
	if (!k) {
		snprintf(why, whylen, "unknown key '%s' (RFC 7143 section 13 and "
			 "RFC 7145 section 6 keys, or X- extension keys)", name);
		return -EINVAL;
	}
	return check_value(k, name, val, why, whylen);
}
