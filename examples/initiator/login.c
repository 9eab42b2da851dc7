/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Login (RFC 7143 sections 6 and 11.12-11.13): a security stage with
 * AuthMethod=None or CHAP (RFC 7143 12.1.3: one-way, or mutual with
 * mutual-chap credentials), then operational negotiation, then Notice_Key_Values
 * and Enable_Datamover when the final Login Response arrives.
 * The key table and result functions are in examples/common (ex_keys).
 */
#include "initiator.h"

#include "ex_chap.h"
#include "ex_keys.h"
#include "ex_log.h"
#include "ex_text.h"
#include <libidm/keys.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGIN_MAX_ROUNDS 16 /* Login Requests per stage before giving up */
#define LOGIN_MAX_KEYS	 128

static void params_default(struct ex_params *p, uint32_t local_dsl)
{
	/* RFC 7143 section 13 defaults, used for anything not negotiated */
	ex_params_default(p);
	p->ini_dsl = local_dsl;
}

/* The values this initiator wants for the keys both roles state alike
 * (ex_params_value): its options, RFC 7143's defaults for the rest
 * except DefaultTime2Retain (no task outlives its connection). */
static void wanted_params(const struct ini_opts *o, struct ex_params *w)
{
	ex_params_default(w);
	w->initial_r2t = o->initial_r2t == INI_YES;
	w->immediate_data = o->immediate_data != INI_NO;
	w->max_burst = o->max_burst;
	w->first_burst = o->first_burst;
	w->max_outstanding_r2t = o->max_outstanding_r2t;
	w->t2r = 0;
}

static int offer(struct ini_session *s, struct ex_textbuf *tb, const char *key,
		 const char *val)
{
	struct ini_offer *of;

	if (s->noffers >= (int)(sizeof(s->offers) / sizeof(s->offers[0])))
		return -ENOSPC;
	of = &s->offers[s->noffers++];
	snprintf(of->key, sizeof(of->key), "%s", key);
	snprintf(of->val, sizeof(of->val), "%s", val);
	of->answered = false;
	return ex_text_add(tb, key, "%s", val);
}

static int offer_num(struct ini_session *s, struct ex_textbuf *tb,
		     const char *key, uint32_t v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", v);
	return offer(s, tb, key, buf);
}

static const char *tri_offer(int forced, const char *dflt)
{
	return forced == INI_YES ? "Yes" : forced == INI_NO ? "No" : dflt;
}

static bool is_iser(const struct ini_session *s)
{
	return strcmp(idm_conn_provider(s->conn), "iser") == 0;
}

/* HeaderDigest/DataDigest: None on iSER whatever was asked for (main()
 * warns about a forced CRC32C there); on TCP prefer None but accept
 * CRC32C if the target insists, unless the user forced one. */
static const char *digest_offer(const struct ini_session *s, const char *key,
				int forced)
{
	if (is_iser(s))
		return ex_key_iser_value(key);
	return forced == INI_YES  ? "CRC32C"
	       : forced == INI_NO ? "None"
				  : "None,CRC32C";
}

static int offer_digests(struct ini_session *s, struct ex_textbuf *tb,
			 int header, int data)
{
	int rc = 0;

	rc |= offer(s, tb, IDM_KEY_HEADER_DIGEST,
		    digest_offer(s, IDM_KEY_HEADER_DIGEST, header));
	rc |= offer(s, tb, IDM_KEY_DATA_DIGEST, digest_offer(s, IDM_KEY_DATA_DIGEST, data));
	return rc;
}

/* RFC 7143 section 13: session-wide data-path keys are irrelevant in a
 * discovery session. The forced digests are for the data path too: tgtd
 * answers None to a CRC32C-only offer here, so let the target choose -
 * except on iSER, where digests are None on every connection, discovery
 * included (RFC 7145 6.2; Linux's ib_iser offers None). */
static int offer_discovery(struct ini_session *s, struct ex_textbuf *tb)
{
	int rc = offer_digests(s, tb, INI_DEFAULT, INI_DEFAULT);

	rc |= offer_num(s, tb, IDM_KEY_MAX_RECV_DATA_SEGMENT_LENGTH,
			ini_opts_local_dsl(s->o, false));
	return rc;
}

/* RFC 7145 section 6: RDMAExtensions in the first operational request;
 * digests are None, and said so, as Linux does; the two RDSL keys
 * replace MaxRecvDataSegmentLength. */
