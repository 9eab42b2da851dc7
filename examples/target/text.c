/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Text requests in full feature phase (RFC 7143 11.10-11.11): SendTargets
 * (discovery, RFC 7143 appendix C) and long responses split across
 * several Text Responses with the C bit and a Target Transfer Tag.
 */
#include "target.h"
#include "access.h"
#include "ex_log.h"
#include "ex_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEYS 64

void text_free(struct tconn *c)
{
	free(c->text_in);
	free(c->text_out);
	c->text_in = c->text_out = NULL;
	c->text_in_len = c->text_out_len = c->text_out_off = 0;
}

/* "ip:port" from libidm -> "ip:port,1" or "[ip6]:port,1" */
static void target_address(struct tconn *c, char *out, size_t n)
{
	const char *local = idm_conn_local_name(c->ic);
	const char *colon = strrchr(local, ':');

	if (colon && memchr(local, ':', (size_t)(colon - local)) && local[0] != '[')
		snprintf(out, n, "[%.*s]%s,1", (int)(colon - local), local, colon);
	else
		snprintf(out, n, "%s,1", local);
}

/* SendTargets names only the targets the initiator may log in to
 * (access.c), as tgt and LIO do: a discovery session from an address the
 * target turns away gets an empty list, and the log says why. */
static bool may_list(struct tconn *c)
{
	struct access_request rq;
	char why[512];

	access_request_init(&rq, c->ic, c->sess->iname, g_tgt.name);
	if (access_check(&rq, why, sizeof(why)) == 0)
		return true;
	ex_warn("%s: SendTargets: %s not listed: %s", idm_conn_peer_name(c->ic), g_tgt.name,
		why);
	return false;
}

static void send_chunk(struct tconn *c, const struct ttask *t)
{
	uint8_t r[IDM_ISCSI_BHS_LEN] = { 0 };
	uint32_t max = c->sess->p.ini_mrdsl;
	uint32_t left = c->text_out_len - c->text_out_off;
	uint32_t n = left < max ? left : max;
	bool last = n == left;

	r[0] = IDM_ISCSI_OP_TEXT_RSP;
	r[1] = last ? IDM_ISCSI_FLAG_FINAL : IDM_ISCSI_TEXT_CONTINUE;
	memcpy(r + IDM_ISCSI_BHS_LUN, t->bhs + IDM_ISCSI_BHS_LUN, 8);
	idm_iscsi_put32(r + IDM_ISCSI_BHS_ITT, t->itt);
	if (!last) {
		if (++c->text_ttt == IDM_ISCSI_RESERVED_TAG)
			c->text_ttt = 1;
	}
	idm_iscsi_put32(r + IDM_ISCSI_BHS_TTT, last ? IDM_ISCSI_RESERVED_TAG : c->text_ttt);
	conn_fill_sn(c, r, true);
	conn_send(c, r, c->text_out ? c->text_out + c->text_out_off : NULL, n);
	c->text_out_off += n;
	if (last) {
		free(c->text_out);
		c->text_out = NULL;
		c->text_out_len = c->text_out_off = 0;
	}
}

