/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Tasks: one per active ITT on a connection, from a per-connection pool
 * that grows in chunks and is only freed with the connection, so the I/O
 * path never calls malloc once warm. Each task carries a provider-private
 * area of ops->task_priv_size bytes.
 */
#include "core.h"
#include "buf.h"
#include "dm_xfer.h"
#include "lock.h"
#include "task.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TASKS_PER_CHUNK 64

static int pool_grow(struct idm_conn *c)
{
	size_t priv = (c->ops->task_priv_size + 15u) & ~(size_t)15u;
	size_t tsz = (sizeof(struct idm_task) + priv + 15u) & ~(size_t)15u;
	void **chunks;
	unsigned char *mem;

	if (c->task_size == 0)
		c->task_size = tsz;
	chunks = realloc(c->task_chunks, (c->n_task_chunks + 1) * sizeof(void *));
	if (!chunks)
		return -ENOMEM;
	c->task_chunks = chunks;
	mem = aligned_alloc(16, c->task_size * TASKS_PER_CHUNK);
	if (!mem)
		return -ENOMEM;
	c->task_chunks[c->n_task_chunks++] = mem;
	for (size_t i = 0; i < TASKS_PER_CHUNK; i++) {
		struct idm_task *t = (struct idm_task *)(mem + i * c->task_size);
		t->next_free = c->task_free;
		c->task_free = t;
	}
	return 0;
}

struct idm_task *idm_prov_task_find(struct idm_conn *c, uint32_t itt)
{
	struct idm_task *t = NULL;

	HASH_FIND(hh, c->tasks, &itt, sizeof(itt), t);
	return t;
}

int idm_prov_task_new(struct idm_conn *c, uint32_t itt, struct idm_task **out)
{
	struct idm_task *t;
	int r;

	*out = NULL;
	if (itt == 0xffffffffu)
		return -EINVAL; /* reserved tag */
	if (idm_prov_task_find(c, itt))
		return -EEXIST;
	if (!c->task_free && (r = pool_grow(c)) < 0)
		return r;
	t = c->task_free;
	c->task_free = t->next_free;
	memset(t, 0, c->task_size);
	t->conn = c;
	t->itt = itt;
	t->active = true;
	idmp_hash_oom = 0;
	HASH_ADD(hh, c->tasks, itt, sizeof(t->itt), t);
	if (idmp_hash_oom) {
		idmp_hash_oom = 0;
		t->next_free = c->task_free;
		c->task_free = t;
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

/* Back to the pool without telling the provider (it already let go). */
static void task_put(struct idm_task *t)
{
	struct idm_conn *c = t->conn;

	HASH_DEL(c->tasks, t);
	idmp_xfer_drop_all(t);
	t->active = false;
	t->next_free = c->task_free;
	c->task_free = t;
}

void idmp_task_pool_destroy(struct idm_conn *c)
{
	struct idm_task *t, *tmp;

	HASH_ITER(hh, c->tasks, t, tmp)
		HASH_DEL(c->tasks, t);
	for (size_t i = 0; i < c->n_task_chunks; i++)
		free(c->task_chunks[i]);
	free(c->task_chunks);
	c->task_chunks = NULL;
	c->n_task_chunks = 0;
	c->task_free = NULL;
	if (c->xfer_pool.obj_size)
		idm_pool_fini(&c->xfer_pool, NULL);
}

IDM_API int idm_task_create(idm_conn *conn, uint32_t itt, idm_task **out)
{
	int r;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!conn)
		return -EINVAL;
	idmp_ctx_lock(conn->ctx);
	if (conn->role != IDM_ROLE_INITIATOR)
		r = -EINVAL;
	else if (conn->state != IDM_CONN_PHASE_FFP)
		r = -ENOTCONN;
	else
		r = idm_prov_task_new(conn, itt, out);
	idmp_ctx_unlock(conn->ctx);
	return r;
}

static bool range_ok(const struct idm_buf *b, size_t off, uint32_t len)
{
	return off <= b->len && len <= b->len - off;
}

IDM_API int idm_task_set_data(idm_task *t, idm_buf *in, size_t in_off,
			      uint32_t in_len, idm_buf *out, size_t out_off,
			      uint32_t out_len)
{
	if (!t || !t->active || t->conn->role != IDM_ROLE_INITIATOR)
		return -EINVAL;
	if ((in && !range_ok(in, in_off, in_len)) ||
	    (out && !range_ok(out, out_off, out_len)))
		return -ERANGE;
	if ((!in && in_len) || (!out && out_len))
		return -EINVAL;
	if ((in && !idmp_buf_fits_conn(in, t->conn)) ||
	    (out && !idmp_buf_fits_conn(out, t->conn)))
		return -EINVAL;
	if ((in && idmp_buf_usable(in, t->conn->ops) < 0) ||
	    (out && idmp_buf_usable(out, t->conn->ops) < 0))
		return -EOPNOTSUPP;
	idmp_ctx_lock(t->conn->ctx);
	t->in_buf = in;
	t->in_off = in_off;
	t->in_len = in ? in_len : 0;
	t->out_buf = out;
	t->out_off = out_off;
	t->out_len = out ? out_len : 0;
	idmp_ctx_unlock(t->conn->ctx);
	return 0;
}

IDM_API void idm_deallocate_task_resources(idm_task *t)
{
	struct idm_conn *c;

	if (!t || !t->active)
		return;
	c = t->conn;
	idmp_ctx_lock(c->ctx);
	if (c->state == IDM_CONN_PHASE_LOGIN || c->state == IDM_CONN_PHASE_FFP)
		c->ops->task_free(t);
	task_put(t);
	idmp_ctx_unlock(c->ctx);
}

IDM_API uint32_t idm_task_itt(const idm_task *t)
{
	return t ? t->itt : 0xffffffffu;
}

IDM_API idm_conn *idm_task_conn(const idm_task *t)
{
	return t ? t->conn : NULL;
}

IDM_API void idm_task_set_arg(idm_task *t, void *arg)
{
	if (t)
		t->arg = arg;
}

IDM_API void *idm_task_get_arg(const idm_task *t)
{
	return t ? t->arg : NULL;
}

IDM_API uint32_t idm_task_data_received(const idm_task *t)
{
	return t ? t->received : 0;
}
