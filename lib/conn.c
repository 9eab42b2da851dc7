/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Connection objects: creation on both sides, provider choice (with the
 * fallback of "auto", in the order the providers declare: iSER, then
 * TCP), the notifications raised towards the caller, and destruction.
 */
#include "core.h"
#include "conn.h"
#include "dm_xfer.h"
#include "last_error.h"
#include "lock.h"
#include "progress.h"
#include "provider_loader.h"
#include "provider_order.h"
#include "resolve.h"
#include "task.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_CONNECT_TIMEOUT_MS 10000

struct idm_conn *idmp_conn_alloc(struct idm_ctx *ctx, struct idm_prov *prov,
				 enum idm_role role)
{
	struct idm_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ctx = ctx;
	c->prov = prov;
	c->ops = prov ? prov->ops : NULL;
	c->role = role;
	c->state = IDM_CONN_PHASE_CONNECTING;
	idm_prov_params_default(&c->params);
	c->send_limits.max_entries = IDM_SEND_QUEUE_ENTRIES;
	c->send_limits.max_bytes = IDM_SEND_QUEUE_BYTES;
	idmp_conn_list_add(ctx, c);
	return c;
}

void idmp_conn_list_add(struct idm_ctx *ctx, struct idm_conn *c)
{
	c->prev = NULL;
	c->next = ctx->conns;
	if (ctx->conns)
		ctx->conns->prev = c;
	ctx->conns = c;
}

void idmp_conn_list_del(struct idm_ctx *ctx, struct idm_conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else if (ctx->conns == c)
		ctx->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->next = c->prev = NULL;
}

static void conn_unlink(struct idm_conn *c)
{
	idmp_conn_list_del(c->ctx, c);
}

/* A connection the caller never saw (setup failed): free it quietly. */
void idmp_conn_discard(struct idm_conn *c)
{
	if (c->priv && c->ops && c->ops->conn_free)
		c->ops->conn_free(c);
	conn_unlink(c);
	free(c);
}

static void sa_name(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (!sa) {
		buf[0] = '\0';
		return;
	}
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
		snprintf(buf, len, "%s:%u", host, port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
		snprintf(buf, len, "[%s]:%u", host, port);
	} else {
		snprintf(buf, len, "family %d", sa->sa_family);
	}
}

/* Keep an address for idm_conn_sockaddr(); its length follows from its
 * family (the providers pass IPv4 and IPv6 addresses). */
static void sa_keep(const struct sockaddr *sa, struct sockaddr_storage *ss,
		    socklen_t *len)
{
	socklen_t n = 0;

	if (sa->sa_family == AF_INET)
		n = sizeof(struct sockaddr_in);
	else if (sa->sa_family == AF_INET6)
		n = sizeof(struct sockaddr_in6);
	memset(ss, 0, sizeof(*ss));
	if (n)
		memcpy(ss, sa, n);
	*len = n;
}

void idm_prov_conn_set_names(struct idm_conn *c, const struct sockaddr *local,
			 const struct sockaddr *peer)
{
	if (local) {
		sa_name(local, c->local_name, sizeof(c->local_name));
		sa_keep(local, &c->local_sa, &c->local_salen);
	}
	if (peer) {
		sa_name(peer, c->peer_name, sizeof(c->peer_name));
		sa_keep(peer, &c->peer_sa, &c->peer_salen);
	}
}

void idm_prov_conn_set_error(struct idm_conn *c, const char *fmt, ...)
{
	va_list ap;

	if (c->error[0])
		return; /* the first reason is the real one */
	va_start(ap, fmt);
	vsnprintf(c->error, sizeof(c->error), fmt, ap);
	va_end(ap);
	/* The caller gets the reason through its callback and idm_conn_error();
	 * a peer closing after Logout is routine, so no louder than info. */
	idm_prov_info(c->ctx, "connection %s: %s", c->peer_name, c->error);
}

/* ---- target side ---------------------------------------------------- */

int idm_prov_conn_accepted(struct idm_prov_listener *l, void *priv,
		       const struct sockaddr *local, const struct sockaddr *peer,
		       struct idm_conn **out)
{
	struct idm_portal *portal = l->portal;
	struct idm_conn *c;
	int r;

	*out = NULL;
	c = idmp_conn_alloc(portal->ctx, l->prov, IDM_ROLE_TARGET);
	if (!c)
		return -ENOMEM;
	c->priv = priv;
	c->state = IDM_CONN_PHASE_LOGIN;
	idm_prov_conn_set_names(c, local, peer);
	r = portal->accept(portal, c, portal->arg);
	if (r < 0) {
		/* debug, not info: the caller says why it refuses (and a
		 * target under a connection storm rate-limits that), so a line
		 * per refused connection here would flood the log */
		idm_prov_dbg(c->ctx, "connection from %s refused by caller: %s",
			     c->peer_name, idm_strerror(r));
		conn_unlink(c);
		free(c);
		return r > 0 ? -r : r;
	}
	*out = c;
	return 0;
}