static int offer_iser(struct ini_session *s, struct ex_textbuf *tb)
{
	const struct ini_opts *o = s->o;
	int rc = offer_digests(s, tb, o->header_digest, o->data_digest);

	rc |= offer(s, tb, IDM_KEY_RDMA_EXTENSIONS, "Yes");
	rc |= offer_num(s, tb, IDM_KEY_INITIATOR_RECV_DATA_SEGMENT_LENGTH,
			ini_opts_local_dsl(o, true));
	rc |= offer_num(s, tb, IDM_KEY_TARGET_RECV_DATA_SEGMENT_LENGTH,
			ini_opts_target_dsl(o));
	/* Declarations (6.8, 6.9), only when asked for: the default No
	 * needs no words. They are ours, whatever the answer. */
	if (o->tagged_solicited != INI_DEFAULT) {
		rc |= offer(s, tb, IDM_KEY_TAGGED_BUFFER_FOR_SOLICITED_DATA_ONLY,
			    tri_offer(o->tagged_solicited, "No"));
		s->params.tagged_solicited = o->tagged_solicited == INI_YES;
	}
	if (o->iser_hello != INI_DEFAULT) {
		rc |= offer(s, tb, IDM_KEY_ISER_HELLO_REQUIRED,
			    tri_offer(o->iser_hello, "No"));
		s->params.iser_hello = o->iser_hello == INI_YES;
	}
	return rc;
}

static int offer_tcp(struct ini_session *s, struct ex_textbuf *tb)
{
	const struct ini_opts *o = s->o;
	int rc = offer_digests(s, tb, o->header_digest, o->data_digest);

	rc |= offer_num(s, tb, IDM_KEY_MAX_RECV_DATA_SEGMENT_LENGTH,
			ini_opts_local_dsl(o, false));
	return rc;
}

/* The session-wide keys of a normal session, the same on every
 * transport. */
static int offer_session(struct ini_session *s, struct ex_textbuf *tb)
{
	struct ex_params want;
	const char *key;
	char buf[16];
	int rc = 0;

	wanted_params(s->o, &want);
	for (size_t i = 0; (key = ex_params_session_key(i)); i++)
		rc |= offer(s, tb, key, ex_params_value(&want, key, buf, sizeof(buf)));
	return rc;
}

/* The offers of the operational stage, in one Login Request. */
static int build_operational(struct ini_session *s, struct ex_textbuf *tb)
{
	int rc;

	if (s->discovery)
		return offer_discovery(s, tb) ? -ENOSPC : 0;
	rc = is_iser(s) ? offer_iser(s, tb) : offer_tcp(s, tb);
	rc |= offer_session(s, tb);
	return rc ? -ENOSPC : 0;
}

static int send_login(struct ini_session *s, bool transit, const char *data,
		      size_t len)
{
	uint8_t bhs[IDM_BHS_LEN] = { 0 };

	bhs[IDM_ISCSI_BHS_OPCODE] =
		IDM_ISCSI_OP_LOGIN_REQ | IDM_ISCSI_OP_IMMEDIATE;
	bhs[IDM_ISCSI_BHS_FLAGS] =
		(uint8_t)((transit ? IDM_ISCSI_LOGIN_TRANSIT : 0) |
			  (s->login_csg << IDM_ISCSI_LOGIN_CSG_SHIFT) |
			  (transit ? s->login_nsg : 0));
	/* Version-max and Version-min (bytes 2 and 3) stay 0 */
	memcpy(bhs + IDM_ISCSI_LOGIN_ISID, s->isid, sizeof(s->isid));
	idm_iscsi_put16(bhs + IDM_ISCSI_LOGIN_TSIH, s->tsih);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, s->ctl.itt);
	idm_iscsi_put16(bhs + IDM_ISCSI_LOGIN_CID, s->cid);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, s->cmdsn);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, s->exp_statsn);
	if (++s->login_rounds > LOGIN_MAX_ROUNDS) {
		ini_session_set_failed(s, -EPROTO, "login does not converge");
		return -EPROTO;
	}
	return ini_send_pdu(s, bhs, len ? data : NULL, len, NULL);
}

/* The credentials of this session: discovery-chap for discovery when
 * given, else chap. NULL: none. */
static const char *chap_user(const struct ini_session *s)
{
	if (s->discovery && s->o->disc_user)
		return s->o->disc_user;
	return s->o->chap_user;
}

static const char *chap_secret(const struct ini_session *s)
{
	if (s->discovery && s->o->disc_user)
		return s->o->disc_secret;
	return s->o->chap_secret;
}

/* The challenges this process sent lately: a target that sends one of
 * them back wants us to answer our own question for it (reflection). */
#define SENT_CHAL_MAX 16
static struct {
	uint8_t c[EX_CHAP_MAX_DIGEST];
	size_t len;
} sent_chal[SENT_CHAL_MAX];
static unsigned nsent;

static bool chal_is_ours(const uint8_t *c, size_t len)
{
	bool seen = false;

	for (unsigned i = 0; i < SENT_CHAL_MAX && i < nsent; i++)
		if (sent_chal[i].len == len &&
		    ex_chap_equal(sent_chal[i].c, c, len))
			seen = true;
	return seen;
}