void text_request(struct ttask *t)
{
	struct tconn *c = t->c;
	struct ex_kv kv[MAX_KEYS];
	struct ex_textbuf out;
	char addr[300];
	uint32_t ttt = idm_iscsi_get32(t->bhs + IDM_ISCSI_BHS_TTT);
	int n;

	/* continuation of a long response */
	if (ttt != IDM_ISCSI_RESERVED_TAG) {
		if (c->text_out && ttt == c->text_ttt) {
			send_chunk(c, t);
		} else {
			send_reject(c, t->bhs, IDM_ISCSI_REJECT_INVALID_PDU_FIELD);
		}
		task_done(t);
		return;
	}
	/* a new request cancels what was left of an old one */
	free(c->text_out);
	c->text_out = NULL;
	c->text_out_len = c->text_out_off = 0;

	if (t->data_len > TGT_TEXT_MAX - c->text_in_len) {
		send_reject(c, t->bhs, IDM_ISCSI_REJECT_OUT_OF_RESOURCES);
		free(c->text_in);
		c->text_in = NULL;
		c->text_in_len = 0;
		task_done(t);
		return;
	}
	if (!c->text_in) {
		c->text_in = malloc(TGT_TEXT_MAX + 1);
		if (!c->text_in) {
			send_reject(c, t->bhs, IDM_ISCSI_REJECT_OUT_OF_RESOURCES);
			task_done(t);
			return;
		}
	}
	if (t->data_len)
		memcpy(c->text_in + c->text_in_len, t->data, t->data_len);
	c->text_in_len += t->data_len;
	if (t->bhs[1] & IDM_ISCSI_TEXT_CONTINUE) {
		/* more request text follows: acknowledge with an empty final
		 * response (RFC 7143 11.11.1) */
		uint8_t r[IDM_ISCSI_BHS_LEN] = { 0 };
		r[0] = IDM_ISCSI_OP_TEXT_RSP;
		r[1] = IDM_ISCSI_FLAG_FINAL;
		memcpy(r + IDM_ISCSI_BHS_LUN, t->bhs + IDM_ISCSI_BHS_LUN, 8);
		idm_iscsi_put32(r + IDM_ISCSI_BHS_ITT, t->itt);
		idm_iscsi_put32(r + IDM_ISCSI_BHS_TTT, IDM_ISCSI_RESERVED_TAG);
		conn_fill_sn(c, r, true);
		conn_send(c, r, NULL, 0);
		task_done(t);
		return;
	}
	/* RFC 7143 6.1: every key=value, the last one too, ends with a
	 * NUL. Text without it breaks the format rule rather than a field:
	 * Reject with Protocol Error, as Linux LIO does, and go on. */
	if (c->text_in_len && c->text_in[c->text_in_len - 1] != '\0') {
		send_reject(c, t->bhs, IDM_ISCSI_REJECT_PROTOCOL_ERROR);
		free(c->text_in);
		c->text_in = NULL;
		c->text_in_len = 0;
		task_done(t);
		return;
	}
	n = ex_text_parse(c->text_in, c->text_in_len, kv, MAX_KEYS);
	c->text_out = malloc(TGT_TEXT_MAX);
	if (n < 0 || !c->text_out) {
		send_reject(c, t->bhs, n < 0 ? IDM_ISCSI_REJECT_PROTOCOL_ERROR : IDM_ISCSI_REJECT_OUT_OF_RESOURCES);
		free(c->text_in);
		c->text_in = NULL;
		c->text_in_len = 0;
		task_done(t);
		return;
	}
	ex_textbuf_init(&out, c->text_out, TGT_TEXT_MAX);
	target_address(c, addr, sizeof(addr));
	for (int i = 0; i < n; i++) {
		const char *key = kv[i].key, *val = kv[i].val;
		if (!strcmp(key, "SendTargets")) {
			/* "All" only in discovery sessions; "" means this target */
			bool all = !strcmp(val, "All") && c->sess->discovery;
			if (all || !strcmp(val, g_tgt.name) || (!*val && !c->sess->discovery)) {
				if (may_list(c)) {
					ex_text_add(&out, "TargetName", "%s", g_tgt.name);
					ex_text_add(&out, "TargetAddress", "%s", addr);
				}
			} else if (!strcmp(val, "All")) {
				ex_text_add(&out, "SendTargets", "Reject");
			}
		} else if (!strcmp(key, "MaxRecvDataSegmentLength")) {
			/* declarative; libidm keeps the login-time value */
		} else {
			ex_text_add(&out, key, "NotUnderstood");
		}
	}
	free(c->text_in);
	c->text_in = NULL;
	c->text_in_len = 0;
	c->text_out_len = (uint32_t)out.len;
	c->text_out_off = 0;
	send_chunk(c, t);
	task_done(t);
}
