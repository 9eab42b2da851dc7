/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Login phase (RFC 7143 sections 6 and 11.12-11.13): stages, text key
 * negotiation (operational keys of RFC 7143 section 13 and, on iSER
 * connections, the RFC 7145 section 6 keys), session creation and
 * reinstatement, then Notice_Key_Values + Enable_Datamover with the final
 * Login Response. Security: AuthMethod=None, or CHAP (RFC 7143 12.1.3)
 * when credentials were given: one-way, or mutual when the initiator
 * sends CHAP_I and CHAP_C, with SHA3-256, SHA-256, SHA1 or MD5 in the
 * target's order (--chap-algorithms); who may log in at all is
 * access.c's to say (loopback only by default).
 */
#include "target.h"
#include "access.h"
#include "authlimit.h"
#include "budget.h"
#include "ex_chap.h"
#include "ex_keys.h"
#include "ex_log.h"
#include "ex_text.h"
#include <libidm/keys.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define MAX_KEYS 128

/* Login status classes/details (RFC 7143 11.13.5) */
#define LS_INITIATOR_ERROR 0x0200
#define LS_AUTH_FAILED 0x0201
#define LS_AUTHZ_FAILED 0x0202
#define LS_NOT_FOUND 0x0203
#define LS_UNSUPPORTED_VERSION 0x0205
#define LS_TOO_MANY_CONNS 0x0206
#define LS_MISSING_PARAM 0x0207
#define LS_SESSION_NOT_EXIST 0x020a
#define LS_INVALID_REQUEST 0x020b
#define LS_TARGET_ERROR 0x0300
#define LS_OUT_OF_RESOURCES 0x0302

struct login_state {
	bool started;
	uint8_t isid[6];
	uint16_t tsih;
	uint16_t cid;
	int csg;                  /* stage the last response was in */
	bool discovery;
	char iname[224];
	char tname[224];
	bool mrdsl_declared;
	bool tpgt_declared;
	struct ex_params p;
	/* CHAP (RFC 7143 12.1.3): 0 none, 1 agreed, 2 challenged, 3 passed */
	int chap_state;
	int chap_alg;             /* CHAP_A chosen */
	uint8_t chap_id;
	uint8_t chap_chal[EX_CHAP_MAX_DIGEST]; /* ours: digest length */
	char chap_name[256];
	uint8_t chap_resp[EX_CHAP_MAX_DIGEST];
	bool chap_have_resp;
	/* mutual CHAP: the initiator's identifier and challenge */
	int chap_ini_id;          /* -1: none */
	uint8_t *chap_ini_chal;
	int chap_ini_chal_len;
	/* The text of the request being received: allocated per request and
	 * kept between PDUs only while the initiator continues it (C=1), so
	 * that a connection waiting in login holds a few KB, not 64. */
	char *in;
	uint32_t in_len;
};

void login_free(struct tconn *c)
{
	if (c->login) {
		free(c->login->in);
		free(c->login->chap_ini_chal);
		explicit_bzero(c->login, sizeof(*c->login));
	}
	free(c->login);
	c->login = NULL;
}

/* Discovery sessions authenticate with discovery-chap if given, else
 * like normal sessions. */
static bool chap_wanted(const struct login_state *ls)
{
	if (ls && ls->discovery && g_tgt.disc_user)
		return true;
	return tgt_chap_required();
}

/* The credentials this login must give: NULL if it has none. */
static const char *chap_secret_for(const struct login_state *ls, const char **user)
{
	if (ls->discovery && g_tgt.disc_user) {
		*user = g_tgt.disc_user;
		return g_tgt.disc_secret;
	}
	for (int i = 0; i < g_tgt.nchap_initiators; i++)
		if (!strcmp(g_tgt.chap_initiators[i].iname, ls->iname)) {
			*user = g_tgt.chap_initiators[i].user;
			return g_tgt.chap_initiators[i].secret;
		}
	*user = g_tgt.chap_user;
	return g_tgt.chap_secret;
}

/* Our side of every negotiable key: the value we want or the list we
 * accept, in preference order. */
/* --key Name=Value: the value given for `key`, or NULL */
static const char *key_override(const char *key)
{
	size_t kl = strlen(key);

	for (int i = 0; i < g_tgt.nkey_overrides; i++) {
		const char *o = g_tgt.key_overrides[i];
		if (!strncmp(o, key, kl) && o[kl] == '=')
			return o + kl + 1;
	}
	return NULL;
}

/* The values this target wants for the keys both roles state alike
 * (ex_params_value): fixed, RFC 7143's defaults where it wants those. */
static const char *wanted_value(const char *key, char *tmp, size_t n)
{
	struct ex_params want;

	ex_params_default(&want);
	want.initial_r2t = false;
	want.max_burst = 1048576;
	want.first_burst = 262144;
	want.t2r = 0;
	want.max_outstanding_r2t = 16;
	want.protocol_level = 1;
	if (!strcmp(key, IDM_KEY_TASK_REPORTING))
		return "RFC3720";
	return ex_params_value(&want, key, tmp, n);
}

/* The receive segment length this target declares on c: what
 * --shared-recv's shared buffers take on iSER (discovery sessions over
 * iSER included), else TGT_MRDSL. */
static uint32_t our_recv_dsl(const struct tconn *c)
{
	return c->iser && g_tgt.shared_recv ? IDM_SHARED_RECV_DSL : TGT_MRDSL;
}

