/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Notice_Key_Values: the negotiated keys that matter to a data mover,
 * parsed from iSCSI text ("Key=Value\0..."). Ranges are those of RFC 7143
 * section 13 and RFC 7145 section 6.
 */
#include "core.h"

#include <libidm/keys.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DSL_MIN 512u
#define DSL_MAX 16777215u /* 2^24 - 1 */
#define KEY_MAX 64   /* longest key we take, with its NUL */
#define VAL_MAX 256  /* longest value of a key of ours, with its NUL */

void idm_prov_params_default(struct idm_conn_params *p)
{
	memset(p, 0, sizeof(*p));
	p->immediate_data = IDM_ISCSI_DEFAULT_IMMEDIATE_DATA;
	p->initial_r2t = IDM_ISCSI_DEFAULT_INITIAL_R2T;
	p->data_pdu_in_order = IDM_ISCSI_DEFAULT_DATA_PDU_IN_ORDER;
	p->data_seq_in_order = IDM_ISCSI_DEFAULT_DATA_SEQUENCE_IN_ORDER;
	p->max_burst_length = IDM_ISCSI_DEFAULT_MAX_BURST_LENGTH;
	p->first_burst_length = IDM_ISCSI_DEFAULT_FIRST_BURST_LENGTH;
	p->max_outstanding_r2t = IDM_ISCSI_DEFAULT_MAX_OUTSTANDING_R2T;
	p->error_recovery_level = IDM_ISCSI_DEFAULT_ERROR_RECOVERY_LEVEL;
	p->initiator_recv_dsl = IDM_ISCSI_DEFAULT_MAX_RECV_DATA_SEGMENT_LENGTH;
	p->target_recv_dsl = IDM_ISCSI_DEFAULT_MAX_RECV_DATA_SEGMENT_LENGTH;
	p->max_ahs_length = IDM_ISER_DEFAULT_MAX_AHS_LENGTH;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "Yes"))
		*out = true;
	else if (!strcmp(v, "No"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

static int parse_u32(const char *v, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long n;

	/* RFC 7143 5.1: decimal, or hex with 0x (we accept both). */
	if (*v < '0' || *v > '9') /* strtoull would skip blanks and signs */
		return -EINVAL;
	errno = 0;
	/* RFC 7143 5.1: decimal, or hex with 0x; a leading 0 is not octal */
	if (v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
		if (!isxdigit((unsigned char)v[2]))
			return -EINVAL;
		n = strtoull(v + 2, &end, 16);
	}
	else
		n = strtoull(v, &end, 10);
	if (errno || *end || n < min || n > max)
		return -EINVAL;
	*out = (uint32_t)n;
	return 0;
}

/* "CRC32C", "None", or a list whose first element decides (the final
 * negotiated value is a single one, but be lenient with "CRC32C,None"). */
static int parse_digest(const char *v, bool *out)
{
	size_t n = strcspn(v, ",");

	if (n == 6 && !strncmp(v, "CRC32C", 6))
		*out = true;
	else if (n == 4 && !strncmp(v, "None", 4))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

/* RFC 7145 6.7, 6.8: 0 (no limit) or 2..2^32-1 */
static int apply_u32_0_or_2(uint32_t *field, const char *key, const char *val,
			    char *err, size_t errlen)
{
	uint32_t v32;
	int r = parse_u32(val, 0, UINT32_MAX, &v32);

	if (r == 0 && v32 == 1)
		r = -EINVAL;
	if (r < 0) {
		snprintf(err, errlen, "%s=%s: not 0 or 2..4294967295", key, val);
		return r;
	}
	*field = v32;
	return 0;
}

static int apply(struct idm_conn_params *p, const char *key, const char *val,
		 char *err, size_t errlen)
{
	int r = 0;

#define U32(name, field, lo, hi)                                               \
	if (!strcmp(key, name))                                                \
		return (r = parse_u32(val, lo, hi, &p->field)) < 0             \
			       ? (snprintf(err, errlen, "%s=%s: not in %u..%u", \
					   key, val, (unsigned)(lo),            \
					   (unsigned)(hi)),                     \
				  r)                                            \
			       : 0;
#define BOOL(name, field)                                                      \
	if (!strcmp(key, name))                                                \
		return (r = parse_bool(val, &p->field)) < 0                    \
			       ? (snprintf(err, errlen, "%s=%s: not Yes/No",   \
					   key, val),                           \
				  r)                                            \
			       : 0;

	if (!strcmp(key, IDM_KEY_HEADER_DIGEST) || !strcmp(key, IDM_KEY_DATA_DIGEST)) {
		bool *f = key[0] == 'H' ? &p->header_digest : &p->data_digest;
		r = parse_digest(val, f);
		if (r < 0)
			snprintf(err, errlen, "%s=%s: not CRC32C/None", key, val);
		return r;
	}
	U32(IDM_KEY_MAX_BURST_LENGTH, max_burst_length, DSL_MIN, DSL_MAX)
	U32(IDM_KEY_FIRST_BURST_LENGTH, first_burst_length, DSL_MIN, DSL_MAX)
	U32(IDM_KEY_MAX_OUTSTANDING_R2T, max_outstanding_r2t, 1, 65535)
	U32(IDM_KEY_ERROR_RECOVERY_LEVEL, error_recovery_level, 0, 2)
	U32(IDM_KEY_INITIATOR_RECV_DATA_SEGMENT_LENGTH, initiator_recv_dsl, DSL_MIN, DSL_MAX)
	U32(IDM_KEY_TARGET_RECV_DATA_SEGMENT_LENGTH, target_recv_dsl, DSL_MIN, DSL_MAX)
	if (!strcmp(key, IDM_KEY_MAX_OUTSTANDING_UNEXPECTED_PDUS))
		return apply_u32_0_or_2(&p->max_outstanding_unexpected_pdus, key,
					val, err, errlen);
	if (!strcmp(key, IDM_KEY_MAX_AHS_LENGTH))
		return apply_u32_0_or_2(&p->max_ahs_length, key, val, err, errlen);
	BOOL(IDM_KEY_IMMEDIATE_DATA, immediate_data)
	BOOL(IDM_KEY_INITIAL_R2T, initial_r2t)
	BOOL(IDM_KEY_DATA_PDU_IN_ORDER, data_pdu_in_order)
	BOOL(IDM_KEY_DATA_SEQUENCE_IN_ORDER, data_seq_in_order)
	BOOL(IDM_KEY_RDMA_EXTENSIONS, rdma_extensions)
	BOOL(IDM_KEY_ISER_HELLO_REQUIRED, iser_hello_required)
	BOOL(IDM_KEY_TAGGED_BUFFER_FOR_SOLICITED_DATA_ONLY, tagged_buffer_solicited_only)
#undef U32
#undef BOOL
	return 1; /* not ours: ignored */
}

/* split_pair: the next "key=value" of a NUL-separated list at *kv (its n
 * bytes before the NUL or the end) into key and val. Returns 0 with both
 * filled, 1 for a pair to skip (a value longer than any key of ours takes,
 * e.g. a TargetAddress list, under a key that is not ours), or -EINVAL
 * with err set. */
static int split_pair(struct idm_conn_params *tmp, const char *kv, size_t n,
		      char key[KEY_MAX], char val[VAL_MAX], char *err,
		      size_t errlen)
{
	const char *eq = memchr(kv, '=', n);
	size_t klen = eq ? (size_t)(eq - kv) : 0;

	if (!eq || klen == 0 || klen >= KEY_MAX) {
		snprintf(err, errlen, "malformed key=value \"%.*s\"",
			 (int)(n > 64 ? 64 : n), kv);
		return -EINVAL;
	}
	memcpy(key, kv, klen);
	key[klen] = '\0';
	if (n - klen - 1 >= VAL_MAX) {
		/* Ours with such a value are invalid. */
		if (apply(tmp, key, "", err, errlen) == 1)
			return 1;
		snprintf(err, errlen, "%s: value too long", key);
		return -EINVAL;
	}
	memcpy(val, eq + 1, n - klen - 1);
	val[n - klen - 1] = '\0';
	return 0;
}

/* finish: what needs the whole list. MaxRecvDataSegmentLength is
 * declarative and directional (the value the peer declared, i.e. what this
 * side may send), and under iSER it is ignored (RFC 7145 6.2), which
 * RDMAExtensions later in the list may decide. */
static int finish(struct idm_conn_params *tmp, enum idm_role role,
		  bool have_mrdsl, uint32_t mrdsl, char *err, size_t errlen)
{
	if (have_mrdsl && !tmp->rdma_extensions) {
		if (role == IDM_ROLE_TARGET)
			tmp->initiator_recv_dsl = mrdsl;
		else
			tmp->target_recv_dsl = mrdsl;
	}
	if (tmp->first_burst_length > tmp->max_burst_length) {
		/* RFC 7143 13.14: FirstBurstLength MUST NOT exceed MaxBurstLength */
		snprintf(err, errlen, "FirstBurstLength %u > MaxBurstLength %u",
			 tmp->first_burst_length, tmp->max_burst_length);
		return -EINVAL;
	}
	return 0;
}

int idm_prov_params_parse(struct idm_conn_params *p, enum idm_role role,
		      const char *kv, size_t len, char *err, size_t errlen)
{
	struct idm_conn_params tmp = *p;
	uint32_t mrdsl = 0;
	bool have_mrdsl = false;
	const char *end = kv + len;
	char errbuf[128];
	int r;

	if (!err) {
		err = errbuf;
		errlen = sizeof(errbuf);
	}
	if (len && !kv)
		return -EINVAL;
	while (kv < end) {
		char key[KEY_MAX], val[VAL_MAX];
		const char *nul = memchr(kv, '\0', (size_t)(end - kv));
		size_t n = nul ? (size_t)(nul - kv) : (size_t)(end - kv);

		if (n == 0) { /* tolerate padding NULs */
			kv++;
			continue;
		}
		r = split_pair(&tmp, kv, n, key, val, err, errlen);
		kv += n + 1;
		if (r == 1)
			continue;
		if (r == 0 && !strcmp(key, IDM_KEY_MAX_RECV_DATA_SEGMENT_LENGTH) && role) {
			r = parse_u32(val, DSL_MIN, DSL_MAX, &mrdsl);
			if (r < 0)
				snprintf(err, errlen, "%s=%s: not in %u..%u", key,
					 val, DSL_MIN, DSL_MAX);
			have_mrdsl = r == 0;
		} else if (r == 0) {
			r = apply(&tmp, key, val, err, errlen);
		}
		if (r < 0)
			return r;
	}
	r = finish(&tmp, role, have_mrdsl, mrdsl, err, errlen);
	if (r == 0)
		*p = tmp;
	return r;
}
