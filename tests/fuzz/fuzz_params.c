/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Notice_Key_Values text (lib/params.c, idm_prov_params_parse): the
 * negotiated keys an iSCSI layer hands to libidm, parsed into the values
 * the providers size their buffers and PDUs by. Input: one byte that
 * picks the role (its value modulo 3) and whether to parse twice (bit 2: a later
 * Notice_Key_Values over the first one's result), then the key=value
 * text. On success the result must be within the RFC ranges the parser
 * promises; anything else is a bug and traps.
 */
#include "fuzz.h"

#include <libidm/provider.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DSL_MIN 512u
#define DSL_MAX 16777215u

static void check(const struct idm_conn_params *p)
{
	/* what providers rely on: RFC 7143 section 13 ranges */
	if (p->max_burst_length < DSL_MIN || p->max_burst_length > DSL_MAX ||
	    p->first_burst_length < DSL_MIN ||
	    p->first_burst_length > p->max_burst_length ||
	    p->max_outstanding_r2t < 1 || p->max_outstanding_r2t > 65535 ||
	    p->error_recovery_level > 2 ||
	    p->initiator_recv_dsl < DSL_MIN || p->initiator_recv_dsl > DSL_MAX ||
	    p->target_recv_dsl < DSL_MIN || p->target_recv_dsl > DSL_MAX ||
	    p->max_ahs_length == 1 || p->max_outstanding_unexpected_pdus == 1)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct idm_conn_params p, before;
	enum idm_role role;
	char err[128];
	char *kv;
	size_t len;
	int rc;

	if (size < 1)
		return 0;
	/* 0 is legal too: MaxRecvDataSegmentLength then ignored */
	role = (enum idm_role)(data[0] % 3);
	len = size - 1;
	/* a copy of exactly len bytes: ASan sees any read past the text */
	kv = malloc(len ? len : 1);
	if (!kv)
		return 0;
	memcpy(kv, data + 1, len);

	idm_prov_params_default(&p);
	check(&p);
	for (int pass = 0; pass < ((data[0] & 4) ? 2 : 1); pass++) {
		memcpy(&before, &p, sizeof(p)); /* padding too, for memcmp */
		err[0] = '\0';
		rc = idm_prov_params_parse(&p, role, kv, len, err, sizeof(err));
		if (rc == 0)
			check(&p);
		else if (rc != -EINVAL || memcmp(&p, &before, sizeof(p)) || !err[0] ||
			 !memchr(err, '\0', sizeof(err)))
			abort(); /* failure: -EINVAL, a message, nothing changed */
	}
	/* no error buffer: the parser uses its own */
	idm_prov_params_parse(&p, role, kv, len, NULL, 0);
	free(kv);
	return 0;
}
