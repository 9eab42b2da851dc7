/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Target side of the test harness: login answers, SCSI commands served
 * from the RAM disk with Put_Data / Get_Data, NOP-In replies, and the
 * record of what the target connection saw.
 */
#include "harness.h"
#include "harness_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Target                                                              */
/* ------------------------------------------------------------------ */

static struct h_ttask *tt_get(struct h *h)
{
	for (size_t i = 0; i < H_MAX_TTASKS; i++)
		if (!h->tt[i].used) {
			memset(&h->tt[i], 0, sizeof(h->tt[i]));
			h->tt[i].used = true;
			return &h->tt[i];
		}
	return NULL;
}

static void t_fill_sn(struct h *h, uint8_t *bhs, bool advance_statsn)
{
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, h->t_statsn);
	if (advance_statsn)
		h->t_statsn++;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, h->t_expcmdsn);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_MAX_CMDSN, h->t_expcmdsn + 256);
}

static void t_send_rsp(struct h *h, uint32_t itt, uint8_t status)
{
	uint8_t bhs[48] = { 0 };

	bhs[0] = IDM_ISCSI_OP_SCSI_RSP;
	bhs[1] = IDM_ISCSI_FLAG_FINAL;
	bhs[2] = IDM_ISCSI_RESPONSE_COMPLETED;
	bhs[3] = status;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, itt);
	t_fill_sn(h, bhs, true);
	/* failure here means the connection is going away; the terminate
	 * notification reports it */
	(void)idm_send_control(h->t.conn, bhs, NULL, 0, NULL, 0, NULL, 0);
}

static void t_finish(struct h *h, struct h_ttask *tt)
{
	if (tt->write || !tt->status_in_data)
		t_send_rsp(h, tt->itt, tt->status ? 0x02 : 0x00);
	idm_deallocate_task_resources(tt->task);
	tt->used = false;
}