static const char *our_value(struct tconn *c, const char *key, char *tmp, size_t n)
{
	const char *forced = c->iser ? ex_key_iser_value(key) : NULL;
	const char *v;

	/* digests are None on iSER, discovery included, whatever --key
	 * says: an initiator offering only CRC32C is answered Reject */
	if (forced)
		return forced;
	if ((v = key_override(key)))
		return v;
	if (!strcmp(key, IDM_KEY_HEADER_DIGEST) || !strcmp(key, IDM_KEY_DATA_DIGEST))
		return (g_tgt.caps & IDM_CAP_DIGESTS) ? "CRC32C,None" : "None";
	if (!strcmp(key, IDM_KEY_AUTH_METHOD))
		return chap_wanted(c->login) ? "CHAP" : "None";
	if (!strcmp(key, IDM_KEY_RDMA_EXTENSIONS))
		return c->iser ? "Yes" : "No";
	if (!strcmp(key, IDM_KEY_TARGET_RECV_DATA_SEGMENT_LENGTH)) {
		snprintf(tmp, n, "%u", our_recv_dsl(c));
		return tmp;
	}
	if (!strcmp(key, IDM_KEY_INITIATOR_RECV_DATA_SEGMENT_LENGTH)) {
		snprintf(tmp, n, "%u", TGT_MRDSL);
		return tmp;
	}
	return wanted_value(key, tmp, n);
}

/* Record a negotiated value. MaxRecvDataSegmentLength, declarative, is
 * the initiator's limit: the only one to reach us. */
static void apply(struct ex_params *p, const char *key, const char *v)
{
	uint64_t n;

	if (!strcmp(key, IDM_KEY_MAX_RECV_DATA_SEGMENT_LENGTH)) {
		if (!ex_parse_num(v, &n))
			p->ini_dsl = (uint32_t)n;
		return;
	}
	ex_params_apply(p, key, v);
}

/* The algorithms we accept, in our order. */
static int chap_algs(int *out)
{
	if (g_tgt.nchap_algs) {
		memcpy(out, g_tgt.chap_algs, sizeof(int) * (size_t)g_tgt.nchap_algs);
		return g_tgt.nchap_algs;
	}
	return ex_chap_alg_list_parse(TGT_CHAP_ALGS_DEFAULT, out, EX_CHAP_MAX_ALGS);
}

/* CHAP_A: choose an algorithm and send our challenge. Returns 0 or a
 * login status. */
static int chap_offer(struct tconn *c, struct login_state *ls, const char *val,
		      struct ex_textbuf *out)
{
	char hex[2 * EX_CHAP_MAX_DIGEST + 3];
	int algs[EX_CHAP_MAX_ALGS], n = chap_algs(algs);
	size_t dl;

	if (ls->chap_state != 1)
		return LS_AUTH_FAILED;
	ls->chap_alg = n > 0 ? ex_chap_alg_choose(algs, n, val) : -1;
	if (ls->chap_alg < 0) {
		char ours[16] = "";

		ex_chap_alg_list_format(algs, n > 0 ? n : 0, ours, sizeof(ours));
		ex_warn("%s: no CHAP algorithm in common: the initiator offers "
			"CHAP_A=%.64s, the target accepts %s (--chap-algorithms)",
			idm_conn_peer_name(c->ic), val, ours);
		return LS_AUTH_FAILED;
	}
	/* a new challenge for every login, as long as the digest
	 * (as Linux's target does) */
	dl = ex_chap_digest_len(ls->chap_alg);
	if (ex_chap_random(ls->chap_chal, dl, &ls->chap_id) < 0)
		return LS_TARGET_ERROR;
	ex_hex_encode(ls->chap_chal, dl, hex, sizeof(hex));
	if (ex_text_add(out, "CHAP_A", "%d", ls->chap_alg) < 0 ||
	    ex_text_add(out, "CHAP_I", "%u", ls->chap_id) < 0 ||
	    ex_text_add(out, "CHAP_C", "%s", hex) < 0)
		return LS_OUT_OF_RESOURCES;
	ex_dbg("%s: CHAP with %s", idm_conn_peer_name(c->ic),
	       ex_chap_alg_name(ls->chap_alg));
	ls->chap_state = 2;
	return 0;
}

/* CHAP_C from the initiator: its challenge for mutual CHAP */
static int chap_ini_challenge(struct login_state *ls, const char *val)
{
	uint8_t *b;
	int n;

	if (ls->chap_ini_chal)
		return LS_AUTH_FAILED;
	b = malloc(EX_CHAP_CHAL_MAX);
	if (!b)
		return LS_OUT_OF_RESOURCES;
	n = ex_bin_decode(val, b, EX_CHAP_CHAL_MAX);
	if (n <= 0) {
		free(b);
		return LS_AUTH_FAILED;
	}
	ls->chap_ini_chal = b;
	ls->chap_ini_chal_len = n;
	return 0;
}

/* CHAP_N, CHAP_R, CHAP_I or CHAP_C, after our challenge. Returns 0 or a
 * login status. */
static int chap_answer_key(struct login_state *ls, const char *key, const char *val)
{
	if (ls->chap_state != 2)
		return LS_AUTH_FAILED;
	if (!strcmp(key, "CHAP_N")) {
		if (strlen(val) >= sizeof(ls->chap_name))
			return LS_AUTH_FAILED;
		snprintf(ls->chap_name, sizeof(ls->chap_name), "%s", val);
		return 0;
	}
	if (!strcmp(key, "CHAP_R")) {
		int dl = (int)ex_chap_digest_len(ls->chap_alg);

		ls->chap_have_resp = ex_bin_decode(val, ls->chap_resp, sizeof(ls->chap_resp)) == dl;
		return ls->chap_have_resp ? 0 : LS_AUTH_FAILED;
	}
	/* CHAP_I and CHAP_C from the initiator: mutual CHAP */
	if (!strcmp(key, "CHAP_I")) {
		uint64_t v;

		if (ls->chap_ini_id >= 0 || ex_parse_num(val, &v) < 0 || v > 255)
			return LS_AUTH_FAILED;
		ls->chap_ini_id = (int)v;
		return 0;
	}
	if (!strcmp(key, "CHAP_C"))
		return chap_ini_challenge(ls, val);
	return LS_AUTH_FAILED;
}