static void chal_sent(const uint8_t *c, size_t len)
{
	unsigned i = nsent++ % SENT_CHAL_MAX;

	memcpy(sent_chal[i].c, c, len);
	sent_chal[i].len = len;
}

static int chap_fail(struct ini_session *s, const char *why)
{
	ini_session_set_failed(s, -EACCES, "CHAP: %s", why);
	return -1;
}

/* AuthMethod=CHAP chosen: offer our algorithms (CHAP_A). */
static int chap_offer_algs(struct ini_session *s, struct ex_textbuf *req)
{
	char list[16];

	ex_chap_alg_list_format(s->o->chap_algs, s->o->nchap_algs, list,
				sizeof(list));
	if (ex_text_add(req, "CHAP_A", "%s", list) < 0)
		return -1;
	s->chap_state = 1;
	return 1;
}

/* The target's CHAP_A must be one value, and one we offered. */
static int chap_take_alg(struct ini_session *s, const char *a)
{
	int want[1];

	want[0] = (int)strtol(a, NULL, 10);
	if (strchr(a, ',') || ex_chap_alg_choose(want, 1, a) < 0 ||
	    ex_chap_alg_choose(s->o->chap_algs, s->o->nchap_algs, a) < 0) {
		ini_session_set_failed(s, -EACCES, "CHAP: the target chose "
				       "CHAP_A=%.32s, not one we offered", a);
		return -1;
	}
	s->chap_alg = want[0];
	return 0;
}

/* CHAP_I and CHAP_C into *idv and chal; the challenge's length, or -1
 * after failing the session. */
static int chap_take_challenge(struct ini_session *s, const char *id,
			       const char *c, uint8_t *idv, uint8_t *chal)
{
	uint64_t n;
	int len = ex_bin_decode(c, chal, EX_CHAP_CHAL_MAX);

	if (ex_parse_num(id, &n) < 0 || n > 255 || len <= 0)
		return chap_fail(s, "bad CHAP_I or CHAP_C");
	if (chal_is_ours(chal, (size_t)len))
		return chap_fail(s, "the target sent back a challenge of ours "
				 "(reflection)");
	*idv = (uint8_t)n;
	return len;
}

/* CHAP_N and CHAP_R: our answer to the target's challenge. */
static int chap_add_response(struct ini_session *s, struct ex_textbuf *req,
			     uint8_t id, const uint8_t *chal, size_t len)
{
	uint8_t resp[EX_CHAP_MAX_DIGEST];
	char hex[2 * EX_CHAP_MAX_DIGEST + 3];
	int dl = ex_chap_response(s->chap_alg, id, chap_secret(s), chal, len,
				  resp);

	if (dl < 0) {
		ini_session_set_failed(s, dl, "CHAP: cannot compute the %s "
				       "response", ex_chap_alg_name(s->chap_alg));
		return -1;
	}
	ex_hex_encode(resp, (size_t)dl, hex, sizeof(hex));
	if (ex_text_add(req, "CHAP_N", "%s", chap_user(s)) < 0 ||
	    ex_text_add(req, "CHAP_R", "%s", hex) < 0)
		return -1;
	return 0;
}

/* Mutual CHAP: CHAP_I and CHAP_C of our own, a new challenge, never the
 * target's. */
static int chap_add_challenge(struct ini_session *s, struct ex_textbuf *req,
			      const uint8_t *theirs, size_t len)
{
	size_t dl = ex_chap_digest_len(s->chap_alg);
	char hex[2 * EX_CHAP_MAX_DIGEST + 3];

	do {
		if (ex_chap_random(s->chap_chal, dl, &s->chap_id) < 0) {
			ini_session_set_failed(s, -EIO, "no random bytes");
			return -1;
		}
	} while (dl == len && ex_chap_equal(s->chap_chal, theirs, dl));
	chal_sent(s->chap_chal, dl);
	ex_hex_encode(s->chap_chal, dl, hex, sizeof(hex));
	if (ex_text_add(req, "CHAP_I", "%u", s->chap_id) < 0 ||
	    ex_text_add(req, "CHAP_C", "%s", hex) < 0)
		return -1;
	return 0;
}

/* The target's challenge: answer it, and with mutual credentials ask
 * ours. */
static int chap_answer(struct ini_session *s, struct ex_kv *kv, int n,
		       struct ex_textbuf *req)
{
	const char *a = ex_text_get(kv, (size_t)n, "CHAP_A");
	const char *id = ex_text_get(kv, (size_t)n, "CHAP_I");
	const char *c = ex_text_get(kv, (size_t)n, "CHAP_C");
	uint8_t chal[EX_CHAP_CHAL_MAX], idv = 0;
	int len;

