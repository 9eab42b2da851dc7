/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm_conn_move() on iSER, in the soft-RoCE guest (suite 'rdma'): one
 * context listens, another serves, as a target running one context per
 * core places its connections.
 *
 * The pair's context (p.ctx) has the buffers and the initiator; the
 * portal is on a context of its own (lctx). A target connection accepted
 * there is moved to p.ctx before its login, then only p.ctx is driven:
 * the login and the I/O work only if every event source of the
 * connection (the CM event channel, whose ESTABLISHED may still be on
 * its way, the completion channels, the keepalive timer) went along.
 * Data is verified byte for byte with guards, before and after the
 * listening context is destroyed (the contexts share one domain, whose
 * protection domain outlives any of them). A live connection moves with
 * data in flight to a third context of the domain and back; one moved
 * to a context of another domain, or on its context's shared receive
 * queue, is refused and keeps working where it is.
 */
#include <check.h>
#include "check_suite.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "iser_pair.h"
#include "rdma_env.h"

#define KIB 1024u
#define MIB (1024u * 1024u)

static const char *ip;

/* The listening context, its portal the pair's (p->portal). */
static idm_ctx *listen_ctx(struct pair *p, uint32_t flags)
{
	struct idm_ctx_attr ca = {.size = sizeof(ca), .flags = flags,
				  .domain = idm_ctx_get_domain(p->ctx)};
	idm_ctx *own = p->ctx, *lctx = NULL;
	int r;

	r = idm_ctx_create(&ca, &lctx);
	ck_assert_msg(r == 0, "idm_ctx_create: %s", idm_strerror(r));
	p->ctx = lctx;
	r = p_listen(p, "iser");
	p->ctx = own;
	ck_assert_msg(r == 0, "listen: %s", p->err);
	return lctx;
}

static bool accepted(struct pair *p)
{
	return p->tc != NULL;
}

static bool both_ffp(struct pair *p)
{
	return p->i_ffp && p->t_ffp;
}

/* Drive both contexts from this thread until cond. */
static int progress_both(struct pair *p, idm_ctx *other,
			 bool (*cond)(struct pair *p), int ms)
{
	double end = p_now() + ms / 1000.0;

	while (!cond(p) && !p->err[0]) {
		if (p_now() > end) {
			snprintf(p->err, sizeof(p->err), "timed out after %d ms", ms);
			return -1;
		}
		idm_ctx_progress(p->ctx, 1);
		idm_ctx_progress(other, 1);
	}
	return p->err[0] ? -1 : 0;
}

static void verify_sizes(struct pair *p, uint32_t seed)
{
	static const uint32_t sizes[] = {1, 511, 8192, 8193, 65537, 262144,
					 MIB + 1, 4 * MIB};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		ck_assert_msg(p_write_read_verify(p, sizes[i], seed + (uint32_t)i) == 0,
			      "size %u: %s", sizes[i], p->err);
}

/* Connect, and wait on both contexts for the target's accept. */
static void connect_accepted(struct pair *p, idm_ctx *lctx)
{
	struct p_keys k;

	p_keys_default(&k);
	ck_assert_msg(p_connect(p, &k) == 0, "connect: %s", p->err);
	ck_assert_msg(progress_both(p, lctx, accepted, 10000) == 0,
		      "accept: %s", p->err);
}

START_TEST(moved_before_login)
{
	struct pair p;
	idm_ctx *lctx;
	int r;

	ck_assert_msg(p_init_ctx(&p, ip, 4 * MIB, NULL) == 0, "init: %s", p.err);
	lctx = listen_ctx(&p, 0);
	connect_accepted(&p, lctx);
	r = idm_conn_move(p.tc, p.ctx);
	ck_assert_msg(r == 0, "idm_conn_move: %s (%s)", idm_strerror(r),
		      idm_last_error());
	/* only p.ctx from now on: nothing of the connection is left on lctx */
	ck_assert_msg(p_progress_until(&p, both_ffp, 10000) == 0, "login: %s", p.err);
	verify_sizes(&p, 11);
	/* the listening context goes; the connection keeps its PD */
	idm_portal_destroy(p.portal);
	p.portal = NULL;
	idm_ctx_destroy(lctx);
	verify_sizes(&p, 23);
	ck_assert_int_eq(p.i_terminated + p.t_terminated, 0);
	ck_assert_int_eq(p.cb_after_end, 0);
	p_fini(&p);
}
END_TEST

/* In full feature phase, after data moved: to another context of the
 * domain and back, serving verified I/O there; to a context of another
 * domain -EXDEV, nothing moved. */