/* One CHAP key of the security stage. Returns 0 or a login status. */
static int chap_key(struct tconn *c, struct login_state *ls, const char *key, const char *val,
		    struct ex_textbuf *out)
{
	if (!chap_wanted(ls) || ls->csg > IDM_ISCSI_STAGE_SECURITY)
		return LS_AUTH_FAILED;
	if (!strcmp(key, "CHAP_A"))
		return chap_offer(c, ls, val, out);
	return chap_answer_key(ls, key, val);
}

/* Mutual CHAP: answer the initiator's challenge with the target's
 * credentials. Returns 0 or a login status. */
static int chap_answer_mutual(struct tconn *c, struct login_state *ls, struct ex_textbuf *out)
{
	const char *peer = idm_conn_peer_name(c->ic);
	uint8_t mine[EX_CHAP_MAX_DIGEST];
	char hex[2 * EX_CHAP_MAX_DIGEST + 3];
	int dl;

	/* RFC 7143 12.1.3: both keys together, and never our own
	 * challenge sent back (that would have us answer it for a
	 * man in the middle) */
	if (ls->chap_ini_id < 0 || !ls->chap_ini_chal) {
		ex_warn("%s: mutual CHAP needs both CHAP_I and CHAP_C", peer);
		return LS_AUTH_FAILED;
	}
	if ((size_t)ls->chap_ini_chal_len == ex_chap_digest_len(ls->chap_alg) &&
	    ex_chap_equal(ls->chap_ini_chal, ls->chap_chal, (size_t)ls->chap_ini_chal_len)) {
		ex_warn("%s: the initiator's CHAP challenge is the target's own: refused",
			peer);
		return LS_AUTH_FAILED;
	}
	if (!g_tgt.mutual_user) {
		ex_warn("%s: %s asks for mutual CHAP, but the target has no "
			"mutual-chap credentials", peer, ls->iname);
		return LS_AUTH_FAILED;
	}
	dl = ex_chap_response(ls->chap_alg, (uint8_t)ls->chap_ini_id, g_tgt.mutual_secret,
			      ls->chap_ini_chal, (size_t)ls->chap_ini_chal_len, mine);
	if (dl < 0)
		return LS_TARGET_ERROR;
	ex_hex_encode(mine, (size_t)dl, hex, sizeof(hex));
	if (ex_text_add(out, "CHAP_N", "%s", g_tgt.mutual_user) < 0 ||
	    ex_text_add(out, "CHAP_R", "%s", hex) < 0)
		return LS_OUT_OF_RESOURCES;
	return 0;
}

/* The initiator's CHAP_N and CHAP_R against the credentials for it.
 * Returns 0 or a login status. */
static int chap_check_response(struct tconn *c, struct login_state *ls)
{
	const char *peer = idm_conn_peer_name(c->ic);
	uint8_t want[EX_CHAP_MAX_DIGEST];
	const char *user = NULL, *secret = chap_secret_for(ls, &user);
	bool ok;
	int dl;

	if (!secret) {
		ex_warn("%s: no CHAP credentials for %s", peer, ls->iname);
		return LS_AUTH_FAILED;
	}
	dl = ex_chap_response(ls->chap_alg, ls->chap_id, secret, ls->chap_chal,
			      ex_chap_digest_len(ls->chap_alg), want);
	if (dl < 0)
		return LS_TARGET_ERROR;
	/* the response first, in constant time; the name after */
	ok = ex_chap_equal(want, ls->chap_resp, (size_t)dl);
	ok = (strcmp(ls->chap_name, user) == 0) && ok;
	if (!ok) {
		ex_warn("%s: CHAP (%s) of %s as user '%s': wrong name or response",
			peer, ex_chap_alg_name(ls->chap_alg), ls->iname, ls->chap_name);
		return LS_AUTH_FAILED;
	}
	return 0;
}

/* After a request with CHAP_N and CHAP_R: check them, and answer the
 * initiator's challenge if it sent one. Returns 0 or a login status. */
static int chap_verify(struct tconn *c, struct login_state *ls, struct ex_textbuf *out)
{
	bool mutual = ls->chap_ini_id >= 0 || ls->chap_ini_chal;
	int r;

	if (ls->chap_state == 3)
		return 0;
	if (ls->chap_state != 2 || !ls->chap_have_resp || !ls->chap_name[0])
		return mutual ? LS_AUTH_FAILED : 0; /* not yet complete */
	r = chap_check_response(c, ls);
	if (!r && mutual)
		r = chap_answer_mutual(c, ls, out);
	if (r)
		return r;
	ex_dbg("%s: CHAP (%s%s) passed for %s", idm_conn_peer_name(c->ic),
	       ex_chap_alg_name(ls->chap_alg), mutual ? ", mutual" : "", ls->iname);
	ls->chap_state = 3;
	return 0;
}

/* Answer `key` with a fixed value (Irrelevant, NotUnderstood). Returns 0
 * or a login status. */
static int answer_as(struct ex_textbuf *out, const char *key, const char *what)
{
	return ex_text_add(out, key, "%s", what) < 0 ? LS_OUT_OF_RESOURCES : 0;
}

/* Declarative keys naming the initiator and the session: the login code
 * reads them (first_request), no answer */
static bool names_the_session(const char *key)
{
	return !strcmp(key, IDM_KEY_INITIATOR_NAME) || !strcmp(key, IDM_KEY_INITIATOR_ALIAS) ||
	       !strcmp(key, IDM_KEY_TARGET_NAME) || !strcmp(key, IDM_KEY_SESSION_TYPE);
}

