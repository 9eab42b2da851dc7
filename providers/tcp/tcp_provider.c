/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The TCP provider's ops table and entry point: classic iSCSI over TCP
 * (RFC 7143), both roles, CRC32C digests, ERL 0 plus the DataACK path.
 * Each op checks the connection is still open and hands over to the file
 * that owns the job.
 */
#include "tcp.h"
#include "tcp_conn.h"
#include "tcp_state.h"
#include "tcp_adopt.h"
#include "tcp_move.h"
#include "tcp_tx.h"
#include "tcp_txd.h"
#include "tcp_rx.h"
#include "tcp_r2t.h"
#include "tcp_datain.h"
#include "tcp_initiator.h"

#include <errno.h>

static int tcp_send_control(struct idm_conn *conn, const uint8_t *bhs,
			    const void *ahs, size_t ahs_len, const void *data,
			    size_t data_len, struct idm_task *task)
{
	struct tcp_conn *tc = tcp_conn(conn);
	int r;

	if (!tc || tc->closed || tc->connecting)
		return -ENOTCONN;
	r = tcp_txd_admit(tc, bhs, ahs_len, data_len);
	if (r < 0)
		return r;
	if (!tc->target) {
		/* Data-Out carry the ExpStatSN of the caller's latest PDU */
		tc->exp_statsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_EXP_STATSN);
		if (task && idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_SCSI_CMD) {
			if (data || data_len)
				return -EINVAL;
			return tcp_ini_send_cmd(tc, bhs, ahs, ahs_len, task);
		}
	}
	return tcp_tx_ctrl(tc, bhs, ahs, ahs_len, data, data_len, NULL, NULL,
			   0);
}

static int tcp_enable_datamover(struct idm_conn *conn, const uint8_t *rsp,
				const void *data, size_t data_len)
{
	struct tcp_conn *tc = tcp_conn(conn);
	int r;

	if (!tc || tc->closed)
		return -ENOTCONN;
	if (rsp) {
		/* the final Login Response still goes without digests */
		r = tcp_tx_ctrl(tc, rsp, NULL, 0, data, data_len, NULL, NULL,
				0);
		if (r < 0)
			return r;
	}
	/* (initiator: already switched when the final Login Response was
	 * delivered; read the digests again in case they were noticed late) */
	tcp_enter_ffp(tc);
	return 0;
}

static void tcp_conn_terminate(struct idm_conn *conn)
{
	struct tcp_conn *tc = tcp_conn(conn);

	if (tc)
		tcp_conn_close(tc);
}

static void tcp_conn_free(struct idm_conn *conn)
{
	tcp_conn_destroy(tcp_conn(conn));
	idm_prov_conn_set_priv(conn, NULL);
}

static void tcp_task_free(struct idm_task *task)
{
	struct tcp_conn *tc = tcp_conn(idm_task_conn(task));

	if (!tc)
		return;
	if (tcp_task(task)->task == task)
		tcp_rx_forget_task(tc, task);
	tc->role->task_release(tc, task);
}

static int tcp_notice_key_values(struct idm_conn *conn)
{
	struct tcp_conn *tc = tcp_conn(conn);

	/* The data segment limits are kept in tc: take the new ones. Other
	 * limits are read from the parameters when used; the digests switch
	 * at the end of login (tcp_enter_ffp). An initiator that notices the
	 * keys after the final Login Response, before Enable_Datamover,
	 * still gets them for what follows. Nothing to resize here: the rx
	 * buffer may be in the caller's hands inside a callback. */
	if (tc)
		tcp_conn_note_limits(tc);
	if (tc && tc->ffp && idm_prov_conn_phase(conn) == IDM_CONN_PHASE_LOGIN &&
	    !tc->target)
		tcp_enter_ffp(tc);
	return 0;
}

/* iscsi://host[:port]/target */
static const char *const tcp_schemes[] = {"iscsi", NULL};

static const struct idm_prov_ops tcp_ops = {
	.abi_version = IDM_PROV_ABI,
	.size = sizeof(struct idm_prov_ops),
	.name = "tcp",
	.description = "iSCSI over TCP (RFC 7143), CRC32C digests",
	.caps = IDM_CAP_INITIATOR | IDM_CAP_TARGET | IDM_CAP_DIGESTS |
		IDM_CAP_ZERO_COPY_RX | IDM_CAP_DATA_ACK | IDM_CAP_SCATTER_GATHER,
	.task_priv_size = sizeof(struct tcp_task),
	.init = tcp_init,
	.fini = tcp_fini,
	.listen = tcp_listen,
	.unlisten = tcp_unlisten,
	.listener_port = tcp_listener_port,
	.connect = tcp_connect,
	.send_control = tcp_send_control,
	.put_data = tcp_put_data,
	.get_data = tcp_get_data,
	.enable_datamover = tcp_enable_datamover,
	.conn_terminate = tcp_conn_terminate,
	.task_free = tcp_task_free,
	.notice_key_values = tcp_notice_key_values,
	.conn_free = tcp_conn_free,
	.adopt = tcp_adopt,
	.listen_fd = tcp_listen_fd,
	.conn_stats = tcp_tx_stats,
	.conn_move = tcp_conn_move,
	.url_schemes = tcp_schemes,
	.auto_order = IDM_PROV_AUTO_TCP, /* the fallback: reaches any address */
};

IDM_PROV_EXPORT const struct idm_prov_ops *IDM_PROV_ENTRY(void);

IDM_PROV_EXPORT const struct idm_prov_ops *IDM_PROV_ENTRY(void)
{
	return &tcp_ops;
}
