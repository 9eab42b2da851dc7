/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The operational keys as values: defaults from <libidm/keys.h>, results
 * recorded, values spelled, the Notice_Key_Values text (ex_params.h).
 */
#include "ex_params.h"
#include "ex_keys.h"

#include <libidm/keys.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

void ex_params_default(struct ex_params *p)
{
	memset(p, 0, sizeof(*p));
	p->immediate_data = IDM_ISCSI_DEFAULT_IMMEDIATE_DATA;
	p->initial_r2t = IDM_ISCSI_DEFAULT_INITIAL_R2T;
	p->data_pdu_in_order = IDM_ISCSI_DEFAULT_DATA_PDU_IN_ORDER;
	p->data_seq_in_order = IDM_ISCSI_DEFAULT_DATA_SEQUENCE_IN_ORDER;
	p->max_burst = IDM_ISCSI_DEFAULT_MAX_BURST_LENGTH;
	p->first_burst = IDM_ISCSI_DEFAULT_FIRST_BURST_LENGTH;
	p->max_outstanding_r2t = IDM_ISCSI_DEFAULT_MAX_OUTSTANDING_R2T;
	p->erl = IDM_ISCSI_DEFAULT_ERROR_RECOVERY_LEVEL;
	p->max_conns = IDM_ISCSI_DEFAULT_MAX_CONNECTIONS;
	p->t2w = IDM_ISCSI_DEFAULT_TIME2WAIT;
	p->t2r = IDM_ISCSI_DEFAULT_TIME2RETAIN;
	p->ini_dsl = IDM_ISCSI_DEFAULT_MAX_RECV_DATA_SEGMENT_LENGTH;
	p->tgt_dsl = IDM_ISCSI_DEFAULT_MAX_RECV_DATA_SEGMENT_LENGTH;
}

/* A key's field: a flag (the digests: CRC32C or None; the booleans) or
 * a number, by the key's type. */
static void *field(struct ex_params *p, const struct ex_key *k)
{
	return (char *)p + k->param - 1;
}

static bool is_flag(const struct ex_key *k)
{
	return k->type == EX_KT_LIST || k->type == EX_KT_BOOL_AND ||
	       k->type == EX_KT_BOOL_OR || k->type == EX_KT_BOOL_DECL;
}

bool ex_params_apply(struct ex_params *p, const char *key, const char *val)
{
	const struct ex_key *k = ex_key_find(key);
	uint64_t n;
	bool b;

	if (!k || !k->param)
		return false;
	if (k->type == EX_KT_LIST) { /* HeaderDigest, DataDigest */
		*(bool *)field(p, k) = !strcmp(val, "CRC32C");
		return true;
	}
	if (is_flag(k)) {
		if (ex_parse_bool(val, &b) < 0)
			return false;
		*(bool *)field(p, k) = b;
		return true;
	}
	if (ex_parse_num(val, &n) < 0)
		return false;
	*(uint32_t *)field(p, k) = (uint32_t)n;
	return true;
}

static const char *field_value(const struct ex_params *p, const struct ex_key *k,
			       char *buf, size_t len)
{
	const void *at = field((struct ex_params *)p, k);

	if (k->type == EX_KT_LIST)
		return *(const bool *)at ? "CRC32C" : "None";
	if (is_flag(k))
		return *(const bool *)at ? "Yes" : "No";
	snprintf(buf, len, "%u", *(const uint32_t *)at);
	return buf;
}

const char *ex_params_value(const struct ex_params *p, const char *key, char *buf,
			    size_t len)
{
	const struct ex_key *k = ex_key_find(key);

	if (!k || !(k->flags & EX_KF_VALUE))
		return NULL;
	/* no field: RFC 3720's markers, obsolete in RFC 7143, never used */
	return k->param ? field_value(p, k, buf, len) : "No";
}

const char *ex_params_session_key(size_t i)
{
	const struct ex_key *k;

	for (size_t j = 0; (k = ex_key_at(j)); j++)
		if ((k->flags & EX_KF_SESSION) && i-- == 0)
			return k->name;
	return NULL;
}

int ex_params_notice(const struct ex_params *p, uint32_t peer_mrdsl,
		     struct ex_textbuf *tb)
{
	const struct ex_key *k;
	char buf[16];
	int rc = 0;

	for (size_t i = 0; (k = ex_key_at(i)); i++) {
		if ((k->flags & EX_KF_NOTICE) ||
		    (p->rdma && (k->flags & EX_KF_NOTICE_RDMA)))
			rc |= ex_text_add(tb, k->name, "%s",
					  field_value(p, k, buf, sizeof(buf)));
		else if ((k->flags & EX_KF_DIRECTIONAL) && peer_mrdsl)
			rc |= ex_text_add(tb, k->name, "%u", peer_mrdsl);
	}
	return rc;
}

int ex_params_check_bursts(const char *const *kvs, int n, char *why, size_t whylen)
{
	const size_t mbl = offsetof(struct ex_params, max_burst) + 1;
	const size_t fbl = offsetof(struct ex_params, first_burst) + 1;
	struct ex_params p;
	bool have_mbl = false, have_fbl = false;

	ex_params_default(&p);
	for (int i = 0; i < n; i++) {
		const char *eq = strchr(kvs[i], '=');
		const struct ex_key *k;
		char key[64];

		if (!eq || (size_t)(eq - kvs[i]) >= sizeof(key))
			continue;
		memcpy(key, kvs[i], (size_t)(eq - kvs[i]));
		key[eq - kvs[i]] = '\0';
		k = ex_key_find(key);
		if (!k || (k->param != mbl && k->param != fbl) ||
		    !ex_params_apply(&p, key, eq + 1))
			continue;
		have_mbl |= k->param == mbl;
		have_fbl |= k->param == fbl;
	}
	if (have_mbl && have_fbl && p.first_burst > p.max_burst) {
		snprintf(why, whylen, "FirstBurstLength (%u) must not exceed "
			 "MaxBurstLength (%u) (RFC 7143 section 13.14)",
			 p.first_burst, p.max_burst);
		return -EINVAL;
	}
	return 0;
}
