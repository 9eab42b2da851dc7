/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The iSER provider's entry point and the primitives that are neither
 * connection management nor a role's data path: Send_Control, Enable_
 * Datamover, resource allocation and Notice_Key_Values.
 *
 * Options (environment, read once when the provider loads):
 *   IDM_ISER_ACK_TIMEOUT  local ACK timeout exponent, 4.096 us << n (14)
 *   IDM_ISER_RETRY        transport retries, 0..6 (6); RNR ones never end
 *   IDM_ISER_KEEPALIVE_MS idle probe period, 0 disables (2000) and with it
 *                         the liveness deadline
 *   IDM_ISER_LIVENESS_MS  a keepalive probe not completed after this long
 *                         fails the connection, 0 disables (6000)
 *   IDM_ISER_RX_DEPTH     fewest receive buffers in full feature phase
 *                         (64); keys and command window may raise it
 *   IDM_ISER_STAG         "mw" (default) or "mr" (plain MR rkeys)
 *   IDM_ISER_BIND_IDLE    memory window binds wait for an idle send queue:
 *                         "auto" (default: on soft-RoCE only), 1, 0
 */
#include "iser.h"
#include "prov_env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libidm/iscsi.h>

/* Without an RDMA device (or without the rdma_cm character device) every
 * connect and listen would fail later with a misleading errno: refuse to
 * load instead, saying why, so the provider is listed as skipped and
 * "auto" goes straight to TCP. Devices that appear later need a new
 * context. */
static int usable_here(struct idm_prov *prov)
{
	struct ibv_device **list;
	struct rdma_event_channel *ech;
	int n = 0, err;

	errno = 0;
	list = ibv_get_device_list(&n);
	err = errno;
	if (!list) {
		/* ENOSYS: no verbs support in the kernel at all */
		if (err && err != ENOSYS)
			snprintf(prov->why, sizeof(prov->why),
				 "no RDMA device (libibverbs: %s)", strerror(err));
		else
			snprintf(prov->why, sizeof(prov->why), "no RDMA device");
		return -ENODEV;
	}
	ibv_free_device_list(list);
	if (n == 0) {
		snprintf(prov->why, sizeof(prov->why),
			 "no RDMA device");
		return -ENODEV;
	}
	errno = 0;
	ech = rdma_create_event_channel();
	err = errno;
	if (!ech) {
		snprintf(prov->why, sizeof(prov->why),
			 "%d RDMA device(s) but no RDMA connection manager "
			 "(/dev/infiniband/rdma_cm): %s",
			 n, strerror(err ? err : ENODEV));
		return -ENODEV;
	}
	rdma_destroy_event_channel(ech);
	return 0;
}

static int iser_init(struct idm_prov *prov)
{
	struct iser_prov *ip;
	const char *stag = getenv("IDM_ISER_STAG");
	int r = usable_here(prov);

	if (r < 0)
		return r;
	ip = calloc(1, sizeof(*ip));
	if (!ip)
		return -ENOMEM;
	ip->prov = prov;
	ip->ack_timeout = prov_env_int("IDM_ISER_ACK_TIMEOUT", 14, 1, 31);
	ip->retry_count = prov_env_int("IDM_ISER_RETRY", 6, 0, 6);
	ip->keepalive_ms = prov_env_int("IDM_ISER_KEEPALIVE_MS", 2000, 0, 3600000);
	/* A backstop for transport retries that do not end (retry counts
	 * of 7, huge ACK timeouts, lost completions): far above what a
	 * WR ahead of the probe needs even in a TCG guest. */
	ip->liveness_ms = prov_env_int("IDM_ISER_LIVENESS_MS", 6000, 0, 3600000);
	ip->rx_depth = (uint32_t)prov_env_int("IDM_ISER_RX_DEPTH", 64, 4, 1000);
	ip->force_mr = stag && !strcmp(stag, "mr");
	ip->bind_idle = prov_env_int("IDM_ISER_BIND_IDLE", -1, 0, 1);
	ip->park_fd = -1;
	prov->priv = ip;
	return 0;
}

static void iser_fini(struct idm_prov *prov)
{
	struct iser_prov *ip = prov->priv;

	if (!ip)
		return;
	iser_park_fini(ip);
	iser_devs_close(ip);
	free(ip);
	prov->priv = NULL;
}

