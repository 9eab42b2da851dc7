/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sockets the caller set up itself: a connected socket adopted as a
 * connection (in the login phase, or in full feature phase after a login
 * the caller did), a listening socket served as a portal. The core checks
 * what the descriptor is; the provider takes it over through its adopt or
 * listen_fd op, the same way it takes over a socket it accepted.
 */
#include "core.h"
#include "conn.h"
#include "last_error.h"
#include "lock.h"
#include "portal.h"
#include "provider_loader.h"
#include "provider_order.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* fd is an IPv4/IPv6 stream socket, listening or connected as asked.
 * Nothing is changed on fd. */
static int check_stream_fd(int fd, bool listening)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int v = 0;

	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) < 0)
		return errno == ENOTSOCK ? -ENOTSOCK : -errno;
	if (v != SOCK_STREAM)
		return -EINVAL;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) < 0)
		return -errno;
	if (v != AF_INET && v != AF_INET6)
		return -EAFNOSUPPORT;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) < 0)
		return -errno;
	if (listening || v)
		return listening && v ? 0 : -EINVAL;
	len = sizeof(ss);
	if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
		return errno == ENOTCONN ? -ENOTCONN : -errno;
	return 0;
}

/* The provider named, loaded and able to take a socket. NULL and "auto"
 * mean the provider "auto" falls back to last (provider_order.c), the
 * one that reaches any address: TCP in the tree. Locked. */
static int socket_provider(struct idm_ctx *ctx, const char *name,
			   struct idm_prov **out)
{
	struct idm_prov *prov;
	int r;

	idmp_providers_load(ctx);
	if (!name || !strcmp(name, "auto")) {
		r = idmp_provider_fallback(ctx, &prov);
		if (r < 0)
			return r;
		name = prov->ops->name;
	} else {
		prov = idmp_provider_by_name(ctx, name);
		if (!prov)
			return idmp_provider_unusable(ctx, name);
	}
	if (!IDM_PROV_OPS_HAS(prov->ops, adopt) ||
	    !IDM_PROV_OPS_HAS(prov->ops, listen_fd)) {
		idmp_last_error_set("provider %s cannot take over a socket",
				    name);
		return -EOPNOTSUPP;
	}
	*out = prov;
	return 0;
}

/* The connection is adopted: switch it to full feature phase the way
 * Notice_Key_Values and Enable_Datamover do, without a Login Response to
 * send (the caller's login already ended). Locked. */
static int adopted_enter_ffp(struct idm_conn *c)
{
	int r = 0;

	if (c->ops->notice_key_values)
		r = c->ops->notice_key_values(c);
	if (r == 0 && c->ops->alloc_conn_rsrc)
		r = c->ops->alloc_conn_rsrc(c);
	if (r == 0) {
		c->rsrc_allocated = true;
		r = c->ops->enable_datamover(c, NULL, NULL, 0);
	}
	if (r == 0)
		c->state = IDM_CONN_PHASE_FFP;
	return r;
}

/* The arguments of idm_conn_adopt_fd(_ffp) other than the socket. */
static bool adopt_args_valid(const struct idm_ctx *ctx, enum idm_role role,
			     const struct idm_conn_attr *attr, const char *keys,
			     size_t keys_len)
{
	return ctx && attr && attr->cbs && attr->cbs->size != 0 &&
	       attr->size >= offsetof(struct idm_conn_attr, arg) + sizeof(void *) &&
	       (role == IDM_ROLE_INITIATOR || role == IDM_ROLE_TARGET) &&
	       (!keys_len || keys);
}

/* The socket provider named (or the first that takes sockets), if it
 * serves the role: -ENOSYS if not. Context lock held. */
static int role_provider(struct idm_ctx *ctx, const char *name,
			 enum idm_role role, struct idm_prov **prov)
{
	int r = socket_provider(ctx, name, prov);

	if (r < 0)
		return r;
	if (!((*prov)->ops->caps & (role == IDM_ROLE_TARGET ? IDM_CAP_TARGET
							    : IDM_CAP_INITIATOR)))
		return -ENOSYS;
	return 0;
}

