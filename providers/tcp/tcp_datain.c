/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Target Put_Data: queue the Data-In transfer of a range (the PDUs are cut
 * lazily by tcp_tx.c, and completed by tcp_txd.c once the last byte left),
 * reserve its DataSNs so a following Put_Data of the task continues the
 * numbering, and with ERL >= 1 match the DataACK SNACK to raise
 * Data_ACK_Notify.
 */
#include "tcp.h"
#include "tcp_datain.h"
#include "tcp_state.h"
#include "tcp_tx.h"
#include "tcp_txd.h"
#include "tcp_sg.h"
#include "tcp_segment.h"

#include <errno.h>
#include <string.h>

int tcp_put_data(struct idm_task *t, const uint8_t *tmpl, struct idm_buf *buf,
		 size_t buf_off, uint32_t offset, uint32_t length,
		 uint32_t flags)
{
	struct tcp_task *tt = tcp_task(t);
	struct tcp_conn *tc = tcp_conn(idm_task_conn(t));
	const struct idm_conn_params *p = tc->params;
	size_t blen = idm_buf_len(buf);
	uint32_t dsl = tc->send_dsl;
	struct tcp_txd *d;

	if (tc->closed)
		return -ENOTCONN;
	if (tt->task != t)
		return -EINVAL;
	if (!length || buf_off > blen || length > blen - buf_off ||
	    (uint64_t)offset + length > 0xffffffffu)
		return -ERANGE;
	d = tcp_txd_get(tc);
	if (!d)
		return -ENOMEM;
	d->kind = TXD_DATAIN;
	d->task = t;
	memcpy(d->tmpl, tmpl, IDM_ISCSI_BHS_LEN);
	tcp_txd_set_src(d, buf, buf_off, length);
	d->start = d->pos = 0;
	d->end = length;
	d->wire_off = offset;
	d->mbl = p->max_burst_length;
	d->datasn = tt->datain_sn;
	/* reserve the DataSNs now so a Put_Data queued behind continues */
	tt->datain_sn += tcp_seg_count(0, length, d->mbl, dsl);
	d->status = (tmpl[1] & IDM_ISCSI_DATAIN_STATUS) != 0;
	d->zc = tc->zc_min && length >= tc->zc_min; /* tcp_zc.c */
	if ((flags & IDM_PUT_ACK) && p->error_recovery_level >= 1) {
		d->ack = true;
		d->ttt = tcp_new_ttt(tc);
		tt->ack_ttt = d->ttt;
		tt->ack_wait = true;
	}
	tcp_tx_queue(tc, d);
	return 0;
}

/* The task waiting for the DataACK of that TTT: stops the walk. */
static int ack_one(struct idm_task *t, void *arg)
{
	const uint8_t *bhs = arg;
	struct tcp_task *tt = tcp_task(t);

	if (tt->task != t || !tt->ack_wait ||
	    tt->ack_ttt != idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT))
		return 0;
	tt->ack_wait = false;
	idm_prov_data_ack(t, idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET));
	return 1;
}

enum tcp_rx_verdict tcp_tgt_snack(struct tcp_conn *tc)
{
	const uint8_t *bhs = tc->rhdr;
	uint32_t ttt = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT);

	if ((bhs[1] & 0x0f) != IDM_ISCSI_SNACK_DATA_ACK)
		return TCP_RX_DELIVER; /* status/data SNACK: the caller's */
	if (idm_prov_conn_foreach_task(tc->conn, ack_one, tc->rhdr))
		return TCP_RX_DONE;
	/* RFC 7143 11.16: an invalid DataACK may be ignored or rejected */
	idm_prov_warn(tc->ctx, "tcp: DataACK SNACK with unknown TTT 0x%08x ignored",
		  ttt);
	return TCP_RX_DONE;
}