static void t_scsi(struct h *h, idm_pdu *pdu)
{
	const uint8_t *bhs = idm_pdu_bhs(pdu);
	idm_task *task = idm_pdu_task(pdu);
	uint32_t itt = idm_iscsi_bhs_itt(bhs);
	uint32_t len = idm_iscsi_get32(bhs + IDM_ISCSI_CMD_EDTL);
	const uint8_t *cdb = bhs + IDM_ISCSI_CMD_CDB;
	uint64_t off = idm_iscsi_get64(cdb + 2);
	struct h_ttask *tt;
	uint8_t tmpl[48] = { 0 };
	int rc;

	if (!(bhs[0] & IDM_ISCSI_OP_IMMEDIATE))
		h->t_expcmdsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_CMDSN) + 1;
	if (!task) {
		h_unexpected(&h->t, "SCSI Command without a task");
		return;
	}
	h->cmd_pdu = pdu;
	if (h->cmd_hook && h->cmd_hook(h, task, bhs)) {
		h->cmd_pdu = NULL;
		return;
	}
	tt = tt_get(h);
	/* the disk is in slots; a command covers the start of one slot */
	if (!tt || (cdb[0] != H_CDB_READ && cdb[0] != H_CDB_WRITE) ||
	    len == 0 || len > h->slot_cap || off % (h->slot_cap + H_GUARD) ||
	    off / (h->slot_cap + H_GUARD) >= h->n_disk_slots) {
		h_unexpected(&h->t, "bad SCSI command: cdb 0x%02x len %u off %llu", cdb[0], len, (unsigned long long)off);
		t_send_rsp(h, itt, 0x02);
		idm_deallocate_task_resources(task);
		if (tt)
			tt->used = false;
		return;
	}
	/* skip the leading guard of the slot; the disk may be part of
	 * another harness's buffer (h_disk_share) */
	off += H_GUARD + h->disk_base;
	tt->task = task;
	tt->itt = itt;
	tt->len = len;
	tt->off = off;
	tt->write = cdb[0] == H_CDB_WRITE;
	idm_task_set_arg(task, tt);
	h->t_cmds++;
	memcpy(tmpl + IDM_ISCSI_BHS_LUN, bhs + IDM_ISCSI_BHS_LUN, 8);
	idm_iscsi_put32(tmpl + IDM_ISCSI_BHS_ITT, itt);
	if (tt->write) {
		tmpl[0] = IDM_ISCSI_OP_R2T;
		tmpl[1] = IDM_ISCSI_FLAG_FINAL;
		t_fill_sn(h, tmpl, false);
		if (h->split_get && len > 1) {
			/* two ranges, the second asked for from the first's
			 * completion: immediate and unsolicited data past the
			 * first range wait in libidm's staging meanwhile
			 * (one Get_Data at a time per task: the TCP provider
			 * answers -EBUSY to a second concurrent one) */
			uint32_t part = len / 3 + 1;

			memcpy(tt->r2t, tmpl, sizeof(tt->r2t));
			tt->split_at = part;
			tt->pending = 2;
			rc = idm_get_data(task, tmpl, h->disk_buf, off, 0, part, 0);
			if (rc < 0)
				goto fail;
			return;
		}
		tt->pending = 1;
		if (h->get_later) {
			memcpy(tt->r2t, tmpl, sizeof(tt->r2t));
			h->later = tt;
			return;
		}
		rc = idm_get_data(task, tmpl, h->disk_buf, off, 0, len, 0);
		if (rc < 0)
			goto fail;
		if (h->after_get_hook)
			(void)h->after_get_hook(h, task, bhs);
		h->cmd_pdu = NULL;
		return;
	}
	tmpl[0] = IDM_ISCSI_OP_DATA_IN;
	switch (h->status_mode) {
	case H_STATUS_SEPARATE:
		tt->status_in_data = false;
		break;
	case H_STATUS_IN_DATA:
		tt->status_in_data = true;
		break;
	default:
		tt->status_in_data = h->t_cmds & 1;
		break;
	}
	if (h->split_put && len > 1) {
		uint32_t half = len / 2;

		t_fill_sn(h, tmpl, false);
		tt->pending = 2;
		rc = idm_put_data(task, tmpl, h->disk_buf, off, 0, half, 0);
		if (rc < 0)
			goto fail;
		if (tt->status_in_data) {
			tmpl[1] = IDM_ISCSI_FLAG_FINAL | IDM_ISCSI_DATAIN_STATUS;
			t_fill_sn(h, tmpl, true);
		}
		rc = idm_put_data(task, tmpl, h->disk_buf, off + half, half,
				  len - half, 0);
		if (rc < 0) {
			h_set_err(h, "target: second Put_Data [%u, +%u) of %u: %s",
				half, len - half, len, idm_strerror(rc));
			h_unexpected(&h->t, "%s", h->err);
			/* the first half is in flight; let it finish */
			tt->pending = 1;
			tt->status = rc;
		}
		return;
	}
	if (tt->status_in_data) {
		tmpl[1] = IDM_ISCSI_FLAG_FINAL | IDM_ISCSI_DATAIN_STATUS;
		t_fill_sn(h, tmpl, true);
	} else {
		t_fill_sn(h, tmpl, false);
	}
	tt->pending = 1;
	rc = idm_put_data(task, tmpl, h->disk_buf, off, 0, len, 0);
	if (rc < 0)
		goto fail;
	return;
fail:
	h_set_err(h, "target: %s failed: %s", tt->write ? "Get_Data" : "Put_Data",
		idm_strerror(rc));
	h_unexpected(&h->t, "%s", h->err);
	tt->status = rc;
	tt->status_in_data = false;
	t_finish(h, tt);
}

int h_tgt_get_later(struct h *h)
{
	struct h_ttask *tt = h->later;
	int rc;

	if (!tt)
		return -ENOENT;
	h->later = NULL;
	rc = idm_get_data(tt->task, tt->r2t, h->disk_buf, tt->off, 0, tt->len, 0);
	if (rc < 0) {
		tt->status = rc;
		tt->pending = 0;
		t_finish(h, tt);
	}
	return rc;
}

