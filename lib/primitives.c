/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The RFC 5047 primitives: argument and state checks common to every
 * provider, then dispatch through the provider's ops.
 */
#include "core.h"
#include "last_error.h"
#include "buf.h"
#include "dm_xfer.h"
#include "lock.h"

#include <libidm/iscsi.h>

#include <errno.h>
#include <string.h>

#define MAX_AHS_BYTES (255u * 4u)
#define MAX_DSL 16777215u

static bool conn_live(const struct idm_conn *c)
{
	return c->state == IDM_CONN_PHASE_LOGIN || c->state == IDM_CONN_PHASE_FFP;
}

static int check_send(struct idm_conn *c, const uint8_t *bhs, const void *ahs,
		      size_t ahs_len, const void *data, size_t data_len,
		      struct idm_task *t, uint32_t flags)
{
	uint8_t op = idm_iscsi_bhs_opcode(bhs);
	int r;

	if (flags)
		return -EINVAL;
	if (!conn_live(c))
		return -ENOTCONN;
	if ((ahs_len && !ahs) || ahs_len % 4 || ahs_len > MAX_AHS_BYTES)
		return -EINVAL;
	if ((data_len && !data) || data_len > MAX_DSL)
		return -EINVAL;
	/* This role's opcodes, not the datamover's (Data-In, Data-Out, R2T
	 * come from Put_Data / Get_Data); Login PDUs in the login phase only
	 * (-EPROTO, RFC 7145 7.3.9 too), the others in full feature phase
	 * (-ENOTCONN) but a target's Reject (lib/dm_opcode.c). */
	r = idm_prov_opcode_check(c->role, op, c->state, 0);
	if (r < 0)
		return r;
	if (c->state == IDM_CONN_PHASE_FFP && data_len > idm_prov_send_dsl(c))
		return -EMSGSIZE;
	if (c->role == IDM_ROLE_INITIATOR && op == IDM_ISCSI_OP_SCSI_CMD) {
		/* the task carries the data; it must be this connection's */
		if (!t || !t->active || t->conn != c || data)
			return -EINVAL;
		if (t->itt != idm_iscsi_bhs_itt(bhs))
			return -EINVAL;
	} else if (t) {
		if (!t->active || t->conn != c)
			return -EINVAL;
	}
	return 0;
}

IDM_API int idm_send_control(idm_conn *c, const uint8_t bhs[IDM_BHS_LEN],
			     const void *ahs, size_t ahs_len, const void *data,
			     size_t data_len, idm_task *t, uint32_t flags)
{
	int r;

	if (!c || !bhs)
		return -EINVAL;
	idmp_ctx_lock(c->ctx);
	r = check_send(c, bhs, ahs, ahs_len, data, data_len, t, flags);
	if (r == 0)
		r = c->ops->send_control(c, bhs, ahs, ahs_len, data, data_len, t);
	if (r == 0)
		c->control_tx++;
	idmp_ctx_unlock(c->ctx);
	return r;
}

static int check_data(struct idm_task *t, const uint8_t *tmpl, uint8_t opcode,
		      struct idm_buf *b, size_t buf_off, uint32_t offset,
		      uint32_t length)
{
	struct idm_conn *c = t->conn;

	if (!t->active || c->role != IDM_ROLE_TARGET)
		return -EINVAL;
	if (c->state != IDM_CONN_PHASE_FFP)
		return -ENOTCONN;
	if (!tmpl || idm_iscsi_bhs_opcode(tmpl) != opcode)
		return -EINVAL;
	if (idm_iscsi_bhs_itt(tmpl) != t->itt)
		return -EINVAL;
	if (!b || length == 0 || !idmp_buf_fits_conn(b, c))
		return -EINVAL;
	if (buf_off > b->len || length > b->len - buf_off)
		return -ERANGE;
	if (offset > UINT32_MAX - length)
		return -ERANGE;
	return idmp_buf_usable(b, c->ops);
}