/* Keys only the target declares: an initiator sending them gets Irrelevant */
static bool target_declares(const char *key)
{
	return !strcmp(key, IDM_KEY_SEND_TARGETS) || !strcmp(key, IDM_KEY_TARGET_ADDRESS) ||
	       !strcmp(key, IDM_KEY_TARGET_ALIAS) || !strcmp(key, IDM_KEY_TARGET_PORTAL_GROUP_TAG);
}

/* The initiator's MaxRecvDataSegmentLength: what we may send it */
static int note_ini_mrdsl(struct tconn *c, struct login_state *ls, const char *val)
{
	uint64_t v;

	if (ex_parse_num(val, &v) < 0 || v < 512 || v > 0xffffff)
		return LS_INITIATOR_ERROR;
	if (!c->iser) /* ignored on iSER (RFC 7145 6.2) */
		ls->p.ini_dsl = (uint32_t)v;
	return 0;
}

/* iSER declaratives: no answer. The two booleans go to the provider
 * through Notice_Key_Values (build_kv); MaxOutstandingUnexpectedPDUs and
 * MaxAHSLength describe the initiator's receive side, not ours. */
static int note_declaration(struct login_state *ls, const struct ex_key *k, const char *key,
			    const char *val)
{
	bool b;

	if (k->type == EX_KT_BOOL_DECL && ex_parse_bool(val, &b) < 0)
		return LS_INITIATOR_ERROR;
	if (!strcmp(key, IDM_KEY_TAGGED_BUFFER_FOR_SOLICITED_DATA_ONLY))
		ls->p.tagged_solicited = b;
	else if (!strcmp(key, IDM_KEY_ISER_HELLO_REQUIRED))
		ls->p.iser_hello = b;
	return 0;
}

/* A key we negotiate: answer with the result of our value and theirs,
 * and apply it. Returns 0 or a login status. */
static int answer_negotiated(struct tconn *c, struct login_state *ls, const struct ex_key *k,
			     const char *key, const char *val, struct ex_textbuf *out)
{
	char tmp[32], res[256];
	const char *mine = our_value(c, key, tmp, sizeof(tmp));
	int r;

	if (!mine)
		return answer_as(out, key, "NotUnderstood");
	r = ex_key_respond(k, val, mine, res, sizeof(res));
	if (!strcmp(key, IDM_KEY_AUTH_METHOD) && r < 0)
		return LS_AUTH_FAILED;
	if (ex_text_add(out, key, "%s", res) < 0)
		return LS_OUT_OF_RESOURCES;
	if (r == 0)
		apply(&ls->p, key, res);
	if (!strcmp(key, IDM_KEY_AUTH_METHOD) && !strcmp(res, "CHAP"))
		ls->chap_state = 1;
	return 0;
}

/* Answer one key=value. Returns 0 or a login status. The order of the
 * checks matters: TargetPortalGroupTag is declarative (no answer) before
 * it is one the target declares (Irrelevant). */
static int negotiate_key(struct tconn *c, struct login_state *ls, const char *key,
			 const char *val, struct ex_textbuf *out)
{
	const struct ex_key *k;

	if (!strncmp(key, "CHAP_", 5))
		return chap_key(c, ls, key, val, out);
	k = ex_key_find(key);
	if (!k) /* X- and X# keys and unknown keys (RFC 7143 6.2) */
		return answer_as(out, key, "NotUnderstood");
	if (strlen(val) > 255 && k->type != EX_KT_LIST)
		return LS_INITIATOR_ERROR;
	if (names_the_session(key))
		return 0;
	if (!strcmp(key, IDM_KEY_MAX_RECV_DATA_SEGMENT_LENGTH))
		return note_ini_mrdsl(c, ls, val);
	if (((k->flags & EX_KF_NO_DISC) && ls->discovery) ||
	    ((k->flags & EX_KF_ISER) && !ls->p.rdma))
		return answer_as(out, key, "Irrelevant");
	if (k->type == EX_KT_NUM_DECL || k->type == EX_KT_BOOL_DECL)
		return note_declaration(ls, k, key, val);
	if (target_declares(key))
		return answer_as(out, key, "Irrelevant");
	return answer_negotiated(c, ls, k, key, val, out);
}

/*
 * Answer the keys of one complete request. Returns 0 or a login status
 * (class << 8 | detail) to fail the login with.
 */
static int negotiate(struct tconn *c, struct login_state *ls, struct ex_kv *kv, int n,
		     struct ex_textbuf *out)
{
	for (int i = 0; i < n; i++) {
		int r = negotiate_key(c, ls, kv[i].key, kv[i].val, out);

		if (r)
			return r;
	}
	return 0;
}

static void send_login_rsp(struct tconn *c, const uint8_t *req, uint8_t flags,
			   int status, const void *data, size_t len)
{
	struct login_state *ls = c->login;
	uint8_t r[IDM_ISCSI_BHS_LEN] = { 0 };

	r[0] = IDM_ISCSI_OP_LOGIN_RSP;
	r[1] = flags;
	r[2] = 0; /* VersionMax */
	r[3] = 0; /* VersionActive */
	memcpy(r + IDM_ISCSI_LOGIN_ISID, ls->isid, 6);
	idm_iscsi_put16(r + IDM_ISCSI_LOGIN_TSIH, ls->tsih);
	idm_iscsi_put32(r + IDM_ISCSI_BHS_ITT, idm_iscsi_bhs_itt(req));
	conn_fill_sn(c, r, true);
	idm_iscsi_put16(r + IDM_ISCSI_LOGIN_STATUS_CLASS, (uint16_t)status);
	conn_send(c, r, data, len);
}