	if (!a || !id || !c)
		return chap_fail(s, "the target sent no challenge (CHAP_A, "
				 "CHAP_I, CHAP_C)");
	if (chap_take_alg(s, a) < 0)
		return -1;
	len = chap_take_challenge(s, id, c, &idv, chal);
	if (len < 0 || chap_add_response(s, req, idv, chal, (size_t)len) < 0)
		return -1;
	if (s->o->mutual_user &&
	    chap_add_challenge(s, req, chal, (size_t)len) < 0)
		return -1;
	ex_dbg("session %d: CHAP with %s%s", s->index,
	       ex_chap_alg_name(s->chap_alg), s->o->mutual_user ? ", mutual" : "");
	s->chap_state = 2;
	return 1;
}

/*
 * The CHAP keys of a Login Response in the security stage, and the
 * request that follows: CHAP_A after AuthMethod=CHAP, CHAP_N and CHAP_R
 * (with CHAP_I and CHAP_C for mutual CHAP) after the challenge; the
 * target's answer checked last. Returns 1 with *transit set when it
 * wrote the next request into `req`, 0 when CHAP has nothing to say,
 * -1 after failing the session.
 */
static int chap_step(struct ini_session *s, struct ex_kv *kv, int n,
		     struct ex_textbuf *req, bool *transit)
{
	const char *am = ex_text_get(kv, (size_t)n, IDM_KEY_AUTH_METHOD);

	if (s->chap_state == 0) {
		if (!am || strcmp(am, "CHAP"))
			return 0;
		*transit = false;
		return chap_offer_algs(s, req);
	}
	if (s->chap_state == 1) {
		*transit = true;
		return chap_answer(s, kv, n, req);
	}
	return 0;
}

/* The last Login Response of the security stage: with mutual
 * credentials, the target must have answered our challenge right. */
static int chap_check_target(struct ini_session *s, struct ex_kv *kv, int n)
{
	const char *nm = ex_text_get(kv, (size_t)n, "CHAP_N");
	const char *r = ex_text_get(kv, (size_t)n, "CHAP_R");
	uint8_t got[EX_CHAP_MAX_DIGEST], want[EX_CHAP_MAX_DIGEST];
	int dl, gl;
	bool ok;

	if (!s->o->mutual_user)
		return 0;
	if (s->chap_state != 2) {
		ini_session_set_failed(s, -EACCES, "CHAP: the target left the "
				       "security stage without proving itself (mutual CHAP)");
		return -1;
	}
	if (!nm || !r) {
		ini_session_set_failed(s, -EACCES, "CHAP: the target left the "
				       "security stage without proving itself: no "
				       "CHAP_N and CHAP_R (mutual CHAP)");
		return -1;
	}
	dl = ex_chap_response(s->chap_alg, s->chap_id, s->o->mutual_secret,
			      s->chap_chal, ex_chap_digest_len(s->chap_alg), want);
	gl = r ? ex_bin_decode(r, got, sizeof(got)) : -1;
	ok = dl > 0 && gl == dl && nm && ex_chap_equal(got, want, (size_t)dl);
	ok = nm && !strcmp(nm, s->o->mutual_user) && ok;
	if (!ok) {
		ini_session_set_failed(s, -EACCES, "CHAP: the target's answer "
				       "(CHAP_N '%.64s', CHAP_R) is wrong: it does "
				       "not know the mutual-chap secret",
				       nm ? nm : "");
		return -1;
	}
	s->chap_state = 3;
	ex_dbg("session %d: the target proved itself (mutual CHAP)", s->index);
	return 0;
}

int ini_login_start(struct ini_session *s)
{
	char buf[1024];
	struct ex_textbuf tb;
	int rc = 0;

	if (s->state != INI_S_LOGIN)
		return s->state == INI_S_FAILED ? s->fail : -ENOTCONN;
	params_default(&s->params, ini_opts_local_dsl(s->o, false));
	s->ctl.itt = ini_session_next_itt(s);
	s->ctl.done = false;
	s->login_done = false;
	s->login_rounds = 0;
	s->noffers = 0;
	s->text_len = 0;
	s->login_csg = IDM_ISCSI_STAGE_SECURITY;
	s->login_nsg = IDM_ISCSI_STAGE_OPERATIONAL;
	ex_textbuf_init(&tb, buf, sizeof(buf));
	rc |= ex_text_add(&tb, IDM_KEY_INITIATOR_NAME, "%s", s->o->initiator_name);
	rc |= ex_text_add(&tb, IDM_KEY_SESSION_TYPE, "%s",
			  s->discovery ? "Discovery" : "Normal");
	if (!s->discovery)
		rc |= ex_text_add(&tb, IDM_KEY_TARGET_NAME, "%s", s->target);
	s->chap_state = 0;
	/* with mutual credentials the target must prove itself: no None */
	rc |= offer(s, &tb, IDM_KEY_AUTH_METHOD,
		    !chap_user(s) ? "None" : s->o->mutual_user ? "CHAP" : "CHAP,None");
	if (rc)
		return -ENOSPC;
	ex_info("session %d: login to %s (%s session)", s->index,
		s->discovery ? s->o->portal.host : s->target,
		s->discovery ? "discovery" : "normal");
	return send_login(s, true, buf, tb.len);
}