static bool final_login_rsp(const uint8_t *bhs)
{
	return iscsi_bhs_opcode(bhs) == ISCSI_OP_LOGIN_RSP &&
	       (bhs[1] & ISCSI_LOGIN_TRANSIT) &&
	       (bhs[1] & ISCSI_LOGIN_NSG_MASK) == ISCSI_STAGE_FULL_FEATURE &&
	       bhs[36] == 0; /* Status-Class success */
}

/* Login buffers are posted one per login PDU we expect next, so that none
 * is left on the receive queue when full feature phase PDUs, possibly
 * larger, start to arrive (the RQ is FIFO). Once the full feature phase
 * buffers are posted they serve the rest of the login too. */
static int expect_login_pdu(struct iser_conn *ic)
{
	struct iser_msg *m;

	if (ic->ffp_rsrc)
		return 0;
	m = iser_pool_get(&ic->rx_login);
	if (!m)
		return -ENOBUFS;
	return iser_post_recv(ic, m);
}

static void encode_control(uint8_t *dst, const uint8_t *bhs, const void *ahs,
			   size_t ahs_len, const void *data, size_t data_len)
{
	struct iser_hdr h = {.opcode = ISER_OP_CTRL};
	uint8_t *p = dst + ISER_HDR_LEN;

	iser_hdr_encode(dst, &h);
	memcpy(p, bhs, ISCSI_BHS_LEN);
	p[ISCSI_BHS_TOTAL_AHS_LEN] = (uint8_t)(ahs_len / 4);
	iscsi_bhs_set_data_len(p, (uint32_t)data_len);
	if (ahs_len)
		memcpy(p + ISCSI_BHS_LEN, ahs, ahs_len);
	if (data_len)
		memcpy(p + ISCSI_BHS_LEN + ahs_len, data, data_len);
}

int iser_send_control(struct idm_conn *c, const uint8_t *bhs, const void *ahs,
		      size_t ahs_len, const void *data, size_t data_len,
		      struct idm_task *t)
{
	struct iser_conn *ic = iser_conn(c);
	uint8_t op = iscsi_bhs_opcode(bhs);
	uint32_t inv = 0;
	struct iser_task *it = NULL;
	struct iser_pool *tx;
	struct iser_msg *m;
	size_t len = ISER_HDR_LEN + ISCSI_BHS_LEN + ahs_len + data_len;
	int r;

	if (!ic || ic->state != ISER_UP)
		return -ENOTCONN;
	if (c->role == IDM_ROLE_INITIATOR && op == ISCSI_OP_SCSI_CMD)
		return iser_ini_send_cmd(ic, bhs, ahs, ahs_len, t);

	if (c->state == IDM_CONN_PHASE_LOGIN) {
		if (c->role == IDM_ROLE_TARGET && final_login_rsp(bhs))
			r = iser_rsrc_ffp(ic);
		else if (op == ISCSI_OP_LOGIN_REQ ||
			 (op == ISCSI_OP_LOGIN_RSP && !(bhs[36])))
			r = expect_login_pdu(ic);
		else
			r = 0;
		if (r < 0)
			return r;
	}
	tx = iser_tx_pool(ic);
	/* what the peer can receive: its declared RecvDataSegmentLength
	 * (login: 8192) and the AHS room of its buffers */
	if (data_len > (c->state == IDM_CONN_PHASE_LOGIN ? ISER_LOGIN_DSL
						    : idm_prov_send_dsl(c)) ||
	    ahs_len > ISER_AHS_CAP)
		return -EMSGSIZE;
	if (c->role == IDM_ROLE_TARGET && op == ISCSI_OP_SCSI_RSP) {
		struct idm_task *task = t ? t : idm_prov_task_find(c, iscsi_bhs_itt(bhs));

		/* Remote mapping ends with the response (7.3.2); with
		 * Send with Invalidate the initiator's STag dies with it. */
		if (task) {
			it = iser_task(task);
			if (ic->send_inv && (it->rsv || it->wsv))
				inv = it->rsv ? it->r_stag : it->w_stag;
		}
	}
	/* No message buffer free, or PDUs already waiting for one: keep
	 * this one in order behind them (iser_pend.c) rather than fail. */
	m = NULL;
	if (!ic->pend && !ic->hello_wait) {
		m = iser_tx_msg(ic, (uint32_t)len);
		if (!m && len > tx->size)
			return -ENOMEM; /* the one-off message */
	}
	if (!m) {
		uint8_t *q = iser_pend_control(ic, (uint32_t)len, inv);

		if (!q)
			return -ENOMEM;
		encode_control(q, bhs, ahs, ahs_len, data, data_len);
		r = 0;
	} else {
		encode_control(m->mem, bhs, ahs, ahs_len, data, data_len);
		r = iser_send_msg(ic, m, (uint32_t)len, NULL, 0, NULL, inv);
	}
	if (r == 0 && it)
		it->rsv = it->wsv = false;
	return r;
}