static void login_fail(struct tconn *c, const uint8_t *req, int status, const char *why)
{
	ex_warn("%s: login failed (0x%04x): %s", idm_conn_peer_name(c->ic), status, why);
	if (status == LS_AUTH_FAILED)
		authlimit_failed(c->addr);
	send_login_rsp(c, req, 0, status, NULL, 0);
	conn_close_graceful(c, "login failed");
}

/* Keys of the first request: who is logging in, to what, and the
 * session it belongs to. Returns 0 or a login status. */
/* A login with a TSIH joins that session: it must be the initiator's,
 * with no other connection (MaxConnections=1). It takes the session's
 * values. Returns 0 or a login status. */
static int check_joined(struct login_state *ls)
{
	/* the session may be another loop's: read under the lock */
	struct session *s;
	int rc = 0;

	session_lock();
	s = session_find_tsih(ls->tsih);
	if (!s || strcmp(s->iname, ls->iname) || memcmp(s->isid, ls->isid, 6)) {
		rc = LS_SESSION_NOT_EXIST;
	} else if (s->conn && s->conn->cid != ls->cid) {
		rc = LS_TOO_MANY_CONNS;
	} else {
		ls->p = s->p; /* session-wide values stay */
		ls->discovery = s->discovery;
	}
	session_unlock();
	return rc;
}

static int first_request(struct tconn *c, struct login_state *ls, const uint8_t *bhs,
			 struct ex_kv *kv, int n)
{
	const char *in = ex_text_get(kv, (size_t)n, IDM_KEY_INITIATOR_NAME);
	const char *st = ex_text_get(kv, (size_t)n, IDM_KEY_SESSION_TYPE);
	const char *tn = ex_text_get(kv, (size_t)n, IDM_KEY_TARGET_NAME);

	if (bhs[IDM_ISCSI_LOGIN_VERSION_MIN] > 0)
		return LS_UNSUPPORTED_VERSION;
	if (!in || !*in)
		return LS_MISSING_PARAM;
	snprintf(ls->iname, sizeof(ls->iname), "%s", in);
	if (st && !strcmp(st, "Discovery"))
		ls->discovery = true;
	else if (st && strcmp(st, "Normal"))
		return LS_INITIATOR_ERROR;
	if (!ls->discovery) {
		if (!tn || !*tn)
			return LS_MISSING_PARAM;
		if (strcmp(tn, g_tgt.name))
			return LS_NOT_FOUND;
		snprintf(ls->tname, sizeof(ls->tname), "%s", tn);
	}
	return ls->tsih ? check_joined(ls) : 0;
}

/* A normal session from an initiator that access.c turns away fails with
 * 0x0202 and the line saying how to open the target. A discovery session
 * goes on: its SendTargets leaves out what the initiator may not log in
 * to (text.c), as tgt and LIO answer. True when the login failed. */
static bool access_denied(struct tconn *c, const struct login_state *ls, const uint8_t *bhs)
{
	struct access_request rq;
	char why[512];

	if (ls->discovery)
		return false;
	access_request_init(&rq, c->ic, ls->iname, ls->tname);
	if (access_check(&rq, why, sizeof(why)) == 0)
		return false;
	login_fail(c, bhs, LS_AUTHZ_FAILED, why);
	return true;
}

static void login_resume(struct tconn *c, const uint8_t *req, uint8_t flags,
			 const char *data, size_t len);

/* The session is another loop's: the login ends there (loop.c), in
 * login_resume(). */
static void handoff(struct tconn *c, struct loop *owner, const uint8_t *req, uint8_t flags,
		    const char *data, size_t len)
{
	if (loop_handoff(c, owner, login_resume, req, flags, data, len) < 0)
		login_fail(c, req, LS_OUT_OF_RESOURCES, "cannot move the connection");
}

/* The session a login with a TSIH joins, NULL when the login failed or
 * moved to the loop that owns the session. A connection with the CID of
 * the session's one reinstates it: the old one ends. */
static struct session *join_session(struct tconn *c, const uint8_t *req, uint8_t flags,
				    const char *data, size_t len)
{
	struct login_state *ls = c->login;
	struct session *s;
	struct loop *owner;

	session_lock();
	s = session_find_tsih(ls->tsih);
	owner = s ? s->loop : NULL;
	session_unlock();
	if (!s) {
		login_fail(c, req, LS_SESSION_NOT_EXIST, "session vanished");
		return NULL;
	}
	if (owner != g_loop) {
		handoff(c, owner, req, flags, data, len);
		return NULL;
	}
	if (s->conn) { /* connection reinstatement (same CID) */
		struct tconn *old = s->conn;
		/* ERL 0: the old connection's tasks end with it */
		session_drop_conn(s, old);
		old->sess = NULL;
		session_lock();
		s->conn = NULL;
		session_unlock();
		conn_close(old, "connection reinstated");
	}
	return s;
}

/* A new session from the login's names and ISID, not registered yet */
static struct session *session_alloc(struct tconn *c, struct login_state *ls)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	memcpy(s->isid, ls->isid, 6);
	s->discovery = ls->discovery;
	snprintf(s->iname, sizeof(s->iname), "%s", ls->iname);
	snprintf(s->iport, sizeof(s->iport), "%s,i,0x%02x%02x%02x%02x%02x%02x", ls->iname,
		 ls->isid[0], ls->isid[1], ls->isid[2], ls->isid[3], ls->isid[4], ls->isid[5]);
	s->exp_cmdsn = c->login_cmdsn;
	return s;
}

/* The session a new one reinstates ends: with its connection if it has one */
static void end_reinstated(struct session *old)
{
	if (old->conn)
		conn_close(old->conn, "session reinstated");
	else
		session_destroy(old);
}