static struct ini_offer *find_offer(struct ini_session *s, const char *key)
{
	for (int i = 0; i < s->noffers; i++)
		if (!strcmp(s->offers[i].key, key))
			return &s->offers[i];
	return NULL;
}

/* What we would offer for a key the target proposes on its own. */
static const char *my_value(struct ini_session *s, const char *key, char *buf,
			    size_t len)
{
	const struct ini_opts *o = s->o;
	struct ex_params want;

	if (!strcmp(key, IDM_KEY_HEADER_DIGEST))
		return digest_offer(s, key, o->header_digest);
	if (!strcmp(key, IDM_KEY_DATA_DIGEST))
		return digest_offer(s, key, o->data_digest);
	if (!strcmp(key, IDM_KEY_INITIATOR_RECV_DATA_SEGMENT_LENGTH)) {
		snprintf(buf, len, "%u", ini_opts_local_dsl(o, true));
		return buf;
	}
	if (!strcmp(key, IDM_KEY_TARGET_RECV_DATA_SEGMENT_LENGTH)) {
		snprintf(buf, len, "%u", ini_opts_target_dsl(o));
		return buf;
	}
	if (!strcmp(key, IDM_KEY_RDMA_EXTENSIONS))
		return is_iser(s) ? "Yes" : "No";
	if (!strcmp(key, IDM_KEY_AUTH_METHOD))
		return "None";
	wanted_params(o, &want);
	return ex_params_value(&want, key, buf, len);
}

/* Record a negotiated result in s->params (MaxRecvDataSegmentLength:
 * take_target_dsl()). */
static int apply(struct ini_session *s, const char *key, const char *val)
{
	ex_params_apply(&s->params, key, val);
	return 0;
}

/* MaxRecvDataSegmentLength is declarative: the target's own receive
 * limit (ours went the other way); ignored on iSER (RFC 7145 section
 * 6.2). */
static int take_target_dsl(struct ini_session *s, const char *key,
			   const char *val)
{
	struct ini_offer *of;
	uint64_t n;

	if (ex_parse_num(val, &n) < 0 || n < 512 || n > 16777215) {
		ini_session_set_failed(s, -EPROTO,
				       "bad MaxRecvDataSegmentLength=%s", val);
		return -EPROTO;
	}
	if (!is_iser(s))
		s->params.tgt_dsl = (uint32_t)n;
	if ((of = find_offer(s, key)))
		of->answered = true;
	return 0;
}

static bool is_logged_declaration(const char *key)
{
	return !strcmp(key, IDM_KEY_TARGET_ALIAS) || !strcmp(key, IDM_KEY_TARGET_ADDRESS) ||
	       !strcmp(key, IDM_KEY_TARGET_PORTAL_GROUP_TAG) ||
	       !strcmp(key, IDM_KEY_TARGET_NAME);
}

/* The target's answer to one of our offers. */
static int take_answer(struct ini_session *s, const struct ex_key *k,
		       struct ini_offer *of, const char *val)
{
	char out[256];
	int rc;

	of->answered = true;
	if (!k)
		return 0;
	rc = ex_key_accept(k, of->val, val, out, sizeof(out));
	if (rc == -ENOENT) {
		ex_info("session %d: target answered %s=%s; keeping the "
			"default", s->index, of->key, val);
		if ((!strcmp(of->key, IDM_KEY_HEADER_DIGEST) ||
		     !strcmp(of->key, IDM_KEY_DATA_DIGEST)) &&
		    !strcmp(of->val, "CRC32C")) {
			ini_session_set_failed(s, -EPROTO,
					       "target refused %s=CRC32C",
					       of->key);
			return -EPROTO;
		}
		return 0;
	}
	if (rc < 0) {
		ini_session_set_failed(s, -EPROTO,
				       "target answered %s=%s to our %s",
				       of->key, val, of->val);
		return -EPROTO;
	}
	return apply(s, of->key, out);
}

/* The target's own offer: answer it in the next Login Request. */
static int answer_offer(struct ini_session *s, const struct ex_key *k,
			struct ex_textbuf *answers, const char *key,
			const char *val)
{
	char out[256], mine_buf[32];
	const char *mine = k ? my_value(s, key, mine_buf, sizeof(mine_buf))
			     : NULL;
	int rc;

	if (!mine) {
		rc = ex_text_add(answers, key, "NotUnderstood");
	} else {
		rc = ex_key_respond(k, val, mine, out, sizeof(out));
		if (rc == 0)
			apply(s, key, out);
		rc = ex_text_add(answers, key, "%s", out);
	}
	return rc < 0 ? -ENOSPC : 0;
}