/* Record the transfer (lib/dm_xfer.c), then hand it to the provider. */
static int data_op(struct idm_task *t, enum idm_data_dir dir, const uint8_t *tmpl,
		   struct idm_buf *b, size_t buf_off, uint32_t offset,
		   uint32_t length, uint32_t flags)
{
	const struct idm_prov_ops *ops = t->conn->ops;
	struct idmp_xfer *x = idmp_xfer_add(t, dir, b, buf_off, offset, length);
	int r;

	if (!x)
		return -ENOMEM;
	r = dir == IDM_DATA_IN
		    ? ops->put_data(t, tmpl, b, buf_off, offset, length, flags)
		    : ops->get_data(t, tmpl, b, buf_off, offset, length, flags);
	if (r < 0)
		idmp_xfer_del(t, x);
	return r;
}

IDM_API int idm_put_data(idm_task *t, const uint8_t datain[IDM_BHS_LEN],
			 idm_buf *b, size_t buf_off, uint32_t offset,
			 uint32_t length, uint32_t flags)
{
	int r;

	if (!t)
		return -EINVAL;
	if (flags & ~IDM_PUT_ACK)
		return -EINVAL;
	idmp_ctx_lock(t->conn->ctx);
	r = check_data(t, datain, IDM_ISCSI_OP_DATA_IN, b, buf_off, offset, length);
	if (r == 0 && (flags & IDM_PUT_ACK) &&
	    t->conn->params.error_recovery_level == 0)
		r = -EINVAL; /* the A bit needs ERL >= 1 */
	if (r == 0)
		r = data_op(t, IDM_DATA_IN, datain, b, buf_off, offset, length,
			    flags);
	idmp_ctx_unlock(t->conn->ctx);
	return r;
}

IDM_API int idm_get_data(idm_task *t, const uint8_t r2t[IDM_BHS_LEN], idm_buf *b,
			 size_t buf_off, uint32_t offset, uint32_t length,
			 uint32_t flags)
{
	int r;

	if (!t)
		return -EINVAL;
	if (flags)
		return -EINVAL;
	idmp_ctx_lock(t->conn->ctx);
	r = check_data(t, r2t, IDM_ISCSI_OP_R2T, b, buf_off, offset, length);
	if (r == 0)
		r = data_op(t, IDM_DATA_OUT, r2t, b, buf_off, offset, length,
			    flags);
	idmp_ctx_unlock(t->conn->ctx);
	return r;
}

IDM_API int idm_allocate_connection_resources(idm_conn *c)
{
	int r = 0;

	if (!c)
		return -EINVAL;
	idmp_ctx_lock(c->ctx);
	if (!conn_live(c))
		r = -ENOTCONN;
	else if (!c->rsrc_allocated) {
		if (c->ops->alloc_conn_rsrc)
			r = c->ops->alloc_conn_rsrc(c);
		if (r == 0)
			c->rsrc_allocated = true;
	}
	idmp_ctx_unlock(c->ctx);
	return r;
}

IDM_API int idm_conn_set_cmd_window(idm_conn *c, uint32_t commands)
{
	int r = 0;

	if (!c)
		return -EINVAL;
	idmp_ctx_lock(c->ctx);
	if (c->state != IDM_CONN_PHASE_CONNECTING && c->state != IDM_CONN_PHASE_LOGIN)
		r = -ENOTCONN;
	else if (c->rsrc_allocated)
		r = -EBUSY; /* the provider sized its buffers already */
	else
		c->cmd_window = commands;
	idmp_ctx_unlock(c->ctx);
	return r;
}

/* Below these a queue could not hold the answers to what one receive
 * pass hands up, and the marks (a half, a quarter) would meet. */
#define MIN_SQ_ENTRIES 16u
#define MIN_SQ_BYTES 4096u

IDM_API int idm_conn_set_send_limits(idm_conn *c, uint32_t max_entries,
				     uint32_t max_bytes)
{
	int r = 0;

	if (!c || (max_entries && max_entries < MIN_SQ_ENTRIES) ||
	    (max_bytes && max_bytes < MIN_SQ_BYTES))
		return -EINVAL;
	idmp_ctx_lock(c->ctx);
	if (c->state != IDM_CONN_PHASE_CONNECTING && !conn_live(c)) {
		r = -ENOTCONN;
	} else {
		/* the provider reads them at its next check (it caches the
		 * pointer, idm_prov_conn_send_limits) */
		c->send_limits.max_entries =
			max_entries ? max_entries : IDM_SEND_QUEUE_ENTRIES;
		c->send_limits.max_bytes =
			max_bytes ? max_bytes : IDM_SEND_QUEUE_BYTES;
	}
	idmp_ctx_unlock(c->ctx);
	return r;
}