/* The session a leading login (TSIH 0) starts, NULL when the login
 * failed or moved to the loop owning the session it reinstates (or, new
 * over iSER, to the loop that will serve it). An old session with the
 * same initiator name and ISID ends (RFC 7143 6.3.5). */
static struct session *start_session(struct tconn *c, const uint8_t *req, uint8_t flags,
				     const char *data, size_t len)
{
	struct login_state *ls = c->login;
	struct session *s = session_alloc(c, ls), *old;
	struct loop *owner;
	uint16_t tsih;

	if (!s) {
		login_fail(c, req, LS_OUT_OF_RESOURCES, "no memory");
		return NULL;
	}
	if (ls->p.first_burst > ls->p.max_burst)
		ls->p.first_burst = ls->p.max_burst;
	/* finding the old session, marking it and registering the new
	 * one are one step: two logins with one ISID on two loops
	 * cannot both start a session */
	session_lock();
	old = session_find(ls->iname, ls->isid);
	owner = old ? old->loop : ls->discovery ? g_loop : loop_for_new_session(c);
	if (owner != g_loop) {
		session_unlock();
		free(s);
		if (!old)
			ex_dbg("%s: new iSER session placed on loop %d",
			       idm_conn_peer_name(c->ic), owner->index);
		handoff(c, owner, req, flags, data, len);
		return NULL;
	}
	if (old) /* session reinstatement */
		old->zombie = true;
	tsih = session_register(s);
	session_unlock();
	if (old)
		end_reinstated(old);
	if (!tsih) {
		free(s);
		login_fail(c, req, LS_OUT_OF_RESOURCES, "no free TSIH");
		return NULL;
	}
	ls->tsih = s->tsih;
	return s;
}

/* Give the session the negotiated values and pass them to the provider.
 * False: the login failed. */
static bool settle_values(struct tconn *c, struct session *s, const uint8_t *req)
{
	char kv[2048]; /* Notice_Key_Values */
	struct ex_textbuf tb;
	int rc;

	session_lock();
	s->p = c->login->p;
	ex_textbuf_init(&tb, kv, sizeof(kv));
	rc = ex_params_notice(&s->p, s->p.ini_dsl, &tb);
	session_unlock();
	if (rc != 0) {
		ex_err("key buffer too small");
		login_fail(c, req, LS_TARGET_ERROR, "key buffer");
		return false;
	}
	/* the provider sizes its receive buffers for the commands we admit
	 * at once (iSER: each may bring unsolicited data unasked). A
	 * discovery session carries no data, one Text exchange at a time:
	 * the provider's minimum is plenty, not 128 buffers of its 256 KiB
	 * MaxRecvDataSegmentLength. */
	rc = idm_conn_set_cmd_window(c->ic, s->discovery ? 1 : TGT_CMD_WINDOW);
	if (rc < 0)
		ex_warn("%s: cannot pass the command window: %s",
			idm_conn_peer_name(c->ic), idm_strerror(rc));
	rc = idm_notice_key_values(c->ic, kv, tb.len);
	if (rc < 0) {
		ex_warn("%s: Notice_Key_Values: %s", idm_conn_peer_name(c->ic), idm_strerror(rc));
		login_fail(c, req, LS_TARGET_ERROR, "bad negotiated values");
		return false;
	}
	return true;
}

/* The connection becomes the session's, with the LUNs its initiator ACL
 * rules grant (session.c) */
static void attach_conn(struct tconn *c, struct session *s)
{
	session_lock();
	s->conn = c;
	c->cid = c->login->cid;
	session_unlock();
	c->sess = s;
	session_acl_login(s, c);
}

static void log_ffp(const struct tconn *c, const struct session *s)
{
	ex_info("%s: %s session tsih %u for %s (ImmediateData=%s InitialR2T=%s "
		"MaxBurst=%u FirstBurst=%u MRDSL=%u/%u digests=%s/%s%s%s%s)",
		idm_conn_peer_name(c->ic), s->discovery ? "discovery" : "normal", s->tsih,
		s->iname, s->p.immediate_data ? "Yes" : "No", s->p.initial_r2t ? "Yes" : "No",
		s->p.max_burst, s->p.first_burst, s->p.ini_dsl, s->p.tgt_dsl,
		s->p.header_digest ? "CRC32C" : "None", s->p.data_digest ? "CRC32C" : "None",
		s->p.rdma ? " iSER" : "", s->p.tagged_solicited ? " TaggedBufferForSolicitedDataOnly" : "",
		s->p.iser_hello ? " iSERHelloRequired" : "");
}

/* Send the final Login Response through Enable_Datamover: the
 * connection is in full feature phase. */
static void enable_ffp(struct tconn *c, struct session *s, const uint8_t *req, uint8_t flags,
		       const char *data, size_t len)
{
	uint8_t r[IDM_ISCSI_BHS_LEN] = { 0 };
	int rc;

	r[0] = IDM_ISCSI_OP_LOGIN_RSP;
	r[1] = flags;
	memcpy(r + IDM_ISCSI_LOGIN_ISID, c->login->isid, 6);
	idm_iscsi_put16(r + IDM_ISCSI_LOGIN_TSIH, s->tsih);
	idm_iscsi_put32(r + IDM_ISCSI_BHS_ITT, idm_iscsi_bhs_itt(req));
	conn_fill_sn(c, r, true);
	idm_iscsi_bhs_set_data_len(r, (uint32_t)len);
	rc = idm_enable_datamover(c->ic, r, data, len);
	if (rc < 0) {
		ex_warn("%s: Enable_Datamover: %s", idm_conn_peer_name(c->ic), idm_strerror(rc));
		conn_close(c, "Enable_Datamover failed");
		return;
	}
	c->state = CS_FFP;
	budget_login_done(c);
	log_ffp(c, s);
	login_free(c);
}

