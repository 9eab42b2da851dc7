/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The accessors of <libidm/provider.h>: what a provider may read or set of
 * the core's objects, so that the objects' layout stays the core's own
 * business and can change without an IDM_PROV_ABI bump. Each is a plain
 * field access; providers call them with the context lock held (from an
 * op or a progress callback), so none takes the lock.
 */
#include "core.h"
#include "buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* ---- provider ------------------------------------------------------- */

void *idm_prov_priv(const struct idm_prov *prov)
{
	return prov->priv;
}

void idm_prov_set_priv(struct idm_prov *prov, void *priv)
{
	prov->priv = priv;
}

struct idm_ctx *idm_prov_ctx(const struct idm_prov *prov)
{
	return prov->ctx;
}

uint32_t idm_prov_ctx_flags(const struct idm_ctx *ctx)
{
	return ctx->flags;
}

void idm_prov_set_why(struct idm_prov *prov, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prov->why, sizeof(prov->why), fmt, ap);
	va_end(ap);
}

/* ---- listener ------------------------------------------------------- */

void *idm_prov_listener_priv(const struct idm_prov_listener *l)
{
	return l->priv;
}

void idm_prov_listener_set_priv(struct idm_prov_listener *l, void *priv)
{
	l->priv = priv;
}

struct idm_ctx *idm_prov_listener_ctx(const struct idm_prov_listener *l)
{
	return l->portal->ctx;
}

struct idm_prov *idm_prov_listener_provider(const struct idm_prov_listener *l)
{
	return l->prov;
}

/* ---- connection ----------------------------------------------------- */

void *idm_prov_conn_priv(const struct idm_conn *c)
{
	return c->priv;
}

void idm_prov_conn_set_priv(struct idm_conn *c, void *priv)
{
	c->priv = priv;
}

struct idm_ctx *idm_prov_conn_ctx(const struct idm_conn *c)
{
	return c->ctx;
}

struct idm_prov *idm_prov_conn_provider(const struct idm_conn *c)
{
	return c->prov;
}

enum idm_conn_phase idm_prov_conn_phase(const struct idm_conn *c)
{
	return c->state;
}

const struct idm_conn_params *idm_prov_conn_params(const struct idm_conn *c)
{
	return &c->params;
}

uint32_t idm_prov_conn_cmd_window(const struct idm_conn *c)
{
	return c->cmd_window;
}

struct idm_prov_stats *idm_prov_conn_stats(struct idm_conn *c)
{
	return &c->stats;
}

const struct idm_prov_send_limits *idm_prov_conn_send_limits(const struct idm_conn *c)
{
	return &c->send_limits;
}

uint32_t idm_prov_send_dsl(const struct idm_conn *c)
{
	return c->role == IDM_ROLE_TARGET ? c->params.initiator_recv_dsl
					  : c->params.target_recv_dsl;
}

uint32_t idm_prov_recv_dsl(const struct idm_conn *c)
{
	return c->role == IDM_ROLE_TARGET ? c->params.target_recv_dsl
					  : c->params.initiator_recv_dsl;
}

int idm_prov_conn_foreach_task(struct idm_conn *c, idm_prov_task_fn fn, void *arg)
{
	struct idm_task *t, *tmp;
	int r;

	/* HASH_ITER keeps the next element before fn runs: fn may free t */
	HASH_ITER(hh, c->tasks, t, tmp) {
		if ((r = fn(t, arg)) != 0)
			return r;
	}
	return 0;
}

/* ---- task ----------------------------------------------------------- */

void *idm_prov_task_priv(struct idm_task *t)
{
	return t->priv;
}

struct idm_task *idm_prov_task_from_priv(void *priv)
{
	return IDM_PROV_CONTAINER_OF(priv, struct idm_task, priv);
}

bool idm_prov_task_active(const struct idm_task *t)
{
	return t->active;
}

int idm_prov_task_data(const struct idm_task *t, enum idm_data_dir dir,
		       struct idm_prov_range *r)
{
	struct idm_buf *b = dir == IDM_DATA_IN ? t->in_buf : t->out_buf;

	memset(r, 0, sizeof(*r));
	if (!b)
		return -ENOENT;
	r->buf = b;
	r->buf_off = dir == IDM_DATA_IN ? t->in_off : t->out_off;
	r->length = dir == IDM_DATA_IN ? t->in_len : t->out_len;
	r->addr = idmp_buf_range_addr(b, r->buf_off, r->length);
	return 0;
}

void idm_prov_task_add_received(struct idm_task *t, uint32_t bytes)
{
	t->received += bytes;
}

/* ---- buffer --------------------------------------------------------- */

/* By the domain's slot, so that every context of the domain sees one
 * registration; release/acquire because another context's thread may
 * read what this one set (the provider serialises setters, dom_lock). */
void *idm_prov_buf_reg(const struct idm_buf *b, const struct idm_prov *prov)
{
	return atomic_load_explicit(&((struct idm_buf *)b)->reg[prov->reg_index],
				    memory_order_acquire);
}

void idm_prov_buf_set_reg(struct idm_buf *b, const struct idm_prov *prov, void *reg)
{
	atomic_store_explicit(&b->reg[prov->reg_index], reg, memory_order_release);
}
