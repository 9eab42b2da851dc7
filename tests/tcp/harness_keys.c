/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Login keys for the harness: building and parsing iSCSI text
 * ("key=value\0" ...), and the Notice_Key_Values text both sides pass
 * to libidm after negotiation.
 */
#include "harness.h"
#include <libidm/keys.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void h_kv_add(char *buf, size_t *pos, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, cap - *pos, fmt, ap);
	va_end(ap);
	/* keep the NUL: it ends the key=value pair on the wire */
	if (n >= 0 && (size_t)n + 1 <= cap - *pos)
		*pos += (size_t)n + 1;
	else
		*pos = cap;
}

bool h_kv_get(const void *data, size_t len, const char *key, char *out,
	      size_t outlen)
{
	const char *p = data, *end = p + len;
	size_t klen = strlen(key);

	while (p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		const char *e = nul ? nul : end;

		if ((size_t)(e - p) > klen && !memcmp(p, key, klen) &&
		    p[klen] == '=') {
			size_t vlen = (size_t)(e - p) - klen - 1;

			if (vlen >= outlen)
				vlen = outlen - 1;
			memcpy(out, p + klen + 1, vlen);
			out[vlen] = '\0';
			return true;
		}
		p = e + 1;
	}
	return false;
}

static const char *yes_no(bool v)
{
	return v ? "Yes" : "No";
}

static const char *dg(bool v)
{
	return v ? "CRC32C" : "None";
}

/* The data transfer keys of both lists below, in the same order. */
static void add_data_keys(const struct h_params *p, char *buf, size_t *pos,
			  size_t cap)
{
	h_kv_add(buf, pos, cap, "ImmediateData=%s", yes_no(p->immediate_data));
	h_kv_add(buf, pos, cap, "InitialR2T=%s", yes_no(p->initial_r2t));
	h_kv_add(buf, pos, cap, "FirstBurstLength=%u", p->first_burst);
	h_kv_add(buf, pos, cap, "MaxBurstLength=%u", p->max_burst);
	h_kv_add(buf, pos, cap, "MaxOutstandingR2T=%u", p->max_r2t);
	h_kv_add(buf, pos, cap, "ErrorRecoveryLevel=%u", p->erl);
	h_kv_add(buf, pos, cap, "DataPDUInOrder=Yes");
	h_kv_add(buf, pos, cap, "DataSequenceInOrder=Yes");
}

size_t h_login_keys(const struct h_params *p, bool initiator, char *buf,
		    size_t cap)
{
	size_t pos = 0;

	if (initiator) {
		h_kv_add(buf, &pos, cap, "InitiatorName=%s", H_INITIATOR_NAME);
		h_kv_add(buf, &pos, cap, "TargetName=%s", H_TARGET_NAME);
		h_kv_add(buf, &pos, cap, "SessionType=Normal");
		/* offer a list when asking for CRC32C, as real initiators do */
		h_kv_add(buf, &pos, cap, "HeaderDigest=%s",
			 p->header_digest ? "CRC32C,None" : "None");
		h_kv_add(buf, &pos, cap, "DataDigest=%s",
			 p->data_digest ? "CRC32C,None" : "None");
		h_kv_add(buf, &pos, cap, "MaxRecvDataSegmentLength=%u",
			 p->ini_mrdsl);
	} else {
		h_kv_add(buf, &pos, cap, "TargetPortalGroupTag=1");
		h_kv_add(buf, &pos, cap, "HeaderDigest=%s", dg(p->header_digest));
		h_kv_add(buf, &pos, cap, "DataDigest=%s", dg(p->data_digest));
		h_kv_add(buf, &pos, cap, "MaxRecvDataSegmentLength=%u",
			 p->tgt_mrdsl);
	}
	add_data_keys(p, buf, &pos, cap);
	h_kv_add(buf, &pos, cap, "MaxConnections=1");
	h_kv_add(buf, &pos, cap, "DefaultTime2Wait=0");
	h_kv_add(buf, &pos, cap, "DefaultTime2Retain=0");
	return pos;
}