/*
 * One key of a Login Response: the answer to one of our offers, a
 * declaration, or an offer of the target's that we answer next round.
 */
static int handle_key(struct ini_session *s, struct ex_textbuf *answers,
		      const char *key, const char *val)
{
	const struct ex_key *k = ex_key_find(key);
	struct ini_offer *of;

	ex_dbg("session %d: login key %s=%s", s->index, key, val);
	if (!strcmp(key, IDM_KEY_MAX_RECV_DATA_SEGMENT_LENGTH))
		return take_target_dsl(s, key, val);
	if (is_logged_declaration(key))
		return 0;
	of = find_offer(s, key);
	if (of && !of->answered)
		return take_answer(s, k, of, val);
	return answer_offer(s, k, answers, key, val);
}

/* RFC 7143 section 11.13.5: Status-Class and Status-Detail of a Login
 * Response, in the RFC's words. */
static const char *login_status_class(uint8_t cls)
{
	switch (cls) {
	case 0:
		return "success";
	case 1:
		return "redirection";
	case 2:
		return "initiator error";
	case 3:
		return "target error";
	default:
		return "unknown status class";
	}
}

static const char *login_status_text(uint8_t cls, uint8_t detail)
{
	switch ((cls << 8) | detail) {
	case 0x0000:
		return "success";
	case 0x0101:
		return "target moved temporarily";
	case 0x0102:
		return "target moved permanently";
	case 0x0200:
		return "initiator error";
	case 0x0201:
		return "authentication failure";
	case 0x0202:
		return "authorization failure";
	case 0x0203:
		return "target not found";
	case 0x0204:
		return "target removed";
	case 0x0205:
		return "unsupported version";
	case 0x0206:
		return "too many connections";
	case 0x0207:
		return "missing parameter";
	case 0x0208:
		return "can't include in session";
	case 0x0209:
		return "session type not supported";
	case 0x020a:
		return "session does not exist";
	case 0x020b:
		return "invalid request during login";
	case 0x0300:
		return "target error";
	case 0x0301:
		return "service unavailable";
	case 0x0302:
		return "out of resources";
	default:
		return "unknown status detail";
	}
}

/* "initiator error: target not found (0x0203)"; a redirection says where
 * it points (the TargetAddress key of the response, if any). */
static void login_status_describe(char *buf, size_t len, uint8_t cls,
				  uint8_t detail, const uint8_t *data,
				  size_t dlen)
{
	static const char key[] = "TargetAddress=";
	bool redirect = cls == IDM_ISCSI_LOGIN_CLASS_REDIRECT;
	const char *to = NULL;
	int tolen = 0;

	for (size_t off = 0; redirect && data && off < dlen;) {
		const char *kv = (const char *)data + off;
		size_t n = strnlen(kv, dlen - off);

		if (n > sizeof(key) - 1 && !strncmp(kv, key, sizeof(key) - 1)) {
			to = kv + sizeof(key) - 1;
			tolen = (int)(n - (sizeof(key) - 1) > 255
					      ? 255
					      : n - (sizeof(key) - 1));
			break;
		}
		off += n + 1;
	}
	/* "redirection: target moved ..." says the same thing twice */
	snprintf(buf, len, "%s%s%s (0x%02x%02x)%s%.*s",
		 redirect ? "" : login_status_class(cls), redirect ? "" : ": ",
		 login_status_text(cls, detail), cls, detail, to ? " to " : "",
		 tolen, to ? to : "");
}

static const char *yes_no(bool b)
{
	return b ? "Yes" : "No";
}

static const char *digest_name(bool crc32c)
{
	return crc32c ? "CRC32C" : "None";
}

/* RFC 7143 6.2.2: an answer is optional when our offer alone fixes the
 * outcome (AND with No, OR with Yes); LIO leaves those out, and the
 * result is then our offer, not the default. */
static void apply_unanswered(struct ini_session *s)
{
	for (int i = 0; i < s->noffers; i++) {
		const struct ini_offer *of = &s->offers[i];
		const struct ex_key *k = ex_key_find(of->key);

		if (!of->answered && k &&
		    ((k->type == EX_KT_BOOL_AND && !strcmp(of->val, "No")) ||
		     (k->type == EX_KT_BOOL_OR && !strcmp(of->val, "Yes"))))
			apply(s, of->key, of->val);
	}
}

/* The negotiated keys as Notice_Key_Values hands them to the provider;
 * the target's MaxRecvDataSegmentLength not on iSER, which ignores it. */
static int build_notice(const struct ini_session *s, struct ex_textbuf *tb)
{
	const struct ex_params *p = &s->params;

	return ex_params_notice(p, is_iser(s) ? 0 : p->tgt_dsl, tb);
}

