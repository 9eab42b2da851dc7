/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The core's record of each task's Put_Data / Get_Data in flight (what
 * illumos IDM keeps with idm_buf_bind_in/out): added by the primitives
 * before the provider's op runs, removed by the completion the provider
 * reports, by a failing op, or when the task is freed. Records come from
 * a per-connection pool, so the I/O path allocates nothing once warm.
 */
#include "core.h"
#include "buf.h"
#include "dm_xfer.h"

#include <string.h>

#define XFERS_PER_CHUNK 64

static struct idmp_xfer *xfer_of(struct idm_sq_link *l)
{
	return IDM_PROV_CONTAINER_OF(l, struct idmp_xfer, link);
}

struct idmp_xfer *idmp_xfer_add(struct idm_task *t, enum idm_data_dir dir,
				struct idm_buf *b, size_t buf_off, uint32_t offset,
				uint32_t length)
{
	struct idm_conn *c = t->conn;
	struct idmp_xfer *x;

	if (c->xfer_pool.obj_size == 0)
		idm_pool_init(&c->xfer_pool, sizeof(*x), XFERS_PER_CHUNK);
	x = idm_pool_get(&c->xfer_pool);
	if (!x)
		return NULL;
	x->x.dir = dir;
	x->x.offset = offset;
	x->x.length = length;
	x->x.buf = b;
	x->x.buf_off = buf_off;
	x->x.addr = idmp_buf_range_addr(b, buf_off, length);
	x->x.task = t;
	memset(x->x.priv, 0, sizeof(x->x.priv));
	idm_sq_push(&t->xfers, &x->link);
	return x;
}

/* Unlink l (prev is the link before it, NULL at the head) and recycle it. */
static void xfer_unlink(struct idm_task *t, struct idm_sq_link *prev,
			struct idm_sq_link *l)
{
	idm_sq_remove(&t->xfers, prev, l);
	idm_pool_put(&t->conn->xfer_pool, xfer_of(l));
}

void idmp_xfer_del(struct idm_task *t, struct idmp_xfer *x)
{
	struct idm_sq_link *prev = NULL, *l;

	for (l = t->xfers.head; l; prev = l, l = l->next) {
		if (l == &x->link) {
			xfer_unlink(t, prev, l);
			return;
		}
	}
}

/* One walk: the match is unlinked where it is found, with its
 * predecessor at hand, rather than searched for again by
 * idmp_xfer_del(). */
void idmp_xfer_done(struct idm_task *t, enum idm_data_dir dir, uint32_t offset,
		    uint32_t length)
{
	struct idm_sq_link *prev = NULL, *l;

	for (l = t->xfers.head; l; prev = l, l = l->next) {
		const struct idmp_xfer *x = xfer_of(l);

		if (x->x.dir == dir && x->x.offset == offset && x->x.length == length) {
			xfer_unlink(t, prev, l);
			return;
		}
	}
}

void idmp_xfer_drop_all(struct idm_task *t)
{
	struct idm_sq_link *l;

	while ((l = idm_sq_pop(&t->xfers)))
		idm_pool_put(&t->conn->xfer_pool, xfer_of(l));
}

const struct idm_prov_xfer *idm_prov_task_xfer_cover(struct idm_task *t,
						     enum idm_data_dir dir,
						     uint32_t offset, uint32_t length)
{
	uint64_t end = (uint64_t)offset + length;

	for (struct idm_sq_link *l = t->xfers.head; l; l = l->next) {
		const struct idm_prov_xfer *x = &xfer_of(l)->x;

		if (x->dir == dir && offset >= x->offset &&
		    end <= (uint64_t)x->offset + x->length)
			return x;
	}
	return NULL;
}

struct idm_prov_xfer *idm_prov_task_xfer_newest(struct idm_task *t)
{
	return t->xfers.tail ? &xfer_of(t->xfers.tail)->x : NULL;
}

const struct idm_prov_xfer *idm_prov_task_xfer_next(struct idm_task *t,
						    const struct idm_prov_xfer *x)
{
	struct idm_sq_link *l;

	l = x ? IDM_PROV_CONTAINER_OF(x, struct idmp_xfer, x)->link.next
	      : t->xfers.head;
	return l ? &xfer_of(l)->x : NULL;
}

int idm_prov_task_foreach_xfer(struct idm_task *t, idm_prov_xfer_fn fn, void *arg)
{
	int r;

	for (struct idm_sq_link *l = t->xfers.head; l; l = l->next)
		if ((r = fn(t, &xfer_of(l)->x, arg)) != 0)
			return r;
	return 0;
}

static int release_one(struct idm_task *t, void *arg)
{
	struct idm_conn *c = arg;

	c->ops->task_free(t);
	idmp_xfer_drop_all(t);
	return 0;
}

void idm_prov_conn_release_tasks(struct idm_conn *c)
{
	idm_prov_conn_foreach_task(c, release_one, c);
}
