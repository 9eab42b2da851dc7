/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iSCSI login/text key negotiation of the example programs
 * (examples/common): ex_text_parse splits a received data segment, then
 * every pair goes through what idm-target (ex_key_respond: the peer's
 * offer against our value) and idm-initiator (ex_key_accept: the peer's
 * answer to our offer) do with it, plus the checks of a local setting
 * (ex_key_check_setting), CHAP's binary values (ex_bin_decode) and
 * algorithm lists (ex_chap_alg_choose, ex_chap_alg_list_parse), and the
 * portal URL parser (a TargetAddress from SendTargets). Input: the text
 * as it comes off the wire. Every answer must be a NUL-terminated string
 * within its buffer.
 */
#include "fuzz.h"

#include "ex_chap.h"
#include "ex_keys.h"
#include "ex_text.h"
#include "ex_url.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PAIRS 128

/* What the example programs offer or accept per key (idm-target's
 * our_value() and idm-initiator's offers, in short). */
static const char *our_value(const struct ex_key *k)
{
	switch (k->type) {
	case EX_KT_BOOL_AND:
		return "Yes";
	case EX_KT_BOOL_OR:
		return "No";
	case EX_KT_NUM_MIN:
	case EX_KT_NUM_MAX:
	case EX_KT_NUM_DECL:
		return k->max > 262144 ? "262144" : "1";
	case EX_KT_BOOL_DECL:
		return "No";
	case EX_KT_LIST:
		return !strcmp(k->name, "AuthMethod") ? "CHAP,None" :
		       !strcmp(k->name, "TaskReporting") ? "RFC3720" : "CRC32C,None";
	default:
		return "x";
	}
}

static void check_out(const char *out, size_t cap)
{
	if (!memchr(out, '\0', cap))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ex_kv kv[MAX_PAIRS];
	char out[256], why[256];
	uint8_t bin[64];
	char *buf;
	int n;

	/* ex_text_parse writes one NUL past the text, like the callers'
	 * buffers allow (TGT_TEXT_MAX + 1) */
	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	n = ex_text_parse(buf, size, kv, MAX_PAIRS);
	if (n < 0 && n != -EINVAL && n != -E2BIG)
		abort();
	for (int i = 0; i < n; i++) {
		const struct ex_key *k = ex_key_find(kv[i].key);
		char setting[EX_KEY_MAX + 1 + 300];
		struct ex_url url;

		if (strlen(kv[i].key) > EX_KEY_MAX)
			abort(); /* ex_text_parse promised */
		if (k) {
			const char *mine = our_value(k);
			out[0] = '\0';
			ex_key_respond(k, kv[i].val, mine, out, sizeof(out));
			check_out(out, sizeof(out));
			/* a --key setting in place of ours */
			ex_key_respond(k, mine, kv[i].val, out, sizeof(out));
			check_out(out, sizeof(out));
			/* a tiny answer buffer: truncation or -ENOSPC (out
			 * untouched), never an overflow */
			out[0] = '\0';
			ex_key_respond(k, kv[i].val, kv[i].val, out, 4);
			check_out(out, 4);
			out[0] = '\0';
			if (ex_key_accept(k, mine, kv[i].val, out, sizeof(out)) == 0)
				check_out(out, sizeof(out));
			ex_key_accept(k, kv[i].val, mine, out, sizeof(out));
		}
		if (snprintf(setting, sizeof(setting), "%s=%s", kv[i].key, kv[i].val) <
		    (int)sizeof(setting)) {
			why[0] = '\0';
			if (ex_key_check_setting(setting, why, sizeof(why)) < 0)
				check_out(why, sizeof(why));
		}
		if (ex_bin_decode(kv[i].val, bin, sizeof(bin)) > (int)sizeof(bin))
			abort();
		/* a CHAP_A list: what the target chooses from it, a list
		 * setting (--chap-algorithms) and its CHAP_A form */
		{
			static const int pref[] = { 8, 7, 6, 5 };
			int algs[EX_CHAP_MAX_ALGS], na, c;
			char list[16];

			c = ex_chap_alg_choose(pref, 4, kv[i].val);
			if (c != -1 && !ex_chap_digest_len(c))
				abort();
			na = ex_chap_alg_list_parse(kv[i].val, algs, EX_CHAP_MAX_ALGS);
			if (na > EX_CHAP_MAX_ALGS)
				abort();
			if (na > 0) {
				if (ex_chap_alg_list_format(algs, na, list, sizeof(list)) < 0)
					abort();
				check_out(list, sizeof(list));
			}
		}
		if (ex_url_parse(kv[i].val, &url) == 0) {
			check_out(url.scheme, sizeof(url.scheme));
			check_out(url.host, sizeof(url.host));
			check_out(url.port, sizeof(url.port));
			check_out(url.target, sizeof(url.target));
		}
	}
	free(buf);
	return 0;
}