size_t h_notice_keys(const struct h_params *p, char *buf, size_t cap)
{
	size_t pos = 0;

	h_kv_add(buf, &pos, cap, "HeaderDigest=%s", dg(p->header_digest));
	h_kv_add(buf, &pos, cap, "DataDigest=%s", dg(p->data_digest));
	add_data_keys(p, buf, &pos, cap);
	h_kv_add(buf, &pos, cap, "InitiatorRecvDataSegmentLength=%u",
		 p->ini_mrdsl);
	h_kv_add(buf, &pos, cap, "TargetRecvDataSegmentLength=%u",
		 p->tgt_mrdsl);
	return pos;
}

static int get_num(const void *d, size_t len, const char *key, uint32_t *v)
{
	char s[32], *end;
	unsigned long n;

	if (!h_kv_get(d, len, key, s, sizeof(s)))
		return 0;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || end == s || *end || n == 0 || n > 0xffffff)
		return -EINVAL;
	*v = (uint32_t)n;
	return 0;
}

static int get_bool(const void *d, size_t len, const char *key, bool *v)
{
	char s[16];

	if (!h_kv_get(d, len, key, s, sizeof(s)))
		return 0;
	if (!strcmp(s, "Yes"))
		*v = true;
	else if (!strcmp(s, "No"))
		*v = false;
	else
		return -EINVAL;
	return 0;
}

static int get_erl(const void *d, size_t len, uint32_t *v)
{
	char s[16];

	/* 0 is a legal value here, unlike the lengths */
	if (!h_kv_get(d, len, "ErrorRecoveryLevel", s, sizeof(s)))
		return 0;
	if (s[0] < '0' || s[0] > '2' || s[1])
		return -EINVAL;
	*v = (uint32_t)(s[0] - '0');
	return 0;
}

static void get_digest(const void *d, size_t len, const char *key, bool *v)
{
	char s[32];

	/* first offered value wins (we accept both) */
	if (h_kv_get(d, len, key, s, sizeof(s)))
		*v = !strncmp(s, "CRC32C", 6);
}

int h_parse_keys(const void *data, size_t len, struct h_params *p,
		 uint32_t *peer_mrdsl)
{
	/* RFC 7143 section 13 defaults */
	p->header_digest = false;
	p->data_digest = false;
	p->immediate_data = IDM_ISCSI_DEFAULT_IMMEDIATE_DATA;
	p->initial_r2t = IDM_ISCSI_DEFAULT_INITIAL_R2T;
	p->first_burst = IDM_ISCSI_DEFAULT_FIRST_BURST_LENGTH;
	p->max_burst = IDM_ISCSI_DEFAULT_MAX_BURST_LENGTH;
	p->max_r2t = IDM_ISCSI_DEFAULT_MAX_OUTSTANDING_R2T;
	p->erl = IDM_ISCSI_DEFAULT_ERROR_RECOVERY_LEVEL;
	*peer_mrdsl = IDM_ISCSI_DEFAULT_MAX_RECV_DATA_SEGMENT_LENGTH;
	get_digest(data, len, "HeaderDigest", &p->header_digest);
	get_digest(data, len, "DataDigest", &p->data_digest);
	if (get_bool(data, len, "ImmediateData", &p->immediate_data) ||
	    get_bool(data, len, "InitialR2T", &p->initial_r2t) ||
	    get_num(data, len, "FirstBurstLength", &p->first_burst) ||
	    get_num(data, len, "MaxBurstLength", &p->max_burst) ||
	    get_num(data, len, "MaxOutstandingR2T", &p->max_r2t) ||
	    get_erl(data, len, &p->erl) ||
	    get_num(data, len, "MaxRecvDataSegmentLength", peer_mrdsl))
		return -EINVAL;
	return 0;
}
