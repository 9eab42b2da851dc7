/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Notice_Key_Values: the negotiated keys that matter to a data mover,
 * parsed from iSCSI text ("Key=Value\0..."). Ranges are those of RFC 7143
 * section 13 and RFC 7145 section 6.
 */
#include "core.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DSL_MIN 512u
#define DSL_MAX 16777215u /* 2^24 - 1 */

void idm_prov_params_default(struct idm_conn_params *p)
{
	memset(p, 0, sizeof(*p));
	p->immediate_data = true;
	p->initial_r2t = true;
	p->data_pdu_in_order = true;
	p->data_seq_in_order = true;
	p->max_burst_length = 262144;
	p->first_burst_length = 65536;
	p->max_outstanding_r2t = 1;
	p->error_recovery_level = 0;
	p->initiator_recv_dsl = 8192;
	p->target_recv_dsl = 8192;
	p->max_ahs_length = 256; /* RFC 7145 default */
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

	if (!strcmp(key, "HeaderDigest") || !strcmp(key, "DataDigest")) {
		bool *f = key[0] == 'H' ? &p->header_digest : &p->data_digest;
		r = parse_digest(val, f);
		if (r < 0)
			snprintf(err, errlen, "%s=%s: not CRC32C/None", key, val);
		return r;
	}
	U32("MaxBurstLength", max_burst_length, DSL_MIN, DSL_MAX)
	U32("FirstBurstLength", first_burst_length, DSL_MIN, DSL_MAX)
	U32("MaxOutstandingR2T", max_outstanding_r2t, 1, 65535)
	U32("ErrorRecoveryLevel", error_recovery_level, 0, 2)
	U32("InitiatorRecvDataSegmentLength", initiator_recv_dsl, DSL_MIN, DSL_MAX)
	U32("TargetRecvDataSegmentLength", target_recv_dsl, DSL_MIN, DSL_MAX)
	if (!strcmp(key, "MaxOutstandingUnexpectedPDUs") ||
	    !strcmp(key, "MaxAHSLength")) {
		/* RFC 7145 6.7, 6.8: 0 (no limit) or 2..2^32-1 */
		uint32_t v32;
		r = parse_u32(val, 0, UINT32_MAX, &v32);
		if (r == 0 && v32 == 1)
			r = -EINVAL;
		if (r < 0) {
			snprintf(err, errlen, "%s=%s: not 0 or 2..4294967295",
				 key, val);
			return r;
		}
		if (key[3] == 'O')
			p->max_outstanding_unexpected_pdus = v32;
		else
			p->max_ahs_length = v32;
		return 0;
	}
	BOOL("ImmediateData", immediate_data)
	BOOL("InitialR2T", initial_r2t)
	BOOL("DataPDUInOrder", data_pdu_in_order)
	BOOL("DataSequenceInOrder", data_seq_in_order)
	BOOL("RDMAExtensions", rdma_extensions)
	BOOL("iSERHelloRequired", iser_hello_required)
	BOOL("TaggedBufferForSolicitedDataOnly", tagged_buffer_solicited_only)
#undef U32
#undef BOOL
	return 1; /* not ours: ignored */
}

int idm_prov_params_parse(struct idm_conn_params *p, enum idm_role role,
		      const char *kv, size_t len, char *err, size_t errlen)
{
	struct idm_conn_params tmp = *p;
	uint32_t mrdsl = 0;
	bool have_mrdsl = false;
	const char *end = kv + len;
	char errbuf[128];

	if (!err) {
		err = errbuf;
		errlen = sizeof(errbuf);
	}
	if (len && !kv)
		return -EINVAL;
	while (kv < end) {
		char key[64], val[256];
		const char *nul = memchr(kv, '\0', (size_t)(end - kv));
		size_t n = nul ? (size_t)(nul - kv) : (size_t)(end - kv);
		const char *eq = memchr(kv, '=', n);
		int r;

		if (n == 0) { /* tolerate padding NULs */
			kv++;
			continue;
		}
		if (eq && eq != kv && (size_t)(eq - kv) < sizeof(key) &&
		    n - (size_t)(eq - kv) - 1 >= sizeof(val)) {
			/* Values longer than any key of ours takes (e.g.
			 * TargetAddress lists): not ours, skip. Ours with such a
			 * value are invalid. */
			memcpy(key, kv, (size_t)(eq - kv));
			key[eq - kv] = '\0';
			if (apply(&tmp, key, "", err, errlen) == 1) {
				kv += n + 1;
				continue;
			}
			snprintf(err, errlen, "%s: value too long", key);
			return -EINVAL;
		}
		if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(key)) {
			snprintf(err, errlen, "malformed key=value \"%.*s\"",
				 (int)(n > 64 ? 64 : n), kv);
			return -EINVAL;
		}
		memcpy(key, kv, (size_t)(eq - kv));
		key[eq - kv] = '\0';
		memcpy(val, eq + 1, n - (size_t)(eq - kv) - 1);
		val[n - (size_t)(eq - kv) - 1] = '\0';
		kv += n + 1;

		if (!strcmp(key, "MaxRecvDataSegmentLength") && role) {
			/* Declarative and directional: the value the peer
			 * declared, i.e. what this side may send. Applied
			 * after the loop: under iSER it is ignored (RFC 7145
			 * 6.2) and RDMAExtensions may come later in the list. */
			r = parse_u32(val, DSL_MIN, DSL_MAX, &mrdsl);
			if (r < 0)
				snprintf(err, errlen, "%s=%s: not in %u..%u", key,
					 val, DSL_MIN, DSL_MAX);
			else
				have_mrdsl = true;
		} else {
			r = apply(&tmp, key, val, err, errlen);
		}
		if (r < 0)
			return r;
	}
	if (have_mrdsl && !tmp.rdma_extensions) {
		if (role == IDM_ROLE_TARGET)
			tmp.initiator_recv_dsl = mrdsl;
		else
			tmp.target_recv_dsl = mrdsl;
	}
	if (tmp.first_burst_length > tmp.max_burst_length) {
		/* RFC 7143 13.14: FirstBurstLength MUST NOT exceed MaxBurstLength */
		snprintf(err, errlen, "FirstBurstLength %u > MaxBurstLength %u",
			 tmp.first_burst_length, tmp.max_burst_length);
		return -EINVAL;
	}
	*p = tmp;
	return 0;
}