IDM_API int idm_conn_set_cbs(idm_conn *c, const struct idm_conn_cbs *cbs, void *arg)
{
	if (!c || !cbs || cbs->size == 0)
		return -EINVAL;
	idmp_ctx_lock(c->ctx);
	memset(&c->cbs, 0, sizeof(c->cbs));
	memcpy(&c->cbs, cbs,
	       cbs->size < sizeof(c->cbs) ? cbs->size : sizeof(c->cbs));
	c->cbs.size = sizeof(c->cbs);
	c->arg = arg;
	idmp_ctx_unlock(c->ctx);
	return 0;
}

/* ---- initiator side ------------------------------------------------- */

/* "tried iser, tcp": the providers "auto" tries, in order, for a
 * message */
static const char *auto_names(struct idm_ctx *ctx, char *buf, size_t size)
{
	struct idm_prov *p;
	size_t len = 0;

	for (size_t i = 0; (p = idmp_provider_auto_nth(ctx, i)); i++) {
		int n = snprintf(buf + len, size - len, "%s%s",
				 i ? ", " : "tried ", p->ops->name);
		if (n < 0 || (size_t)n >= size - len)
			break;
		len += (size_t)n;
	}
	return len ? buf : "no provider loaded takes part in \"auto\"";
}

static struct idm_prov *next_candidate(struct idm_conn *c)
{
	struct idm_prov *p;

	/* the providers' own auto_order (provider_order.c) */
	while ((p = idmp_provider_auto_nth(c->ctx, (size_t)c->fallback_index))) {
		c->fallback_index++;
		if (!(p->ops->caps & IDM_CAP_INITIATOR))
			continue;
		if (p->ops->conn_is_capable &&
		    p->ops->conn_is_capable(p, (struct sockaddr *)&c->sa,
					    c->salen) < 0)
			continue;
		return p;
	}
	return NULL;
}

/* A connect() that fails at once owes no report, but one that reported
 * anyway must not leave it queued: every failure path frees the
 * connection or starts another attempt, and the queued item would run on
 * freed memory or report the wrong attempt. */
static int start_connect(struct idm_conn *c)
{
	int r;

	c->priv = NULL;
	c->error[0] = '\0';
	r = c->ops->connect(c, (struct sockaddr *)&c->sa, c->salen,
			    c->connect_timeout_ms);
	if (r < 0)
		idm_prov_defer_cancel(c->ctx, &c->connect_defer);
	return r;
}

/* The provider of the current attempt failed: release it and, in "auto"
 * mode, try the next one. Returns true if a new attempt is under way. */
static bool try_fallback(struct idm_conn *c)
{
	struct idm_prov *next;

	if (c->fallback_index < 0)
		return false;
	c->ops->conn_terminate(c);
	if (c->ops->conn_free)
		c->ops->conn_free(c);
	c->priv = NULL;
	while ((next = next_candidate(c))) {
		idm_prov_info(c->ctx, "connect %s: falling back to %s", c->peer_name,
			  next->ops->name);
		c->prov = next;
		c->ops = next->ops;
		if (start_connect(c) == 0)
			return true;
		if (c->ops->conn_free)
			c->ops->conn_free(c);
		c->priv = NULL;
	}
	return false;
}

static void connected_deferred(struct idm_prov_defer *d)
{
	struct idm_conn *c = (struct idm_conn *)((char *)d -
					offsetof(struct idm_conn, connect_defer));
	int status = c->connect_status;

	if (c->state != IDM_CONN_PHASE_CONNECTING)
		return; /* terminated meanwhile */
	if (status < 0 && try_fallback(c))
		return;
	if (status < 0) {
		if (!c->error[0])
			idm_prov_conn_set_error(c, "connect failed: %s",
					    idm_strerror(status));
		c->state = IDM_CONN_PHASE_FAILED;
		c->fail_reason = status;
	} else {
		c->state = IDM_CONN_PHASE_LOGIN;
	}
	if (c->cbs.connected)
		c->cbs.connected(c, status, c->arg);
}

/* Locked: a provider may report from a thread of its own (see
 * idm_prov_defer). */
void idm_prov_conn_connected(struct idm_conn *c, int status)
{
	idmp_ctx_lock(c->ctx);
	c->connect_status = status > 0 ? -status : status;
	idm_prov_defer(c->ctx, &c->connect_defer, connected_deferred);
	idmp_ctx_unlock(c->ctx);
}

