/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Listening portals (target side). One portal may be served by several
 * providers at once (TCP and iSER listen on the same address and port:
 * their port spaces are distinct).
 */
#include "core.h"
#include "last_error.h"
#include "lock.h"
#include "portal.h"
#include "portal_shared.h"
#include "provider_loader.h"
#include "provider_order.h"
#include "resolve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

static void set_port(struct sockaddr *sa, int port)
{
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
	else if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
}

static void portal_unlink(struct idm_portal *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else if (p->ctx->portals == p)
		p->ctx->portals = p->next;
	if (p->next)
		p->next->prev = p->prev;
}

/* Put a new portal on its context's list (idm_ctx_destroy() frees what is
 * left there). Locked. */
void idmp_portal_link(struct idm_portal *p)
{
	p->next = p->ctx->portals;
	if (p->ctx->portals)
		p->ctx->portals->prev = p;
	p->ctx->portals = p;
}

/* The next provider of a comma-separated list, advancing *names: found,
 * loaded and able to serve targets, or a negative errno. Locked. */
static int portal_next_provider(struct idm_ctx *ctx, const char **names,
				struct idm_prov **out)
{
	size_t n = strcspn(*names, ",");
	char name[33];
	struct idm_prov *prov;

	if (n == 0 || n >= sizeof(name))
		return -EINVAL;
	memcpy(name, *names, n);
	name[n] = '\0';
	*names += n + ((*names)[n] == ',');
	prov = idmp_provider_by_name(ctx, name);
	if (!prov)
		return idmp_provider_unusable(ctx, name);
	if (!(prov->ops->caps & IDM_CAP_TARGET))
		return -ENOSYS;
	*out = prov;
	return 0;
}

/* The address, backlog and flags every provider of one portal listens
 * with. */
struct portal_addr {
	const char *host, *port; /* for messages */
	struct sockaddr_storage ss;
	socklen_t len;
	int backlog;
	uint32_t flags;
};

/* prov listens as the portal's next listener. Locked. */
static int portal_listen_one(struct idm_portal *p, struct idm_prov *prov,
			     struct portal_addr *a)
{
	struct idm_prov_listener *l;
	int r;

	if (p->n_listeners == IDMP_MAX_PROVIDERS)
		return -E2BIG;
	l = &p->listeners[p->n_listeners];
	l->portal = p;
	l->prov = prov;
	l->priv = NULL;
	/* port "0": every provider listens on the port the first got */
	if (p->port > 0)
		set_port((struct sockaddr *)&a->ss, p->port);
	if ((a->flags & IDM_PORTAL_REUSEPORT) ||
	    ((a->flags & IDM_PORTAL_V6ONLY) && a->ss.ss_family == AF_INET6))
		r = idmp_listen_core(l, (struct sockaddr *)&a->ss, a->len,
				     a->backlog, a->flags);
	else
		r = prov->ops->listen(l, (struct sockaddr *)&a->ss, a->len,
				      a->backlog);
	if (r < 0) {
		idm_prov_warn(p->ctx, "portal %s:%s: %s cannot listen: %s",
			      a->host ? a->host : "*", a->port, prov->ops->name,
			      idm_strerror(r));
		return r;
	}
	p->n_listeners++;
	if (p->port <= 0)
		p->port = prov->ops->listener_port(l);
	return 0;
}

/* Every provider of `names` (NULL: the fallback of the providers' own
 * order, TCP in the tree) listens; on failure none does. Locked. */
static int portal_listen_all(struct idm_portal *p, const char *names,
			     struct portal_addr *a)
{
	struct idm_prov *prov;
	int r = 0;

	idmp_providers_load(p->ctx);
	if (!names) {
		r = idmp_provider_fallback(p->ctx, &prov);
		names = r == 0 ? prov->ops->name : "";
	}
	while (r == 0 && *names) {
		r = portal_next_provider(p->ctx, &names, &prov);
		if (r == 0)
			r = portal_listen_one(p, prov, a);
	}
	if (r == 0 && p->n_listeners == 0)
		r = -EINVAL;
	if (r < 0)
		for (size_t i = 0; i < p->n_listeners; i++)
			p->listeners[i].prov->ops->unlisten(&p->listeners[i]);
	return r;
}

IDM_API int idm_portal_create(idm_ctx *ctx, const char *host, const char *port,
			      const struct idm_portal_attr *attr, idm_portal **out)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	struct portal_addr a = {.host = host, .port = port};
	struct idm_portal *p;
	int r;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!ctx || !port || !attr || !attr->accept ||
	    attr->size < offsetof(struct idm_portal_attr, backlog) + sizeof(int) ||
	    attr->backlog < 0)
		return -EINVAL;
	if (attr->size >= offsetof(struct idm_portal_attr, flags) + sizeof(attr->flags))
		a.flags = attr->flags;
	if (a.flags & ~(IDM_PORTAL_REUSEPORT | IDM_PORTAL_V6ONLY))
		return -EINVAL;
	a.backlog = attr->backlog ? attr->backlog : 128;
	idmp_last_error_clear();
	r = idmp_resolve(host, port, &hints, &res, -EADDRNOTAVAIL);
	if (r < 0)
		return r;
	memcpy(&a.ss, res->ai_addr, res->ai_addrlen);
	a.len = res->ai_addrlen;
	freeaddrinfo(res);

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ctx = ctx;
	p->accept = attr->accept;
	p->arg = attr->arg;
	p->port = -1;

	idmp_ctx_lock(ctx);
	r = portal_listen_all(p, attr->providers, &a);
	if (r < 0) {
		free(p);
	} else {
		idmp_portal_link(p);
		*out = p;
	}
	idmp_ctx_unlock(ctx);
	return r;
}

IDM_API int idm_portal_port(idm_portal *p)
{
	return p ? p->port : -EINVAL;
}

IDM_API void idm_portal_destroy(idm_portal *p)
{
	struct idm_ctx *ctx;

	if (!p)
		return;
	ctx = p->ctx;
	idmp_ctx_lock(ctx);
	for (size_t i = 0; i < p->n_listeners; i++)
		p->listeners[i].prov->ops->unlisten(&p->listeners[i]);
	portal_unlink(p);
	idmp_ctx_unlock(ctx);
	free(p);
}