IDM_API void idm_deallocate_connection_resources(idm_conn *c)
{
	if (!c)
		return;
	idmp_ctx_lock(c->ctx);
	/* In full feature phase the resources carry live I/O: only
	 * Connection_Terminate may take them away. */
	if (c->rsrc_allocated && c->state == IDM_CONN_PHASE_LOGIN) {
		if (c->ops->free_conn_rsrc)
			c->ops->free_conn_rsrc(c);
		c->rsrc_allocated = false;
	}
	idmp_ctx_unlock(c->ctx);
}

IDM_API int idm_enable_datamover(idm_conn *c, const uint8_t rsp[IDM_BHS_LEN],
				 const void *data, size_t data_len)
{
	int r = 0;

	if (!c)
		return -EINVAL;
	idmp_ctx_lock(c->ctx);
	if (c->state != IDM_CONN_PHASE_LOGIN)
		r = c->state == IDM_CONN_PHASE_FFP ? -EALREADY : -ENOTCONN;
	else if (c->role == IDM_ROLE_TARGET &&
		 (!rsp || idm_iscsi_bhs_opcode(rsp) != IDM_ISCSI_OP_LOGIN_RSP))
		r = -EINVAL;
	else if (c->role == IDM_ROLE_INITIATOR && (rsp || data))
		r = -EINVAL;
	else if ((data_len && !data) || data_len > MAX_DSL)
		r = -EINVAL;
	if (r == 0 && !c->rsrc_allocated) {
		if (c->ops->alloc_conn_rsrc)
			r = c->ops->alloc_conn_rsrc(c);
		if (r == 0)
			c->rsrc_allocated = true;
	}
	if (r == 0)
		r = c->ops->enable_datamover(c, rsp, data, data_len);
	if (r == 0)
		c->state = IDM_CONN_PHASE_FFP;
	idmp_ctx_unlock(c->ctx);
	return r;
}

IDM_API int idm_notice_key_values(idm_conn *c, const char *kv, size_t len)
{
	struct idm_conn_params old;
	char why[160] = "";
	int r;

	idmp_last_error_clear();
	if (!c || (len && !kv))
		return -EINVAL;
	idmp_ctx_lock(c->ctx);
	if (!conn_live(c)) {
		idmp_ctx_unlock(c->ctx);
		return -ENOTCONN;
	}
	old = c->params;
	/* RDMA providers ignore MaxRecvDataSegmentLength (RFC 7145 6.2): the
	 * iSER keys carry the receive sizes. */
	r = idm_prov_params_parse(&c->params,
			      (c->ops->caps & IDM_CAP_RDMA) ? (enum idm_role)0
							    : c->role,
			      kv, len, why, sizeof(why));
	/* the parser names the key and its range: the caller's only way to
	 * learn which of the values it handed over was refused */
	if (r < 0 && why[0])
		idmp_last_error_set("%s", why);
	if (r == 0 && c->ops->notice_key_values) {
		r = c->ops->notice_key_values(c);
		if (r < 0)
			c->params = old;
	}
	idmp_ctx_unlock(c->ctx);
	return r;
}

/* ---- received PDUs -------------------------------------------------- */

IDM_API const uint8_t *idm_pdu_bhs(const idm_pdu *p)
{
	return p ? p->bhs : NULL;
}

IDM_API const uint8_t *idm_pdu_ahs(const idm_pdu *p, size_t *len)
{
	if (len)
		*len = p && p->ahs ? p->ahs_len : 0;
	return p && p->ahs_len ? p->ahs : NULL;
}

IDM_API const uint8_t *idm_pdu_data(const idm_pdu *p, size_t *len)
{
	if (len)
		*len = p && p->data ? p->data_len : 0;
	return p && p->data_len ? p->data : NULL;
}

IDM_API idm_task *idm_pdu_task(const idm_pdu *p)
{
	return p ? p->task : NULL;
}

IDM_API uint8_t idm_pdu_opcode(const idm_pdu *p)
{
	return p && p->bhs ? idm_iscsi_bhs_opcode(p->bhs) : 0xff;
}
