/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SCSI commands over the session: a fixed array of command slots (no
 * allocation per I/O), CDB builders, submission through a libidm task,
 * and completion from the SCSI Response or the Data-In carrying status.
 */
#include "initiator.h"

#include "ex_log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ITT of a SCSI command: bit 31 clear (session.c uses it for the rest),
 * a 15-bit generation so a late response to a reused slot is caught, and
 * the slot index. */
#define ITT_IDX(itt)  ((itt)&0xffffu)
#define ITT_GEN_SHIFT 16
#define ITT_GEN_MASK  0x7fffu

struct ini_cmd *ini_cmd_get(struct ini_session *s)
{
	struct ini_cmd *c = s->free_cmds;

	if (!c)
		return NULL;
	s->free_cmds = c->next_free;
	c->next_free = NULL;
	c->busy = true;
	c->done = false;
	c->task = NULL;
	c->dir = 0;
	c->buf = NULL;
	c->buf_off = 0;
	c->len = 0;
	c->lun = 0;
	c->done_fn = NULL;
	c->arg = NULL;
	memset(c->cdb, 0, sizeof(c->cdb));
	return c;
}

void ini_cmd_put(struct ini_cmd *c)
{
	struct ini_session *s = c->s;

	if (!c->busy)
		return;
	if (c->retry) {
		c->retry = false;
		s->nretry--;
	}
	if (c->submitted) {
		/* still in flight: it must not outlive the slot */
		if (c->task)
			idm_deallocate_task_resources(c->task);
		c->task = NULL;
		c->submitted = false;
		s->inflight--;
	}
	c->busy = false;
	c->next_free = s->free_cmds;
	s->free_cmds = c;
}

bool ini_cmd_window_open(const struct ini_session *s)
{
	return idm_iscsi_sn_le(s->cmdsn, s->max_cmdsn);
}

uint64_t ini_lun_encode(int lun)
{
	/* SAM-5 4.7: peripheral addressing below 256, flat space above */
	if (lun < 256)
		return (uint64_t)lun << 48;
	return (uint64_t)(0x4000u | ((unsigned)lun & 0x3fffu)) << 48;
}

/* Park a command until the session is back (ini_session_poll resubmits). */
static int queue_retry(struct ini_cmd *c)
{
	if (!c->retry) {
		c->retry = true;
		c->s->nretry++;
	}
	return 0;
}

/* A libidm task for c with its data buffer: 0, -ENOTCONN when the
 * connection failed already, or another -errno. */
static int cmd_task(struct ini_cmd *c, idm_task **task)
{
	int rc = idm_task_create(c->s->conn, c->itt, task);

	if (rc < 0)
		return rc;
	if (c->dir == IDM_DATA_IN)
		rc = idm_task_set_data(*task, c->buf, c->buf_off, c->len, NULL,
				       0, 0);
	else if (c->dir == IDM_DATA_OUT)
		rc = idm_task_set_data(*task, NULL, 0, 0, c->buf, c->buf_off,
				       c->len);
	if (rc < 0) {
		idm_deallocate_task_resources(*task);
		return rc;
	}
	idm_task_set_arg(*task, c);
	return 0;
}

/* The SCSI Command PDU (RFC 7143 11.3), a simple task. */
static void cmd_bhs(const struct ini_cmd *c, uint8_t *bhs)
{
	const struct ini_session *s = c->s;

	memset(bhs, 0, IDM_BHS_LEN);
	bhs[IDM_ISCSI_BHS_OPCODE] = IDM_ISCSI_OP_SCSI_CMD;
	bhs[IDM_ISCSI_BHS_FLAGS] =
		IDM_ISCSI_FLAG_FINAL | IDM_ISCSI_ATTR_SIMPLE |
		(c->dir == IDM_DATA_IN ? IDM_ISCSI_CMD_READ : 0) |
		(c->dir == IDM_DATA_OUT ? IDM_ISCSI_CMD_WRITE : 0);
	idm_iscsi_put64(bhs + IDM_ISCSI_BHS_LUN, c->lun);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, c->itt);
	idm_iscsi_put32(bhs + IDM_ISCSI_CMD_EDTL, c->dir ? c->len : 0);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, s->cmdsn);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, s->exp_statsn);
	memcpy(bhs + IDM_ISCSI_CMD_CDB, c->cdb, sizeof(c->cdb));
}

/* The result fields of c, cleared for this submission. */
static void cmd_reset_result(struct ini_cmd *c)
{
	c->done = false;
	c->result = 0;
	c->status = c->response = c->rsp_flags = 0;
	c->residual = 0;
	c->sense_len = 0;
	c->data_received = 0;
	c->t_sent_ns = ini_now_ns();
}

