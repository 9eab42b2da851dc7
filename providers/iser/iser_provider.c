/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The iSER provider's entry point: its ops table, init/fini, and the op
 * entry points, each handing over to the file that does the work
 * (iser.h has the map).
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
 *   IDM_ISER_MR_CACHE_MB  MiB of caller memory a device's registration
 *                         cache keeps registered (256); 0: no cache
 *   IDM_ISER_STAGING_MB   MiB of an initiator connection's staging area
 *                         for command ranges over scattered segments (4),
 *                         made on first use; 0: such commands refused
 */
#include "iser.h"
#include "iser_cm.h"
#include "iser_conn.h"
#include "iser_control.h"
#include "iser_initiator.h"
#include "iser_move.h"
#include "iser_msgpool.h"
#include "iser_park.h"
#include "iser_pd.h"
#include "iser_recv.h"
#include "iser_reg.h"
#include "iser_sq.h"
#include "iser_target.h"
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
			idm_prov_set_why(prov, "no RDMA device (libibverbs: %s)",
					 strerror(err));
		else
			idm_prov_set_why(prov, "no RDMA device");
		return -ENODEV;
	}
	ibv_free_device_list(list);
	if (n == 0) {
		idm_prov_set_why(prov, "no RDMA device");
		return -ENODEV;
	}
	errno = 0;
	ech = rdma_create_event_channel();
	err = errno;
	if (!ech) {
		idm_prov_set_why(prov, "%d RDMA device(s) but no RDMA connection "
				 "manager (/dev/infiniband/rdma_cm): %s",
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
	ip->mr_cache_bytes = (uint64_t)prov_env_int("IDM_ISER_MR_CACHE_MB",
						    256, 0, 1 << 20) << 20;
	ip->stage_bytes = (uint32_t)prov_env_int("IDM_ISER_STAGING_MB", 4, 0,
						 1024) << 20;
	/* the context's choice; IDM_ISER_SRQ=1/0 overrides it (tests) */
	ip->shared_recv = prov_env_int("IDM_ISER_SRQ",
				       (idm_prov_ctx_flags(idm_prov_ctx(prov)) &
					IDM_CTX_SHARED_RECV) != 0, 0, 1) == 1;
	ip->park_fd = -1;
	ip->ini_role = &iser_ini_role;
	ip->tgt_role = &iser_tgt_role;
	idm_prov_set_priv(prov, ip);
	return 0;
}

static void iser_fini(struct idm_prov *prov)
{
	struct iser_prov *ip = idm_prov_priv(prov);

	if (!ip)
		return;
	iser_park_fini(ip);
	free(ip);
	idm_prov_set_priv(prov, NULL);
}

static int iser_send_control(struct idm_conn *c, const uint8_t *bhs,
			     const void *ahs, size_t ahs_len, const void *data,
			     size_t data_len, struct idm_task *t)
{
	struct iser_conn *ic = iser_conn(c);
	uint8_t op = idm_iscsi_bhs_opcode(bhs);

	if (!ic || ic->state != ISER_UP)
		return -ENOTCONN;
	if (ic->conn_role == IDM_ROLE_INITIATOR && op == IDM_ISCSI_OP_SCSI_CMD)
		return iser_ini_send_cmd(ic, bhs, ahs, ahs_len, t);
	if (ic->conn_role == IDM_ROLE_TARGET && op == IDM_ISCSI_OP_SCSI_RSP)
		return iser_tgt_send_rsp(ic, bhs, ahs, ahs_len, data, data_len,
					 t);
	return iser_ctl_send(ic, bhs, ahs, ahs_len, data, data_len, 0);
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
	if (idm_conn_role(c) == IDM_ROLE_TARGET) {
		/* the final Login Response is the last login-phase PDU */
		return iser_send_control(c, rsp, NULL, 0, data, data_len, NULL);
	}
	return iser_ctl_hello(ic);
}

static int iser_alloc_rsrc(struct idm_conn *c)
{
	struct iser_conn *ic = iser_conn(c);

	if (!ic)
		return -ENOTCONN;
	return iser_rsrc_ffp_alloc(ic);
}

static void iser_free_rsrc(struct idm_conn *c)
{
	struct iser_conn *ic = iser_conn(c);

	if (ic && !iser_rsrc_ffp_free(ic))
		idm_prov_dbg(idm_prov_conn_ctx(c), "iser: full feature phase "
			     "receives are posted; "
			 "they are released with the connection");
}

static int iser_notice_keys(struct idm_conn *c)
{
	struct idm_conn_params p = *idm_prov_conn_params(c);
	struct iser_conn *ic = iser_conn(c);
	char err[128];
	int r;

	/* The negotiated values are the core's; iSER only never uses
	 * digests (nothing of the provider reads them). */
	if (iser_keys_force(&p))
		idm_prov_dbg(idm_prov_conn_ctx(c), "iser: digests are None on "
			     "iSER whatever was negotiated (RFC 7145 6.1)");
	r = iser_keys_check(&p, err, sizeof(err));
	if (r < 0)
		idm_prov_warn(idm_prov_conn_ctx(c), "iser: %s", err);
	else if (ic)
		iser_conn_note_limits(ic); /* the keys stand */
	return r;
}

/* ops->conn_stats: the send queue's gauges and the counters of the
 * registration cache of the connection's device. */
static void iser_conn_stats(struct idm_conn *c, struct idm_prov_stats *st)
{
	const struct iser_conn *ic = idm_prov_conn_priv(c);

	iser_sq_stats(c, st);
	iser_reg_stats(ic->dev, st);
}

static void iser_task_free(struct idm_task *t)
{
	struct iser_conn *ic = iser_conn(idm_task_conn(t));

	if (!ic || !ic->ops)
		return;
	ic->role->task_release(ic, t);
}

/* iser://host[:port]/target */
static const char *const iser_schemes[] = {"iser", NULL};

static const struct idm_prov_ops iser_ops = {
	.abi_version = IDM_PROV_ABI,
	.size = sizeof(struct idm_prov_ops),
	.name = "iser",
	.description = "iSER (RFC 7145) over rdma-core verbs and librdmacm",
	.caps = IDM_CAP_INITIATOR | IDM_CAP_TARGET | IDM_CAP_RDMA |
		IDM_CAP_ZERO_COPY_RX | IDM_CAP_DATA_ACK | IDM_CAP_SCATTER_GATHER,
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
	.conn_stats = iser_conn_stats,
	.conn_move = iser_conn_move,
	.url_schemes = iser_schemes,
	/* before TCP where a device reaches the peer (conn_is_capable) */
	.auto_order = IDM_PROV_AUTO_RDMA,
	.dom_open = iser_dom_open,
	.dom_close = iser_dom_close,
};

IDM_PROV_EXPORT const struct idm_prov_ops *IDM_PROV_ENTRY(void);

const struct idm_prov_ops *IDM_PROV_ENTRY(void)
{
	return &iser_ops;
}