START_TEST(moved_live_within_domain_only)
{
	struct idm_ctx_attr ca = {.size = sizeof(ca)};
	struct pair p;
	idm_ctx *lctx, *peer, *third;
	int r;

	ck_assert_msg(p_init_ctx(&p, ip, 4 * MIB, NULL) == 0, "init: %s", p.err);
	lctx = listen_ctx(&p, 0);
	connect_accepted(&p, lctx);
	ck_assert_int_eq(idm_conn_move(p.tc, p.ctx), 0);
	ck_assert_msg(p_progress_until(&p, both_ffp, 10000) == 0, "login: %s", p.err);
	ck_assert_msg(p_write_read_verify(&p, 64 * KIB, 3) == 0, "%s", p.err);
	ca.domain = idm_ctx_get_domain(p.ctx);
	ck_assert_int_eq(idm_ctx_create(&ca, &peer), 0);
	r = idm_conn_move(p.tc, peer);
	ck_assert_msg(r == 0, "idm_conn_move in FFP: %s (%s)", idm_strerror(r),
		      idm_last_error());
	p.also = peer; /* the target's side runs there now */
	verify_sizes(&p, 7);
	ck_assert_int_eq(idm_conn_move(p.tc, p.ctx), 0);
	p.also = NULL;
	idm_ctx_destroy(peer);
	r = idm_ctx_create(NULL, &third);
	ck_assert_msg(r == 0, "idm_ctx_create: %s", idm_strerror(r));
	r = idm_conn_move(p.tc, third);
	ck_assert_msg(r == -EXDEV, "idm_conn_move to another domain: %s",
		      idm_strerror(r));
	ck_assert_msg(strstr(idm_last_error(), "iser"), "idm_last_error: %s",
		      idm_last_error());
	/* still served by p.ctx, neither lctx nor third driven */
	verify_sizes(&p, 5);
	ck_assert_int_eq(p.i_terminated + p.t_terminated, 0);
	p_fini(&p);
	idm_ctx_destroy(third);
	idm_ctx_destroy(lctx);
}
END_TEST

/* A connection on its context's shared receive queue stays there. */
START_TEST(refused_on_shared_recv)
{
	struct pair p;
	idm_ctx *lctx;
	int r;

	ck_assert_msg(p_init_ctx(&p, ip, MIB, NULL) == 0, "init: %s", p.err);
	lctx = listen_ctx(&p, IDM_CTX_SHARED_RECV);
	connect_accepted(&p, lctx);
	r = idm_conn_move(p.tc, p.ctx);
	ck_assert_msg(r == -EOPNOTSUPP, "idm_conn_move on an SRQ: %s",
		      idm_strerror(r));
	ck_assert_msg(progress_both(&p, lctx, both_ffp, 10000) == 0,
		      "login where it was: %s", p.err);
	ck_assert_int_eq(p.i_terminated + p.t_terminated, 0);
	p_fini(&p);
	idm_ctx_destroy(lctx);
}
END_TEST

/* The initiator's side moves too, once connected (login phase). */
static bool connected(struct pair *p)
{
	return p->connected;
}

START_TEST(initiator_moved_before_login)
{
	struct pair p;
	struct p_keys k;
	idm_ctx *ictx, *data_ctx;
	int r;

	ck_assert_msg(p_init(&p, ip, 4 * MIB) == 0, "init: %s", p.err);
	data_ctx = p.ctx;
	{
		struct idm_ctx_attr ca = {.size = sizeof(ca),
					  .domain = idm_ctx_get_domain(data_ctx)};

		r = idm_ctx_create(&ca, &ictx);
	}
	ck_assert_msg(r == 0, "idm_ctx_create: %s", idm_strerror(r));
	/* the initiator connects from ictx; the target is on data_ctx */
	p.ctx = ictx;
	p_keys_default(&k);
	r = p_connect(&p, &k);
	p.ctx = data_ctx;
	ck_assert_msg(r == 0, "connect: %s", p.err);
	ck_assert_msg(progress_both(&p, ictx, connected, 10000) == 0,
		      "connect: %s", p.err);
	ck_assert_msg(p.connect_status == 0, "connect: %s",
		      idm_strerror(p.connect_status));
	r = idm_conn_move(p.ic, data_ctx);
	ck_assert_msg(r == 0, "idm_conn_move: %s (%s)", idm_strerror(r),
		      idm_last_error());
	ck_assert_msg(p_progress_until(&p, both_ffp, 10000) == 0, "login: %s", p.err);
	idm_ctx_destroy(ictx);
	verify_sizes(&p, 41);
	ck_assert_int_eq(p.i_terminated + p.t_terminated, 0);
	p_fini(&p);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { moved_before_login,
				       moved_live_within_domain_only,
				       refused_on_shared_recv,
				       initiator_moved_before_login, NULL };

	ip = rdma_test_ip();
	return test_suite_run_case("iser_move", "move", 300, tests);
}