/* A failed datamover call fails the session with libidm's words. */
static int datamover_result(struct ini_session *s, int rc, const char *what)
{
	if (rc < 0)
		ini_session_set_failed(s, rc, "%s: %s (%s)", what,
				       idm_strerror(rc),
				       idm_conn_error(s->conn));
	return rc;
}

static void log_full_feature(const struct ini_session *s)
{
	const struct ex_params *p = &s->params;

	ex_info("session %d: full feature phase: TSIH 0x%04x, digests %s/%s, "
		"ImmediateData=%s InitialR2T=%s FirstBurst=%u MaxBurst=%u "
		"MRDSL local %u remote %u",
		s->index, s->tsih, digest_name(p->header_digest),
		digest_name(p->data_digest), yes_no(p->immediate_data),
		yes_no(p->initial_r2t), p->first_burst, p->max_burst,
		p->ini_dsl, p->tgt_dsl);
}

/* The final Login Response: hand the keys to the provider and let it
 * take over the data path (RFC 5047 Notice_Key_Values and
 * Enable_Datamover). */
static int notice_and_enable(struct ini_session *s)
{
	struct ex_params *p = &s->params;
	char buf[1024];
	struct ex_textbuf tb;
	int rc;

	apply_unanswered(s);
	if (p->first_burst > p->max_burst)
		p->first_burst = p->max_burst; /* RFC 7143 section 13.14 */
	ex_textbuf_init(&tb, buf, sizeof(buf));
	if (build_notice(s, &tb))
		return -ENOSPC;
	rc = datamover_result(s, idm_notice_key_values(s->conn, buf, tb.len),
			      "Notice_Key_Values");
	if (rc < 0)
		return rc;
	rc = datamover_result(s, idm_enable_datamover(s->conn, NULL, NULL, 0),
			      "Enable_Datamover");
	if (rc < 0)
		return rc;
	log_full_feature(s);
	s->state = INI_S_FFP;
	return 0;
}

static int rsp_csg(uint8_t flags)
{
	return (flags & IDM_ISCSI_LOGIN_CSG_MASK) >> IDM_ISCSI_LOGIN_CSG_SHIFT;
}

static int rsp_nsg(uint8_t flags)
{
	return flags & IDM_ISCSI_LOGIN_NSG_MASK;
}

static bool rsp_transit(const uint8_t *bhs)
{
	return bhs[IDM_ISCSI_BHS_FLAGS] & IDM_ISCSI_LOGIN_TRANSIT;
}

/* A Status-Class other than success ends the login, saying why. */
static void login_refused(struct ini_session *s, const uint8_t *bhs,
			  const uint8_t *data, size_t len)
{
	uint8_t cls = bhs[IDM_ISCSI_LOGIN_STATUS_CLASS];
	char st[384];

	login_status_describe(st, sizeof(st), cls, bhs[IDM_ISCSI_LOGIN_STATUS_DETAIL],
			      data, len);
	ini_session_set_failed(s, -ECONNREFUSED, "login %s: %s",
			       cls == IDM_ISCSI_LOGIN_CLASS_REDIRECT
				       ? "redirected (not followed)"
				       : "refused",
			       st);
}

/* Our ITT, a success, and the stages we are in and asked for; false
 * after failing the session. */
static bool login_rsp_valid(struct ini_session *s, const uint8_t *bhs,
			    const uint8_t *data, size_t len)
{
	uint8_t flags = bhs[IDM_ISCSI_BHS_FLAGS];
	bool transit = flags & IDM_ISCSI_LOGIN_TRANSIT;
	bool cont = flags & IDM_ISCSI_LOGIN_CONTINUE;

	if (idm_iscsi_bhs_itt(bhs) != s->ctl.itt) {
		ini_session_set_failed(s, -EPROTO,
				       "Login Response for ITT 0x%08x",
				       idm_iscsi_bhs_itt(bhs));
		return false;
	}
	if (bhs[IDM_ISCSI_LOGIN_STATUS_CLASS] != 0) {
		login_refused(s, bhs, data, len);
		return false;
	}
	if (rsp_csg(flags) != s->login_csg || (transit && cont) ||
	    (transit && rsp_nsg(flags) != s->login_nsg)) {
		ini_session_set_failed(
			s, -EPROTO,
			"bad Login Response stages: flags 0x%02x in stage %d",
			flags, s->login_csg);
		return false;
	}
	return true;
}

/* The first Login Response sets StatSN (RFC 7143 section 11.13.4); the
 * later ones are checked against it. In a target's PDU the CmdSN field
 * holds StatSN, and ExpStatSN ExpCmdSN. */
static void login_take_sn(struct ini_session *s, const uint8_t *bhs)
{
	if (s->login_have_statsn) {
		ini_session_update_sn(s, bhs, true);
		return;
	}
	s->login_have_statsn = true;
	s->exp_statsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_CMDSN) + 1;
	s->exp_cmdsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_EXP_STATSN);
	s->max_cmdsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_MAX_CMDSN);
}