/* Sent: in flight, no longer waiting for a retry, one CmdSN used. */
static void cmd_sent(struct ini_cmd *c)
{
	struct ini_session *s = c->s;

	if (c->retry) {
		c->retry = false;
		s->nretry--;
	}
	c->submitted = true;
	s->inflight++;
	s->cmdsn++;
}

int ini_cmd_submit(struct ini_cmd *c)
{
	struct ini_session *s = c->s;
	uint8_t bhs[IDM_BHS_LEN];
	idm_task *task;
	int rc;

	if (!c->retry)
		c->t_start_ns = ini_now_ns();
	if (s->state == INI_S_RECOVERING)
		return queue_retry(c);
	if (s->state != INI_S_FFP)
		return s->state == INI_S_FAILED ? s->fail : -ENOTCONN;
	if (!ini_cmd_window_open(s))
		return -EAGAIN;
	c->itt = ((s->itt_gen++ & ITT_GEN_MASK) << ITT_GEN_SHIFT) | c->idx;
	rc = cmd_task(c, &task);
	if (rc == -ENOTCONN) /* failed; its notify is on the way */
		return queue_retry(c);
	if (rc < 0)
		return rc;
	cmd_bhs(c, bhs);
	c->task = task;
	cmd_reset_result(c);
	rc = idm_send_control(s->conn, bhs, NULL, 0, NULL, 0, task, 0);
	if (rc < 0) {
		/* "A call that fails raises no callback": the task is ours */
		idm_deallocate_task_resources(task);
		c->task = NULL;
		if (rc == -ENOTCONN)
			return queue_retry(c);
		return rc;
	}
	cmd_sent(c);
	return 0;
}

static void complete(struct ini_cmd *c, int result)
{
	struct ini_session *s = c->s;

	c->result = result;
	c->done = true;
	c->submitted = false;
	s->inflight--;
	c->data_received = idm_task_data_received(c->task);
	idm_deallocate_task_resources(c->task);
	c->task = NULL;
	if (c->done_fn)
		c->done_fn(c);
}

/* SenseLength, then sense data (RFC 7143 11.4.7.2), as much as fits. */
static int take_sense(struct ini_session *s, struct ini_cmd *c,
		      const uint8_t *data, size_t len)
{
	uint32_t sl = idm_iscsi_get16(data);

	if (sl > len - 2) {
		ini_session_set_failed(s, -EPROTO,
				       "SenseLength %u beyond a %zu-byte segment",
				       sl, len);
		return -EPROTO;
	}
	if (sl > sizeof(c->sense))
		sl = sizeof(c->sense);
	memcpy(c->sense, data + 2, sl);
	c->sense_len = sl;
	return 0;
}

/* Never trust the wire: an ITT must name a command in flight. */
static bool itt_in_flight(const struct ini_session *s, uint32_t itt)
{
	uint32_t idx = ITT_IDX(itt);

	return !(itt & INI_ITT_CONTROL) && idx < s->ncmds &&
	       s->cmds[idx].submitted && s->cmds[idx].itt == itt &&
	       s->cmds[idx].task;
}

/* The command a SCSI Response or a Data-In with status completes, or
 * NULL after failing the session. */
static struct ini_cmd *rsp_command(struct ini_session *s, idm_pdu *pdu,
				   const uint8_t *bhs)
{
	uint32_t itt = idm_iscsi_bhs_itt(bhs);
	uint8_t op = idm_iscsi_bhs_opcode(bhs);
	struct ini_cmd *c;

	if (!itt_in_flight(s, itt)) {
		ini_session_set_failed(s, -EPROTO,
				       "opcode 0x%02x for unknown ITT 0x%08x",
				       op, itt);
		return NULL;
	}
	c = &s->cmds[ITT_IDX(itt)];
	if (idm_pdu_task(pdu) && idm_pdu_task(pdu) != c->task) {
		ini_session_set_failed(s, -EPROTO,
				       "ITT 0x%08x names another task", itt);
		return NULL;
	}
	if (op == IDM_ISCSI_OP_DATA_IN &&
	    !(bhs[IDM_ISCSI_BHS_FLAGS] & IDM_ISCSI_DATAIN_STATUS)) {
		/* the provider places Data-In; only status reaches us */
		ini_session_set_failed(s, -EPROTO,
				       "Data-In without status delivered");
		return NULL;
	}
	return c;
}