static int iser_enable_datamover(struct idm_conn *c, const uint8_t *rsp,
				 const void *data, size_t data_len)
{
	struct iser_conn *ic = iser_conn(c);
	int r;

	if (!ic || ic->state != ISER_UP)
		return -ENOTCONN;
	r = iser_rsrc_ffp(ic);
	if (r < 0)
		return r;
	if (c->role == IDM_ROLE_TARGET) {
		/* the final Login Response is the last login-phase PDU */
		return iser_send_control(c, rsp, NULL, 0, data, data_len, NULL);
	}
	if (c->params.iser_hello_required) {
		/* 5.1.1: the Hello is the first iSER message of FFP */
		struct iser_hello hello = {
			.opcode = ISER_OP_HELLO,
			.max_ver = ISER_VERSION,
			.min_ver = ISER_VERSION,
			.ird_ord = (uint16_t)ic->ird,
		};
		struct iser_msg *m = iser_tx_get(ic);

		if (!m)
			return -EAGAIN;
		iser_hello_encode(m->mem, &hello);
		r = iser_send_msg(ic, m, ISER_HDR_LEN, NULL, 0, NULL, 0);
		/* 5.1.1: nothing else goes out before the HelloReply;
		 * PDUs meanwhile wait in the backlog (iser_pend.c) */
		if (r == 0)
			ic->hello_wait = true;
		return r;
	}
	return 0;
}

static int iser_alloc_rsrc(struct idm_conn *c)
{
	struct iser_conn *ic = iser_conn(c);

	if (!ic)
		return -ENOTCONN;
	iser_keys_force(&c->params);
	return iser_rsrc_ffp_alloc(ic);
}

static void iser_free_rsrc(struct idm_conn *c)
{
	struct iser_conn *ic = iser_conn(c);

	if (ic && !iser_rsrc_ffp_free(ic))
		idm_prov_dbg(c->ctx, "iser: full feature phase receives are posted; "
			 "they are released with the connection");
}

static int iser_notice_keys(struct idm_conn *c)
{
	char err[128];
	int r;

	if (iser_keys_force(&c->params))
		idm_prov_dbg(c->ctx, "iser: digests forced to None (RFC 7145 6.1)");
	r = iser_keys_check(&c->params, err, sizeof(err));
	if (r < 0)
		idm_prov_warn(c->ctx, "iser: %s", err);
	return r;
}

static void iser_task_free(struct idm_task *t)
{
	struct iser_conn *ic = iser_conn(t->conn);

	if (!ic || !ic->ops)
		return;
	if (t->conn->role == IDM_ROLE_INITIATOR)
		iser_ini_task_release(ic, t);
	else
		iser_tgt_task_release(ic, t);
}

static const struct idm_prov_ops iser_ops = {
	.abi_version = IDM_PROV_ABI,
	.size = sizeof(struct idm_prov_ops),
	.name = "iser",
	.description = "iSER (RFC 7145) over rdma-core verbs and librdmacm",
	.caps = IDM_CAP_INITIATOR | IDM_CAP_TARGET | IDM_CAP_RDMA |
		IDM_CAP_ZERO_COPY_RX | IDM_CAP_DATA_ACK,
	.task_priv_size = sizeof(struct iser_task),
	.init = iser_init,
	.fini = iser_fini,
	.listen = iser_listen,
	.unlisten = iser_unlisten,
	.listener_port = iser_listener_port,
	.connect = iser_connect,
	.send_control = iser_send_control,
	.put_data = iser_put_data,
	.get_data = iser_get_data,
	.enable_datamover = iser_enable_datamover,
	.conn_terminate = iser_conn_terminate,
	.task_free = iser_task_free,
	.alloc_conn_rsrc = iser_alloc_rsrc,
	.free_conn_rsrc = iser_free_rsrc,
	.notice_key_values = iser_notice_keys,
	.conn_free = iser_conn_free,
	.buf_release = iser_buf_release,
	.conn_is_capable = iser_conn_is_capable,
};

IDM_PROV_EXPORT const struct idm_prov_ops *IDM_PROV_ENTRY(void);

const struct idm_prov_ops *IDM_PROV_ENTRY(void)
{
	return &iser_ops;
}