/* The provider named for idm_conn_connect(): loaded and able to
 * initiate. Locked. */
static int named_initiator(struct idm_ctx *ctx, const char *name,
			   struct idm_prov **out)
{
	struct idm_prov *prov = idmp_provider_by_name(ctx, name);

	if (!prov)
		return idmp_provider_unusable(ctx, name);
	if (!(prov->ops->caps & IDM_CAP_INITIATOR))
		return -ENOSYS;
	*out = prov;
	return 0;
}

/* Start the new connection c on its provider or, for "auto", on each
 * candidate in the providers' order until one starts. On failure c is
 * freed. Locked. */
static int connect_start(struct idm_conn *c, bool is_auto, const char *host)
{
	struct idm_ctx *ctx = c->ctx;
	struct idm_prov *prov;
	int r;

	if (is_auto) {
		prov = next_candidate(c);
		if (!prov) {
			char tried[128];

			conn_unlink(c);
			free(c);
			idmp_last_error_set("\"auto\": no provider can reach "
					    "%s (%s)", host,
					    auto_names(ctx, tried, sizeof(tried)));
			return -ENOENT;
		}
		c->prov = prov;
		c->ops = prov->ops;
	}
	r = start_connect(c);
	while (r < 0 && is_auto && (prov = next_candidate(c))) {
		if (c->ops->conn_free)
			c->ops->conn_free(c);
		c->prov = prov;
		c->ops = prov->ops;
		r = start_connect(c);
	}
	if (r < 0) {
		if (c->ops->conn_free)
			c->ops->conn_free(c);
		conn_unlink(c);
		free(c);
	}
	return r;
}

IDM_API int idm_conn_connect(idm_ctx *ctx, const char *host, const char *port,
			     const struct idm_conn_attr *attr, idm_conn **out)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	struct idm_prov *prov = NULL;
	struct idm_conn *c;
	bool is_auto;
	int r;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!ctx || !host || !port || !attr || !attr->cbs ||
	    attr->size < offsetof(struct idm_conn_attr, connect_timeout_ms) +
				 sizeof(int) ||
	    attr->cbs->size == 0 || attr->connect_timeout_ms < 0)
		return -EINVAL;

	idmp_last_error_clear();
	r = idmp_resolve(host, port, &hints, &res, -EHOSTUNREACH);
	if (r < 0)
		return r;

	idmp_ctx_lock(ctx);
	idmp_providers_load(ctx);
	is_auto = !attr->provider || !strcmp(attr->provider, "auto");
	if (!is_auto && (r = named_initiator(ctx, attr->provider, &prov)) < 0)
		goto out;
	c = idmp_conn_alloc(ctx, prov, IDM_ROLE_INITIATOR);
	if (!c) {
		r = -ENOMEM;
		goto out;
	}
	memcpy(&c->sa, res->ai_addr, res->ai_addrlen);
	c->salen = res->ai_addrlen;
	idm_prov_conn_set_names(c, NULL, res->ai_addr);
	c->connect_timeout_ms = attr->connect_timeout_ms
					? attr->connect_timeout_ms
					: DEFAULT_CONNECT_TIMEOUT_MS;
	idm_conn_set_cbs(c, attr->cbs, attr->arg);
	c->fallback_index = is_auto ? 0 : -1;
	r = connect_start(c, is_auto, host);
	if (r == 0)
		*out = c;
out:
	idmp_ctx_unlock(ctx);
	freeaddrinfo(res);
	return r;
}

/* ---- notifications -------------------------------------------------- */

static bool conn_live(const struct idm_conn *c)
{
	return c->state == IDM_CONN_PHASE_LOGIN || c->state == IDM_CONN_PHASE_FFP;
}

void idm_prov_control_notify(struct idm_conn *c, struct idm_pdu *pdu)
{
	if (conn_live(c) && c->cbs.control_notify) {
		c->control_rx++;
		c->cbs.control_notify(c, pdu, c->arg);
	}
}

void idm_prov_data_completion(struct idm_task *t, enum idm_data_dir dir,
			  uint32_t offset, uint32_t length, uint32_t sn, int status)
{
	struct idm_conn *c = t->conn;

	/* before the callback: it may issue the next range */
	idmp_xfer_done(t, dir, offset, length);
	if (t->active && conn_live(c) && c->cbs.data_completion_notify)
		c->cbs.data_completion_notify(t, dir, offset, length, sn, status,
					      c->arg);
}

void idm_prov_data_ack(struct idm_task *t, uint32_t datasn)
{
	struct idm_conn *c = t->conn;

	if (t->active && conn_live(c) && c->cbs.data_ack_notify)
		c->cbs.data_ack_notify(t, datasn, c->arg);
}