/* The text of this response added to what came before. The keys once
 * all of it is here: their count, or -1 when the session failed or an
 * empty request went to fetch the rest (C bit). */
static int login_rsp_keys(struct ini_session *s, const uint8_t *bhs,
			  const uint8_t *data, size_t len, struct ex_kv *kv)
{
	int n;

	if (ini_text_append(s, data, len) < 0) {
		ini_session_set_failed(s, -E2BIG, "login text over %d bytes",
				       INI_TEXT_MAX);
		return -1;
	}
	if (bhs[IDM_ISCSI_BHS_FLAGS] & IDM_ISCSI_LOGIN_CONTINUE) {
		send_login(s, false, NULL, 0);
		return -1;
	}
	n = ex_text_parse(s->text, s->text_len, kv, LOGIN_MAX_KEYS);
	if (n < 0)
		ini_session_set_failed(s, -EPROTO, "malformed login text (%d)",
				       n);
	return n;
}

/* Every key but CHAP's: answers to our offers, and our answers to the
 * target's, into `answers`. -1 after failing the session. */
static int take_keys(struct ini_session *s, const struct ex_kv *kv, int n,
		     struct ex_textbuf *answers)
{
	for (int i = 0; i < n; i++) {
		if (!strncmp(kv[i].key, "CHAP_", 5) ||
		    handle_key(s, answers, kv[i].key, kv[i].val) == 0)
			continue;
		if (s->state != INI_S_FAILED)
			ini_session_set_failed(s, -E2BIG,
					       "too many login keys");
		return -1;
	}
	return 0;
}

/* The security stage's part of a Login Response: CHAP's next request,
 * or, when the target moves on, the checks of mutual CHAP. 1: a request
 * went out, 0: go on, -1: the session failed. */
static int security_rsp(struct ini_session *s, bool transit, struct ex_kv *kv,
			int n, struct ex_textbuf *answers)
{
	bool t = true;
	int r = chap_step(s, kv, n, answers, &t);

	if (r < 0) {
		if (s->state != INI_S_FAILED)
			ini_session_set_failed(s, -E2BIG, "CHAP keys do not fit");
		return -1;
	}
	if (r == 1 && !transit) {
		send_login(s, t, answers->p, answers->len);
		return 1;
	}
	if (transit && chap_check_target(s, kv, n) < 0)
		return -1;
	if (transit && chap_user(s) && s->chap_state == 1) {
		ini_session_set_failed(s, -EPROTO, "CHAP: the target "
				       "transited before its challenge");
		return -1;
	}
	return 0;
}

/* Security done: offer the operational keys. */
static void start_operational(struct ini_session *s,
			      struct ex_textbuf *answers)
{
	s->login_csg = IDM_ISCSI_STAGE_OPERATIONAL;
	s->login_nsg = IDM_ISCSI_STAGE_FULL_FEATURE;
	s->login_rounds = 0;
	s->noffers = 0;
	if (build_operational(s, answers) < 0) {
		ini_session_set_failed(s, -ENOSPC, "login keys do not fit");
		return;
	}
	send_login(s, true, answers->p, answers->len);
}

/* What follows a complete Login Response: another round in this stage,
 * the next stage, or the full feature phase. */
static void login_advance(struct ini_session *s, const uint8_t *bhs,
			  struct ex_textbuf *answers)
{
	if (!rsp_transit(bhs)) {
		/* The target wants another round in this stage. */
		send_login(s, true, answers->p, answers->len);
		return;
	}
	s->tsih = idm_iscsi_get16(bhs + IDM_ISCSI_LOGIN_TSIH);
	if (rsp_nsg(bhs[IDM_ISCSI_BHS_FLAGS]) == IDM_ISCSI_STAGE_FULL_FEATURE) {
		if (notice_and_enable(s) == 0)
			s->login_done = true;
		return;
	}
	start_operational(s, answers);
}

void ini_login_rsp(struct ini_session *s, const uint8_t *bhs,
		   const uint8_t *data, size_t len)
{
	struct ex_kv kv[LOGIN_MAX_KEYS];
	struct ex_textbuf answers;
	char req[1024];
	int n;

	if (!login_rsp_valid(s, bhs, data, len))
		return;
	login_take_sn(s, bhs);
	n = login_rsp_keys(s, bhs, data, len, kv);
	if (n < 0)
		return;
	ex_textbuf_init(&answers, req, sizeof(req));
	if (take_keys(s, kv, n, &answers) < 0)
		return;
	s->text_len = 0;
	if (s->login_csg == IDM_ISCSI_STAGE_SECURITY &&
	    security_rsp(s, rsp_transit(bhs), kv, n, &answers) != 0)
		return;
	login_advance(s, bhs, &answers);
}