static void t_login(struct h *h, idm_pdu *pdu)
{
	const uint8_t *bhs = idm_pdu_bhs(pdu);
	size_t dlen = 0;
	const uint8_t *d = idm_pdu_data(pdu, &dlen);
	uint8_t rsp[48] = { 0 };
	char keys[1024];
	size_t klen;
	uint32_t ini_mrdsl = 0;
	int rc;

	rsp[0] = IDM_ISCSI_OP_LOGIN_RSP;
	memcpy(rsp + 8, bhs + 8, 6); /* ISID */
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_ITT, idm_iscsi_bhs_itt(bhs));
	h->t_expcmdsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_CMDSN);
	h->t_statsn = 0x1000;
	if (bhs[1] != (IDM_ISCSI_LOGIN_TRANSIT | (IDM_ISCSI_STAGE_OPERATIONAL << 2) |
		       IDM_ISCSI_STAGE_FULL_FEATURE) ||
	    h_parse_keys(d, dlen, &h->tneg, &ini_mrdsl) < 0) {
		/* we only know the operational stage straight to FFP */
		h_unexpected(&h->t, "login request refused");
		rsp[36] = 0x02; /* initiator error */
		rsp[37] = 0x00;
		t_fill_sn(h, rsp, true);
		(void)idm_send_control(h->t.conn, rsp, NULL, 0, NULL, 0, NULL, 0);
		return;
	}
	h->tneg.ini_mrdsl = ini_mrdsl;
	h->tneg.tgt_mrdsl = h->p.tgt_mrdsl;
	h->t_ini_mrdsl = ini_mrdsl;
	rsp[1] = bhs[1];
	idm_iscsi_put16(rsp + 14, 1); /* TSIH */
	t_fill_sn(h, rsp, true);
	klen = h_login_keys(&h->tneg, false, keys, sizeof(keys));
	idm_iscsi_bhs_set_data_len(rsp, (uint32_t)klen);
	{
		char nk[512];
		size_t nlen = h_notice_keys(&h->tneg, nk, sizeof(nk));

		rc = idm_notice_key_values(h->t.conn, nk, nlen);
		if (rc < 0) {
			h_set_err(h, "target notice_key_values: %s", idm_strerror(rc));
			h_unexpected(&h->t, "%s", h->err);
			return;
		}
	}
	rc = idm_enable_datamover(h->t.conn, rsp, keys, klen);
	if (rc < 0) {
		h_set_err(h, "target enable_datamover: %s", idm_strerror(rc));
		h_unexpected(&h->t, "%s", h->err);
		return;
	}
	h->t.ffp = true;
}

static void t_nop(struct h *h, idm_pdu *pdu)
{
	const uint8_t *bhs = idm_pdu_bhs(pdu);
	uint8_t rsp[48] = { 0 };
	size_t dlen = 0;
	const uint8_t *d = idm_pdu_data(pdu, &dlen);
	size_t alen = 0;
	const uint8_t *ahs = idm_pdu_ahs(pdu, &alen);

	/* keep the AHS for tests that check it is handed over intact */
	h->t.ahs_len = ahs ? alen : 0;
	if (ahs)
		memcpy(h->t.ahs, ahs, alen < sizeof(h->t.ahs) ? alen : sizeof(h->t.ahs));
	if (!(bhs[0] & IDM_ISCSI_OP_IMMEDIATE))
		h->t_expcmdsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_CMDSN) + 1;
	if (h->terminate_on_nop) {
		/* Connection_Terminate from inside the connection's own
		 * control_notify: allowed, and nothing may follow */
		idm_connection_terminate(h->t.conn);
		h->t.terminated_by_us = true;
		return;
	}
	if (h->destroy_on_nop) {
		/* since 1.2 idm_conn_destroy() is allowed here too: the
		 * library frees the connection after this pass */
		idm_conn_destroy(h->t.conn);
		h->t.conn = NULL;
		h->t.terminated_by_us = true;
		return;
	}
	if (idm_iscsi_bhs_itt(bhs) == IDM_ISCSI_RESERVED_TAG)
		return; /* a NOP-Out answering nothing needs no reply */
	rsp[0] = IDM_ISCSI_OP_NOP_IN;
	rsp[1] = IDM_ISCSI_FLAG_FINAL;
	memcpy(rsp + IDM_ISCSI_BHS_LUN, bhs + IDM_ISCSI_BHS_LUN, 8);
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_ITT, idm_iscsi_bhs_itt(bhs));
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_TTT, IDM_ISCSI_RESERVED_TAG);
	t_fill_sn(h, rsp, true);
	(void)idm_send_control(h->t.conn, rsp, NULL, 0, d, d ? dlen : 0, NULL, 0);
}