static int adopt(struct idm_ctx *ctx, int fd, enum idm_role role,
		 const struct idm_conn_attr *attr, bool ffp, const char *keys,
		 size_t keys_len, idm_conn **out)
{
	struct idm_prov *prov = NULL;
	struct idm_conn *c;
	int r;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!adopt_args_valid(ctx, role, attr, keys, keys_len))
		return -EINVAL;
	idmp_last_error_clear();
	r = check_stream_fd(fd, false);
	if (r < 0)
		return r;

	idmp_ctx_lock(ctx);
	r = role_provider(ctx, attr->provider, role, &prov);
	if (r < 0)
		goto out;
	c = idmp_conn_alloc(ctx, prov, role);
	if (!c) {
		r = -ENOMEM;
		goto out;
	}
	c->state = IDM_CONN_PHASE_LOGIN;
	c->fallback_index = -1;
	idm_conn_set_cbs(c, attr->cbs, attr->arg);
	/* the keys first: a bad value fails before the provider has fd */
	if (ffp)
		r = idm_prov_params_parse(&c->params,
					  (prov->ops->caps & IDM_CAP_RDMA)
						  ? (enum idm_role)0
						  : role,
					  keys, keys_len, NULL, 0);
	if (r == 0)
		r = prov->ops->adopt(c, fd);
	if (r < 0) {
		idmp_conn_discard(c);
		goto out;
	}
	/* Every step below is infallible for the TCP provider (no resources
	 * to allocate, no Login Response to send); a provider failing here
	 * has fd already, and the termination closes it. The progress pass
	 * cannot read from fd before we return: it takes the lock. */
	if (ffp && (r = adopted_enter_ffp(c)) < 0) {
		idm_prov_warn(ctx, "adopted connection %s: cannot enter full "
			      "feature phase: %s", c->peer_name, idm_strerror(r));
		idmp_conn_free(c);
		goto out;
	}
	*out = c;
out:
	idmp_ctx_unlock(ctx);
	return r;
}

IDM_API int idm_conn_adopt_fd(idm_ctx *ctx, int fd, enum idm_role role,
			      const struct idm_conn_attr *attr, idm_conn **out)
{
	return adopt(ctx, fd, role, attr, false, NULL, 0, out);
}

IDM_API int idm_conn_adopt_fd_ffp(idm_ctx *ctx, int fd, enum idm_role role,
				  const struct idm_conn_attr *attr,
				  const char *keys, size_t keys_len,
				  idm_conn **out)
{
	return adopt(ctx, fd, role, attr, true, keys, keys_len, out);
}

IDM_API int idm_portal_create_fd(idm_ctx *ctx, int fd,
				 const struct idm_portal_attr *attr,
				 idm_portal **out)
{
	struct idm_prov *prov = NULL;
	struct idm_portal *p;
	int r;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!ctx || !attr || !attr->accept ||
	    attr->size < offsetof(struct idm_portal_attr, arg) + sizeof(void *) ||
	    (attr->providers && strchr(attr->providers, ',')))
		return -EINVAL;
	idmp_last_error_clear();
	r = check_stream_fd(fd, true);
	if (r < 0)
		return r;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ctx = ctx;
	p->accept = attr->accept;
	p->arg = attr->arg;

	idmp_ctx_lock(ctx);
	r = socket_provider(ctx, attr->providers, &prov);
	if (r == 0 && !(prov->ops->caps & IDM_CAP_TARGET))
		r = -ENOSYS;
	if (r == 0) {
		p->listeners[0].portal = p;
		p->listeners[0].prov = prov;
		r = prov->ops->listen_fd(&p->listeners[0], fd);
	}
	if (r < 0) {
		idmp_ctx_unlock(ctx);
		free(p);
		return r;
	}
	p->n_listeners = 1;
	p->port = prov->ops->listener_port(&p->listeners[0]);
	idmp_portal_link(p);
	*out = p;
	idmp_ctx_unlock(ctx);
	return 0;
}
