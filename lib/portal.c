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

IDM_API int idm_portal_create(idm_ctx *ctx, const char *host, const char *port,
			      const struct idm_portal_attr *attr, idm_portal **out)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	struct sockaddr_storage ss;
	struct idm_portal *p;
	const char *names;
	uint32_t flags = 0;
	int r = 0;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!ctx || !port || !attr || !attr->accept ||
	    attr->size < offsetof(struct idm_portal_attr, backlog) + sizeof(int) ||
	    attr->backlog < 0)
		return -EINVAL;
	if (attr->size >= offsetof(struct idm_portal_attr, flags) + sizeof(attr->flags))
		flags = attr->flags;
	if (flags & ~(IDM_PORTAL_REUSEPORT | IDM_PORTAL_V6ONLY))
		return -EINVAL;
	idmp_last_error_clear();
	r = idmp_resolve(host, port, &hints, &res, -EADDRNOTAVAIL);
	if (r < 0)
		return r;
	memcpy(&ss, res->ai_addr, res->ai_addrlen);

	p = calloc(1, sizeof(*p));
	if (!p) {
		freeaddrinfo(res);
		return -ENOMEM;
	}
	p->ctx = ctx;
	p->accept = attr->accept;
	p->arg = attr->arg;
	p->port = -1;

	idmp_ctx_lock(ctx);
	idmp_providers_load(ctx);
	names = attr->providers;
	if (!names) {
		/* the fallback of the providers' own order (TCP in the tree) */
		struct idm_prov *fallback;

		r = idmp_provider_fallback(ctx, &fallback);
		names = r == 0 ? fallback->ops->name : "";
	}
	while (*names) {
		size_t n = strcspn(names, ",");
		char name[33];
		struct idm_prov *prov;
		struct idm_prov_listener *l;

		if (n == 0 || n >= sizeof(name)) {
			r = -EINVAL;
			break;
		}
		memcpy(name, names, n);
		name[n] = '\0';
		names += n + (names[n] == ',');
		prov = idmp_provider_by_name(ctx, name);
		if (!prov) {
			r = idmp_provider_unusable(ctx, name);
			break;
		}
		if (!(prov->ops->caps & IDM_CAP_TARGET)) {
			r = -ENOSYS;
			break;
		}
		if (p->n_listeners == IDMP_MAX_PROVIDERS) {
			r = -E2BIG;
			break;
		}
		l = &p->listeners[p->n_listeners];
		l->portal = p;
		l->prov = prov;
		l->priv = NULL;
		/* port "0": every provider listens on the port the first got */
		if (p->port > 0)
			set_port((struct sockaddr *)&ss, p->port);
		if ((flags & IDM_PORTAL_REUSEPORT) ||
		    ((flags & IDM_PORTAL_V6ONLY) && ss.ss_family == AF_INET6))
			r = idmp_listen_core(l, (struct sockaddr *)&ss,
					     res->ai_addrlen,
					     attr->backlog ? attr->backlog : 128,
					     flags);
		else
			r = prov->ops->listen(l, (struct sockaddr *)&ss,
					      res->ai_addrlen,
					      attr->backlog ? attr->backlog : 128);
		if (r < 0) {
			idm_prov_warn(ctx, "portal %s:%s: %s cannot listen: %s",
				  host ? host : "*", port, name, idm_strerror(r));
			break;
		}
		p->n_listeners++;
		if (p->port <= 0)
			p->port = prov->ops->listener_port(l);
	}
	if (r == 0 && p->n_listeners == 0)
		r = -EINVAL;
	if (r < 0) {
		for (size_t i = 0; i < p->n_listeners; i++)
			p->listeners[i].prov->ops->unlisten(&p->listeners[i]);
		free(p);
	} else {
		idmp_portal_link(p);
		*out = p;
	}
	idmp_ctx_unlock(ctx);
	freeaddrinfo(res);
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