/* A well-framed PDU libidm hands up with no task because it matches
 * nothing (doc/api.md 7.1): answer as an iSCSI target does, with a Reject
 * carrying its BHS (RFC 7143 11.17). false: not such a PDU. */
static bool t_reject(struct h *h, idm_pdu *pdu)
{
	uint8_t op = idm_pdu_opcode(pdu), rsp[48] = { 0 }, reason;

	if (idm_pdu_task(pdu))
		return false;
	if (op == IDM_ISCSI_OP_DATA_OUT)
		reason = IDM_ISCSI_REJECT_INVALID_PDU_FIELD;
	else if (op & 0x20 || op == IDM_ISCSI_OP_LOGIN_REQ)
		reason = IDM_ISCSI_REJECT_PROTOCOL_ERROR; /* the target's own */
	else if (op <= IDM_ISCSI_OP_LOGOUT_REQ || op == IDM_ISCSI_OP_SNACK_REQ)
		return false; /* an initiator opcode the harness does not use */
	else
		reason = IDM_ISCSI_REJECT_CMD_NOT_SUPPORTED; /* unassigned */
	rsp[0] = IDM_ISCSI_OP_REJECT;
	rsp[1] = IDM_ISCSI_FLAG_FINAL;
	rsp[2] = reason;
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_ITT, IDM_ISCSI_RESERVED_TAG);
	t_fill_sn(h, rsp, true);
	h->t.rejects++;
	h->t.reject_reason = reason;
	(void)idm_send_control(h->t.conn, rsp, NULL, 0, idm_pdu_bhs(pdu), 48,
			       NULL, 0);
	return true;
}

static void t_control_body(idm_conn *conn, idm_pdu *pdu, void *arg)
{
	struct h *h = arg;

	h_side_alive(&h->t);
	h->t.control_count++;
	h->t.last_opcode = idm_pdu_opcode(pdu);
	switch (idm_pdu_opcode(pdu)) {
	case IDM_ISCSI_OP_LOGIN_REQ:
		t_login(h, pdu);
		break;
	case IDM_ISCSI_OP_SCSI_CMD:
		t_scsi(h, pdu);
		h->cmd_pdu = NULL; /* valid only during the callback */
		break;
	case IDM_ISCSI_OP_NOP_OUT:
		t_nop(h, pdu);
		break;
	default:
		if (t_reject(h, pdu))
			break;
		h_unexpected(&h->t, "PDU opcode 0x%02x", idm_pdu_opcode(pdu));
		if (idm_pdu_task(pdu))
			idm_deallocate_task_resources(idm_pdu_task(pdu));
		break;
	}
}