/* Create (or join, or reinstate) the session and enter full feature phase.
 * A connection joining a session (its TSIH) or reinstating one (its
 * ISID) finishes on the loop that owns it, so that a session and its
 * connections stay on one loop; a new session stays here, on the loop
 * the kernel gave its leading connection, except a normal session over
 * iSER, whose connections all arrive on loop 0: it goes to the next loop
 * in turn (loop_for_new_session()). */
static void go_ffp(struct tconn *c, const uint8_t *req, uint8_t flags, const char *data, size_t len)
{
	struct session *s = c->login->tsih ? join_session(c, req, flags, data, len)
					   : start_session(c, req, flags, data, len);

	if (!s || !settle_values(c, s, req))
		return;
	attach_conn(c, s);
	enable_ffp(c, s, req, flags, data, len);
}

/* On the session's loop: go on with the login where loop_handoff() left it */
static void login_resume(struct tconn *c, const uint8_t *req, uint8_t flags,
			 const char *data, size_t len)
{
	go_ffp(c, req, flags, data, len);
}

/* A complete login request (its text in kv[n]): negotiate and answer. */
/* The first request of a login: its address not blocked, its keys
 * naming a session we have, access granted. False: the login ended. */
static bool admit_first_request(struct tconn *c, struct login_state *ls, const uint8_t *bhs,
				struct ex_kv *kv, int n)
{
	int st;

	if (authlimit_blocked(c->addr)) {
		/* not counted again, and said once (authlimit.c) */
		send_login_rsp(c, bhs, 0, LS_AUTH_FAILED, NULL, 0);
		conn_close_graceful(c, "too many failed logins from this address");
		return false;
	}
	st = first_request(c, ls, bhs, kv, n);
	if (st) {
		login_fail(c, bhs, st, "first login request refused");
		return false;
	}
	return !access_denied(c, ls, bhs);
}

/* RDMAExtensions decides whether the iSER keys are relevant, wherever it
 * sits in the request (RFC 7145 6.3) */
static void note_rdma(const struct tconn *c, struct login_state *ls, struct ex_kv *kv, int n)
{
	const char *v;

	if (!c->iser || ls->discovery)
		return;
	v = ex_text_get(kv, (size_t)n, IDM_KEY_RDMA_EXTENSIONS);
	if (v)
		ls->p.rdma = !strcmp(v, "Yes");
}

/* The keys the target declares unasked, once per login */
static void declare_owed(const struct tconn *c, struct login_state *ls, int csg,
			 struct ex_textbuf *out)
{
	if (!ls->discovery && !ls->tpgt_declared) {
		ex_text_add(out, IDM_KEY_TARGET_PORTAL_GROUP_TAG, "1");
		if (g_tgt.alias)
			ex_text_add(out, IDM_KEY_TARGET_ALIAS, "%s", g_tgt.alias);
		ls->tpgt_declared = true;
	}
	/* iSER replaces MaxRecvDataSegmentLength by the two negotiated
	 * *RecvDataSegmentLength keys (RFC 7145 6.2) */
	if (csg == IDM_ISCSI_STAGE_OPERATIONAL && !ls->mrdsl_declared && !ls->p.rdma) {
		ex_text_add(out, IDM_KEY_MAX_RECV_DATA_SEGMENT_LENGTH, "%u", our_recv_dsl(c));
		ls->p.tgt_dsl = our_recv_dsl(c);
		ls->mrdsl_declared = true;
	}
}

/* With CHAP nobody leaves the security stage unauthenticated; while the
 * exchange runs the target just does not transit (T=0). Returns 0 or a
 * login status; clears *transit to hold the login in its stage. */
static int chap_gate(const struct login_state *ls, int csg, bool *transit)
{
	if (!chap_wanted(ls) || ls->chap_state == 3 ||
	    (csg == IDM_ISCSI_STAGE_SECURITY && !*transit))
		return 0;
	if (csg != IDM_ISCSI_STAGE_SECURITY || ls->chap_state == 0)
		return LS_AUTH_FAILED;
	*transit = false;
	return 0;
}

/* Answer one complete Login Request: negotiate its keys and either stay,
 * move to the next stage or, for full feature phase, start the session. */
static void login_request(struct tconn *c, struct login_state *ls, const uint8_t *bhs,
			  struct ex_kv *kv, int n)
{
	char outbuf[8192];
	struct ex_textbuf out;
	bool transit = bhs[1] & IDM_ISCSI_LOGIN_TRANSIT;
	int csg = (bhs[1] & IDM_ISCSI_LOGIN_CSG_MASK) >> IDM_ISCSI_LOGIN_CSG_SHIFT;
	int nsg = bhs[1] & IDM_ISCSI_LOGIN_NSG_MASK;
	uint8_t flags;
	int st;

	if (ls->csg < 0 && !admit_first_request(c, ls, bhs, kv, n))
		return;
	ex_textbuf_init(&out, outbuf, sizeof(outbuf));
	note_rdma(c, ls, kv, n);
	st = negotiate(c, ls, kv, n, &out);
	if (!st)
		st = chap_verify(c, ls, &out);
	if (st)
		return login_fail(c, bhs, st, st == LS_AUTH_FAILED ? "authentication failed" :
				  "key negotiation failed");
	if (chap_gate(ls, csg, &transit))
		return login_fail(c, bhs, LS_AUTH_FAILED, "CHAP required");
	ls->csg = csg;
	declare_owed(c, ls, csg, &out);