void ini_scsi_rsp(struct ini_session *s, idm_pdu *pdu, const uint8_t *bhs)
{
	struct ini_cmd *c = rsp_command(s, pdu, bhs);
	const uint8_t *data;
	size_t len = 0;

	if (!c)
		return;
	ini_session_update_sn(s, bhs, true);
	c->rsp_flags = bhs[IDM_ISCSI_BHS_FLAGS];
	c->status = bhs[IDM_ISCSI_BHS_STATUS];
	c->residual = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_RESIDUAL);
	if (idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_SCSI_RSP) {
		c->response = bhs[IDM_ISCSI_BHS_RESPONSE];
		data = idm_pdu_data(pdu, &len);
		if (data && len >= 2 && take_sense(s, c, data, len) < 0)
			return;
	}
	if (c->response != IDM_ISCSI_RESPONSE_COMPLETED || c->status != 0)
		complete(c, -EIO);
	else
		complete(c, 0);
}

bool ini_scsi_rejected(struct ini_session *s, uint32_t itt)
{
	uint32_t idx = ITT_IDX(itt);

	if (!itt_in_flight(s, itt))
		return false;
	/* RFC 7143 11.17.1: a rejected command gets no response; the
	 * target never started it, so its task can go at once */
	complete(&s->cmds[idx], -EPROTO);
	return true;
}

void ini_cmd_fail_all(struct ini_session *s, int err)
{
	for (uint32_t i = 0; i < s->ncmds; i++) {
		struct ini_cmd *c = &s->cmds[i];

		if (!c->busy || (!c->submitted && !c->retry))
			continue;
		if (c->retry) {
			c->retry = false;
			s->nretry--;
		} else {
			/* the connection is gone: libidm already let go of
			 * the task, and idm_conn_destroy() frees it */
			c->task = NULL;
			c->submitted = false;
			s->inflight--;
		}
		c->result = err;
		c->done = true;
		if (c->done_fn)
			c->done_fn(c);
	}
}

/* ------------------------------------------------------------------ */
/* CDBs (SBC-3, SPC-4)                                                 */
/* ------------------------------------------------------------------ */

const char *ini_cdb_name(uint8_t op)
{
	switch (op) {
	case INI_OP_TEST_UNIT_READY: return "TEST UNIT READY";
	case INI_OP_INQUIRY: return "INQUIRY";
	case INI_OP_READ10: return "READ(10)";
	case INI_OP_WRITE10: return "WRITE(10)";
	case INI_OP_READ16: return "READ(16)";
	case INI_OP_WRITE16: return "WRITE(16)";
	case INI_OP_SERVICE_ACTION_IN16: return "READ CAPACITY(16)";
	case INI_OP_REPORT_LUNS: return "REPORT LUNS";
	default: return "SCSI command";
	}
}

/* CDB fields (SBC-3 5.11, 5.13, 5.16; SPC-4 6.6, 6.33) */
#define CDB_OPCODE            0
#define CDB_SERVICE_ACTION    1
#define CDB_RW_LBA            2  /* 4 bytes in (10), 8 in (16) */
#define CDB_RW10_LENGTH       7  /* 2 bytes */
#define CDB_RW16_LENGTH       10 /* 4 bytes */
#define CDB_INQUIRY_ALLOC     3  /* 2 bytes */
#define CDB_REPORT_LUNS_ALLOC 6  /* 4 bytes */
#define CDB_SAI16_ALLOC       10 /* 4 bytes */
#define SA_READ_CAPACITY16    0x10 /* of SERVICE ACTION IN(16) */

void ini_cdb_rw(struct ini_cmd *c, bool write, uint64_t lba, uint32_t blocks,
		bool use16)
{
	memset(c->cdb, 0, sizeof(c->cdb));
	if (!use16 && lba <= 0xffffffffull && blocks <= 0xffff) {
		c->cdb[CDB_OPCODE] = write ? INI_OP_WRITE10 : INI_OP_READ10;
		idm_iscsi_put32(c->cdb + CDB_RW_LBA, (uint32_t)lba);
		idm_iscsi_put16(c->cdb + CDB_RW10_LENGTH, (uint16_t)blocks);
	} else {
		c->cdb[CDB_OPCODE] = write ? INI_OP_WRITE16 : INI_OP_READ16;
		idm_iscsi_put64(c->cdb + CDB_RW_LBA, lba);
		idm_iscsi_put32(c->cdb + CDB_RW16_LENGTH, blocks);
	}
	c->dir = write ? IDM_DATA_OUT : IDM_DATA_IN;
}

