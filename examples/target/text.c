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
#include <libidm/keys.h>

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

static void drop_text_in(struct tconn *c)
{
	free(c->text_in);
	c->text_in = NULL;
	c->text_in_len = 0;
}

static void drop_text_out(struct tconn *c)
{
	free(c->text_out);
	c->text_out = NULL;
	c->text_out_len = c->text_out_off = 0;
}

static void send_chunk(struct tconn *c, const struct ttask *t)
{
	uint8_t r[IDM_ISCSI_BHS_LEN] = { 0 };
	uint32_t max = c->sess->p.ini_dsl;
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
	if (last)
		drop_text_out(c);
}

/* Reject the request, forget the text gathered so far, end the task */
static void refuse(struct ttask *t, uint8_t reason)
{
	send_reject(t->c, t->bhs, reason);
	drop_text_in(t->c);
	task_done(t);
}

/* A request with a Target Transfer Tag asks for the next part of a long
 * response */
static void text_continue(struct ttask *t, uint32_t ttt)
{
	struct tconn *c = t->c;

	if (c->text_out && ttt == c->text_ttt)
		send_chunk(c, t);
	else
		send_reject(c, t->bhs, IDM_ISCSI_REJECT_INVALID_PDU_FIELD);
	task_done(t);
}

/* Add the request's text to what earlier parts (C bit) brought. False:
 * refused, the task ended. */
static bool gather_text(struct ttask *t)
{
	struct tconn *c = t->c;

	if (t->data_len > TGT_TEXT_MAX - c->text_in_len) {
		refuse(t, IDM_ISCSI_REJECT_OUT_OF_RESOURCES);
		return false;
	}
	if (!c->text_in) {
		c->text_in = malloc(TGT_TEXT_MAX + 1);
		if (!c->text_in) {
			refuse(t, IDM_ISCSI_REJECT_OUT_OF_RESOURCES);
			return false;
		}
	}
	if (t->data_len)
		memcpy(c->text_in + c->text_in_len, t->data, t->data_len);
	c->text_in_len += t->data_len;
	return true;
}

/* More request text follows: acknowledge with an empty final response
 * (RFC 7143 11.11.1) */
static void ack_part(struct ttask *t)
{
	struct tconn *c = t->c;
	uint8_t r[IDM_ISCSI_BHS_LEN] = { 0 };

	r[0] = IDM_ISCSI_OP_TEXT_RSP;
	r[1] = IDM_ISCSI_FLAG_FINAL;
	memcpy(r + IDM_ISCSI_BHS_LUN, t->bhs + IDM_ISCSI_BHS_LUN, 8);
	idm_iscsi_put32(r + IDM_ISCSI_BHS_ITT, t->itt);
	idm_iscsi_put32(r + IDM_ISCSI_BHS_TTT, IDM_ISCSI_RESERVED_TAG);
	conn_fill_sn(c, r, true);
	conn_send(c, r, NULL, 0);
	task_done(t);
}

/* SendTargets=All (discovery sessions only), =our name, or empty (this
 * target, in a normal session) lists the target, if the initiator may
 * log in to it */
static void answer_send_targets(struct tconn *c, const char *val, const char *addr,
				struct ex_textbuf *out)
{
	bool all = !strcmp(val, "All") && c->sess->discovery;

	if (all || !strcmp(val, g_tgt.name) || (!*val && !c->sess->discovery)) {
		if (may_list(c)) {
			ex_text_add(out, IDM_KEY_TARGET_NAME, "%s", g_tgt.name);
			ex_text_add(out, IDM_KEY_TARGET_ADDRESS, "%s", addr);
		}
	} else if (!strcmp(val, "All")) {
		ex_text_add(out, IDM_KEY_SEND_TARGETS, "Reject");
	}
}

static void answer_keys(struct tconn *c, const struct ex_kv *kv, int n, struct ex_textbuf *out)
{
	char addr[300];

	target_address(c, addr, sizeof(addr));
	for (int i = 0; i < n; i++) {
		if (!strcmp(kv[i].key, IDM_KEY_SEND_TARGETS))
			answer_send_targets(c, kv[i].val, addr, out);
		else if (strcmp(kv[i].key, IDM_KEY_MAX_RECV_DATA_SEGMENT_LENGTH))
			ex_text_add(out, kv[i].key, "NotUnderstood");
		/* MaxRecvDataSegmentLength is declarative; libidm keeps the
		 * login-time value */
	}
}

/* The request is complete: parse it, answer, send the first part of the
 * answer (the initiator asks for the others, text_continue()). */
static void answer_request(struct ttask *t)
{
	struct tconn *c = t->c;
	struct ex_kv kv[MAX_KEYS];
	struct ex_textbuf out;
	int n;

	/* RFC 7143 6.1: every key=value, the last one too, ends with a
	 * NUL. Text without it breaks the format rule rather than a field:
	 * Reject with Protocol Error, as Linux LIO does, and go on. */
	if (c->text_in_len && c->text_in[c->text_in_len - 1] != '\0')
		return refuse(t, IDM_ISCSI_REJECT_PROTOCOL_ERROR);
	n = ex_text_parse(c->text_in, c->text_in_len, kv, MAX_KEYS);
	c->text_out = malloc(TGT_TEXT_MAX);
	if (n < 0 || !c->text_out)
		return refuse(t, n < 0 ? IDM_ISCSI_REJECT_PROTOCOL_ERROR
				       : IDM_ISCSI_REJECT_OUT_OF_RESOURCES);
	ex_textbuf_init(&out, c->text_out, TGT_TEXT_MAX);
	answer_keys(c, kv, n, &out);
	drop_text_in(c);
	c->text_out_len = (uint32_t)out.len;
	c->text_out_off = 0;
	send_chunk(c, t);
	task_done(t);
}

void text_request(struct ttask *t)
{
	uint32_t ttt = idm_iscsi_get32(t->bhs + IDM_ISCSI_BHS_TTT);

	if (ttt != IDM_ISCSI_RESERVED_TAG)
		return text_continue(t, ttt);
	/* a new request cancels what was left of an old one */
	drop_text_out(t->c);
	if (!gather_text(t))
		return;
	if (t->bhs[1] & IDM_ISCSI_TEXT_CONTINUE)
		return ack_part(t);
	answer_request(t);
}