static void terminate_deferred(struct idm_prov_defer *d)
{
	struct idm_conn *c = (struct idm_conn *)((char *)d -
					offsetof(struct idm_conn, notify_defer));

	if (c->state != IDM_CONN_PHASE_FAILED)
		return;
	if (c->cbs.connection_terminate_notify)
		c->cbs.connection_terminate_notify(c, c->fail_reason, c->arg);
}

void idm_prov_conn_failed(struct idm_conn *c, int reason)
{
	if (!conn_live(c))
		return;
	if (reason > 0)
		reason = -reason;
	if (reason == 0)
		reason = -ECONNRESET;
	if (!c->error[0])
		idm_prov_conn_set_error(c, "%s", idm_strerror(reason));
	c->state = IDM_CONN_PHASE_FAILED;
	c->fail_reason = reason;
	idm_prov_defer(c->ctx, &c->notify_defer, terminate_deferred);
}

/* ---- teardown ------------------------------------------------------- */

IDM_API void idm_connection_terminate(idm_conn *c)
{
	if (!c)
		return;
	idmp_ctx_lock(c->ctx);
	idm_prov_defer_cancel(c->ctx, &c->notify_defer);
	idm_prov_defer_cancel(c->ctx, &c->connect_defer);
	idm_prov_defer_cancel(c->ctx, &c->move_defer);
	if (c->state == IDM_CONN_PHASE_CONNECTING || conn_live(c)) {
		if (c->ops)
			c->ops->conn_terminate(c);
	}
	c->state = IDM_CONN_PHASE_TERMINATED;
	idmp_ctx_unlock(c->ctx);
}

void idmp_conn_free(struct idm_conn *c)
{
	struct idm_ctx *ctx = c->ctx;

	idmp_ctx_lock(ctx);
	idm_prov_defer_cancel(ctx, &c->destroy_defer);
	idm_connection_terminate(c);
	if (c->ops && c->ops->conn_free)
		c->ops->conn_free(c);
	c->priv = NULL;
	idmp_task_pool_destroy(c);
	conn_unlink(c);
	idmp_ctx_unlock(ctx);
	free(c);
}

static void destroy_deferred(struct idm_prov_defer *d)
{
	idmp_conn_free((struct idm_conn *)((char *)d -
				      offsetof(struct idm_conn, destroy_defer)));
}

/*
 * From a callback of this context (any connection's, this one's included)
 * the provider or the core may still hold the connection further up the
 * stack: terminate it now (no callback reaches the caller after this) and
 * free it from a deferred item, which runs after the watch or item that
 * made the callback has returned. Elsewhere, free it at once.
 */
IDM_API void idm_conn_destroy(idm_conn *c)
{
	struct idm_ctx *ctx;

	if (!c)
		return;
	ctx = c->ctx;
	idmp_ctx_lock(ctx);
	/* inside a pass of ctx, even one a nested progress of another
	 * context interrupted: that pass may hold c's events */
	if (idmp_in_pass(ctx)) {
		idm_connection_terminate(c);
		if (!c->destroy_pending) {
			c->destroy_pending = true;
			idm_prov_defer(ctx, &c->destroy_defer, destroy_deferred);
		}
		idmp_ctx_unlock(ctx);
		return;
	}
	idmp_ctx_unlock(ctx);
	idmp_conn_free(c);
}

/* ---- accessors ------------------------------------------------------ */

IDM_API enum idm_role idm_conn_role(const idm_conn *c)
{
	return c ? c->role : (enum idm_role)0;
}

IDM_API const char *idm_conn_provider(const idm_conn *c)
{
	return c && c->ops ? c->ops->name : "";
}

IDM_API void *idm_conn_get_arg(const idm_conn *c)
{
	return c ? c->arg : NULL;
}

IDM_API const char *idm_conn_error(const idm_conn *c)
{
	return c ? c->error : "";
}

IDM_API const char *idm_conn_peer_name(const idm_conn *c)
{
	return c ? c->peer_name : "";
}

IDM_API int idm_conn_sockaddr(const idm_conn *c, enum idm_addr_end end,
			      struct sockaddr_storage *addr, socklen_t *len)
{
	const struct sockaddr_storage *ss;
	socklen_t n;

	if (!c || !addr || !len)
		return -EINVAL;
	if (end == IDM_ADDR_PEER) {
		ss = &c->peer_sa;
		n = c->peer_salen;
	} else if (end == IDM_ADDR_LOCAL) {
		ss = &c->local_sa;
		n = c->local_salen;
	} else {
		return -EINVAL;
	}
	if (!n)
		return -ENOTCONN;
	*addr = *ss;
	*len = n;
	return 0;
}

IDM_API const char *idm_conn_local_name(const idm_conn *c)
{
	return c ? c->local_name : "";
}