uint64_t ini_cdb_lba(const struct ini_cmd *c)
{
	/* READ/WRITE(10) carry a 32-bit LBA, the (16) forms a 64-bit one */
	if (c->cdb[CDB_OPCODE] == INI_OP_READ10 ||
	    c->cdb[CDB_OPCODE] == INI_OP_WRITE10)
		return idm_iscsi_get32(c->cdb + CDB_RW_LBA);
	return idm_iscsi_get64(c->cdb + CDB_RW_LBA);
}

void ini_cdb_inquiry(struct ini_cmd *c, uint16_t alloc)
{
	memset(c->cdb, 0, sizeof(c->cdb));
	c->cdb[CDB_OPCODE] = INI_OP_INQUIRY;
	idm_iscsi_put16(c->cdb + CDB_INQUIRY_ALLOC, alloc);
	c->dir = IDM_DATA_IN;
	c->len = alloc;
}

void ini_cdb_report_luns(struct ini_cmd *c, uint32_t alloc)
{
	memset(c->cdb, 0, sizeof(c->cdb));
	c->cdb[CDB_OPCODE] = INI_OP_REPORT_LUNS;
	idm_iscsi_put32(c->cdb + CDB_REPORT_LUNS_ALLOC, alloc);
	c->dir = IDM_DATA_IN;
	c->len = alloc;
}

void ini_cdb_read_capacity16(struct ini_cmd *c, uint32_t alloc)
{
	memset(c->cdb, 0, sizeof(c->cdb));
	c->cdb[CDB_OPCODE] = INI_OP_SERVICE_ACTION_IN16;
	c->cdb[CDB_SERVICE_ACTION] = SA_READ_CAPACITY16;
	idm_iscsi_put32(c->cdb + CDB_SAI16_ALLOC, alloc);
	c->dir = IDM_DATA_IN;
	c->len = alloc;
}

void ini_cdb_test_unit_ready(struct ini_cmd *c)
{
	memset(c->cdb, 0, sizeof(c->cdb));
	c->dir = 0;
	c->len = 0;
}

/* Sense data (SPC-4 4.5): the response code (0x70/0x71 fixed format,
 * 0x72/0x73 descriptor format) says where key, ASC and ASCQ are. */
#define SENSE_CODE_MASK  0x7e
#define SENSE_FIXED      0x70
#define SENSE_DESC       0x72
#define SENSE_KEY_MASK   0x0f
#define SENSE_FIXED_KEY  2
#define SENSE_FIXED_ASC  12
#define SENSE_FIXED_ASCQ 13
#define SENSE_DESC_KEY   1
#define SENSE_DESC_ASC   2
#define SENSE_DESC_ASCQ  3

static uint8_t sense_format(const struct ini_cmd *c)
{
	return c->sense[0] & SENSE_CODE_MASK;
}

int ini_cmd_sense_key(const struct ini_cmd *c)
{
	if (sense_format(c) == SENSE_FIXED)
		return c->sense[SENSE_FIXED_KEY] & SENSE_KEY_MASK;
	if (sense_format(c) == SENSE_DESC)
		return c->sense[SENSE_DESC_KEY] & SENSE_KEY_MASK;
	return -1;
}

const char *ini_cmd_strerror(const struct ini_cmd *c, char *buf, size_t len)
{
	if (c->result == 0) {
		snprintf(buf, len, "GOOD");
	} else if (c->response != IDM_ISCSI_RESPONSE_COMPLETED) {
		snprintf(buf, len, "iSCSI response 0x%02x (target failure)",
			 c->response);
	} else if (c->status == INI_STATUS_CHECK_CONDITION &&
		   c->sense_len >= SENSE_FIXED_ASCQ + 1 &&
		   sense_format(c) == SENSE_FIXED) {
		snprintf(buf, len,
			 "CHECK CONDITION, sense key 0x%x ASC 0x%02x ASCQ "
			 "0x%02x",
			 ini_cmd_sense_key(c), c->sense[SENSE_FIXED_ASC],
			 c->sense[SENSE_FIXED_ASCQ]);
	} else if (c->status == INI_STATUS_CHECK_CONDITION &&
		   c->sense_len >= SENSE_DESC_ASCQ + 1 &&
		   sense_format(c) == SENSE_DESC) {
		snprintf(buf, len,
			 "CHECK CONDITION, sense key 0x%x ASC 0x%02x ASCQ "
			 "0x%02x",
			 ini_cmd_sense_key(c), c->sense[SENSE_DESC_ASC],
			 c->sense[SENSE_DESC_ASCQ]);
	} else if (c->status) {
		snprintf(buf, len, "SCSI status 0x%02x", c->status);
	} else {
		snprintf(buf, len, "%s", idm_strerror(c->result));
	}
	return buf;
}