static void t_completion_body(idm_task *task, enum idm_data_dir dir,
			      uint32_t offset, uint32_t length, uint32_t sn,
			      int status, void *arg)
{
	struct h *h = arg;
	struct h_ttask *tt = idm_task_get_arg(task);

	if (h->completion_hook)
		h->completion_hook(h, task, dir);
	h_side_alive(&h->t);
	h->t.completion_count++;
	if (status < 0)
		h->t.completion_errors++;
	if (!tt || !tt->used || tt->task != task || tt->pending <= 0) {
		h_unexpected(&h->t, "completion for an unknown task (itt 0x%x, dir %d, [%u, +%u), sn %u, status %d)",
			     idm_task_itt(task), (int)dir, offset, length, sn, status);
		return;
	}
	if ((dir == IDM_DATA_OUT) != tt->write)
		h_unexpected(&h->t, "completion in the wrong direction");
	if (status < 0 && !tt->status) {
		tt->status = status;
		h_unexpected(&h->t, "data_completion_notify(%s [%u, +%u)) failed: %s",
			     dir == IDM_DATA_IN ? "in" : "out", offset, length,
			     idm_strerror(status));
	}
	if (--tt->pending == 0) {
		t_finish(h, tt);
	} else if (tt->write && tt->split_at && !tt->status) {
		/* the second half of a split Get_Data, from the completion */
		int rc = idm_get_data(task, tt->r2t, h->disk_buf,
				      tt->off + tt->split_at, tt->split_at,
				      tt->len - tt->split_at, 0);

		tt->split_at = 0;
		if (rc < 0) {
			h_set_err(h, "target: second Get_Data: %s", idm_strerror(rc));
			h_unexpected(&h->t, "%s", h->err);
			tt->status = rc;
			tt->pending = 0;
			t_finish(h, tt);
		}
	}
}

static void t_data_ack_body(idm_task *task, uint32_t datasn, void *arg)
{
	struct h *h = arg;

	h_side_alive(&h->t);
	h->t.ack_count++;
	h->t.ack_datasn = datasn;
}

static void t_terminated_body(idm_conn *conn, int reason, void *arg)
{
	struct h *h = arg;

	h_side_terminated(&h->t, conn, reason);
	/* The provider let go of the tasks; they are ours to end. */
	for (size_t i = 0; i < H_MAX_TTASKS; i++)
		if (h->tt[i].used) {
			idm_deallocate_task_resources(h->tt[i].task);
			h->tt[i].used = false;
		}
	if (h->destroy_in_notify) {
		/* the one callback that may destroy its own connection */
		idm_conn_destroy(conn);
		h->t.conn = NULL;
	}
	if (h->free_on_terminate && h->disk_buf) {
		/* every buffer is ours again at notify time: free the disk
		 * now, so a late provider access is a use after free */
		idm_buf_destroy(h->disk_buf);
		h->disk_buf = NULL;
		free(h->disk);
		h->disk = NULL;
		h->n_disk_slots = 0;
	}
}

/* With the progress thread the callbacks run on it: serialise them with
 * the test's thread through h->mu (no-op otherwise). */
static void t_control(idm_conn *conn, idm_pdu *pdu, void *arg)
{
	h_lock(arg);
	t_control_body(conn, pdu, arg);
	h_unlock(arg);
}

static void t_completion(idm_task *task, enum idm_data_dir dir,
			 uint32_t offset, uint32_t length, uint32_t sn,
			 int status, void *arg)
{
	h_lock(arg);
	t_completion_body(task, dir, offset, length, sn, status, arg);
	h_unlock(arg);
}

static void t_data_ack(idm_task *task, uint32_t datasn, void *arg)
{
	h_lock(arg);
	t_data_ack_body(task, datasn, arg);
	h_unlock(arg);
}

static void t_terminated(idm_conn *conn, int reason, void *arg)
{
	h_lock(arg);
	t_terminated_body(conn, reason, arg);
	h_unlock(arg);
}

const struct idm_conn_cbs h_t_cbs = {
	.size = sizeof(struct idm_conn_cbs),
	.control_notify = t_control,
	.data_completion_notify = t_completion,
	.data_ack_notify = t_data_ack,
	.connection_terminate_notify = t_terminated,
};

int h_target_accept(idm_portal *portal, idm_conn *conn, void *arg)
{
	struct h *h = arg;
	int rc = 0;

	h_lock(h);
	if (h->t.conn)
		rc = -EBUSY; /* one connection per harness */
	else
		rc = idm_conn_set_cbs(conn, &h_t_cbs, h);
	if (rc == 0)
		h->t.conn = conn;
	h_unlock(h);
	return rc;
}