	flags = (uint8_t)(csg << IDM_ISCSI_LOGIN_CSG_SHIFT);
	if (transit) {
		flags |= (uint8_t)(IDM_ISCSI_LOGIN_TRANSIT | nsg);
		if (nsg == IDM_ISCSI_STAGE_FULL_FEATURE) {
			go_ffp(c, bhs, flags, outbuf, out.len);
			return;
		}
	}
	send_login_rsp(c, bhs, flags, 0, outbuf, out.len);
}

/* Anything but a Login Request before full feature phase ends the
 * connection (a command's task given back first) */
static void refuse_non_login(struct tconn *c, idm_pdu *pdu)
{
	idm_task *it = idm_pdu_task(pdu);

	if (it)
		idm_deallocate_task_resources(it);
	ex_warn("%s: opcode 0x%02x during login", idm_conn_peer_name(c->ic),
		idm_iscsi_bhs_opcode(idm_pdu_bhs(pdu)));
	conn_close(c, "protocol error during login");
}

/* The connection's login state, made at its first request. NULL: out of
 * memory, the connection closed. */
static struct login_state *login_state_get(struct tconn *c)
{
	struct login_state *ls = c->login;

	if (ls)
		return ls;
	ls = c->login = calloc(1, sizeof(*ls));
	if (!ls) {
		conn_close(c, "no memory");
		return NULL;
	}
	ex_params_default(&ls->p);
	ls->csg = -1;
	ls->chap_ini_id = -1;
	return ls;
}

/* The ISID and TSIH the first request gives stay for the whole login.
 * False: the login failed. */
static bool same_login(struct tconn *c, struct login_state *ls, const uint8_t *bhs)
{
	if (!ls->started) {
		ls->started = true;
		memcpy(ls->isid, bhs + IDM_ISCSI_LOGIN_ISID, 6);
		ls->tsih = idm_iscsi_get16(bhs + IDM_ISCSI_LOGIN_TSIH);
		ls->cid = idm_iscsi_get16(bhs + IDM_ISCSI_LOGIN_CID);
		c->statsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_EXP_STATSN); /* continue from ExpStatSN */
	} else if (memcmp(ls->isid, bhs + IDM_ISCSI_LOGIN_ISID, 6) || ls->tsih != idm_iscsi_get16(bhs + IDM_ISCSI_LOGIN_TSIH)) {
		login_fail(c, bhs, LS_INITIATOR_ERROR, "ISID/TSIH changed during login");
		return false;
	}
	return true;
}

/* Stage checks (RFC 7143 6.3): T with C is illegal, NSG must move on, the
 * stage never goes back. False: the login failed. */
static bool stages_ok(struct tconn *c, const struct login_state *ls, const uint8_t *bhs)
{
	bool transit = bhs[1] & IDM_ISCSI_LOGIN_TRANSIT;
	bool cont = bhs[1] & IDM_ISCSI_LOGIN_CONTINUE;
	int csg = (bhs[1] & IDM_ISCSI_LOGIN_CSG_MASK) >> IDM_ISCSI_LOGIN_CSG_SHIFT;
	int nsg = bhs[1] & IDM_ISCSI_LOGIN_NSG_MASK;

	if ((transit && cont) || csg == 2 || csg == 3 || (transit && (nsg == 2 || nsg <= csg))) {
		login_fail(c, bhs, LS_INVALID_REQUEST, "bad stage transition");
		return false;
	}
	if (ls->csg > csg) {
		login_fail(c, bhs, LS_INVALID_REQUEST, "stage went back");
		return false;
	}
	return true;
}

/* Add the PDU's text to the request's so far. False: the login failed. */
static bool append_text(struct tconn *c, struct login_state *ls, const uint8_t *bhs,
			idm_pdu *pdu)
{
	size_t dlen;
	const uint8_t *data = idm_pdu_data(pdu, &dlen);
	char *text;

	if (dlen > TGT_TEXT_MAX - ls->in_len) {
		login_fail(c, bhs, LS_OUT_OF_RESOURCES, "login text too long");
		return false;
	}
	/* + 1: ex_text_parse() may end a final key cut by a Continue there */
	text = realloc(ls->in, ls->in_len + dlen + 1);
	if (!text) {
		login_fail(c, bhs, LS_OUT_OF_RESOURCES, "no memory for the login text");
		return false;
	}
	ls->in = text;
	if (dlen) {
		memcpy(ls->in + ls->in_len, data, dlen);
		ls->in_len += (uint32_t)dlen;
	}
	return true;
}

void login_pdu(struct tconn *c, idm_pdu *pdu)
{
	const uint8_t *bhs = idm_pdu_bhs(pdu);
	struct login_state *ls;
	struct ex_kv kv[MAX_KEYS];
	char *text;
	int n;

	if (idm_iscsi_bhs_opcode(bhs) != IDM_ISCSI_OP_LOGIN_REQ)
		return refuse_non_login(c, pdu);
	ls = login_state_get(c);
	if (!ls || !same_login(c, ls, bhs))
		return;
	c->login_cmdsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_CMDSN);
	if (!stages_ok(c, ls, bhs) || !append_text(c, ls, bhs, pdu))
		return;
	if (bhs[1] & IDM_ISCSI_LOGIN_CONTINUE) {
		/* more text follows: acknowledge with an empty response */
		send_login_rsp(c, bhs, (uint8_t)(bhs[1] & IDM_ISCSI_LOGIN_CSG_MASK), 0, NULL, 0);
		return;
	}
	/* the request is complete: its text is ours until we answered */
	text = ls->in;
	n = ex_text_parse(text, ls->in_len, kv, MAX_KEYS);
	ls->in = NULL;
	ls->in_len = 0;
	if (n < 0)
		login_fail(c, bhs, LS_INITIATOR_ERROR, "malformed login text");
	else
		login_request(c, ls, bhs, kv, n);
	free(text);
}
