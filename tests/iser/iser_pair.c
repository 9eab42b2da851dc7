/* SPDX-License-Identifier: BSD-2-Clause */
/* The in-process iSER initiator/target pair of the RDMA tests (iser_pair.h). */
#include "iser_pair.h"
#include <libidm/keys.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void set_err(struct pair *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_err(struct pair *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
}

double p_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void p_pattern(uint8_t *b, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = (uint8_t)x;
	}
}

void p_keys_default(struct p_keys *k)
{
	k->immediate_data = IDM_ISCSI_DEFAULT_IMMEDIATE_DATA;
	k->initial_r2t = IDM_ISCSI_DEFAULT_INITIAL_R2T;
	k->first_burst = IDM_ISCSI_DEFAULT_FIRST_BURST_LENGTH;
	k->max_burst = IDM_ISCSI_DEFAULT_MAX_BURST_LENGTH;
	k->ini_rdsl = IDM_ISER_DEFAULT_INITIATOR_RECV_DATA_SEGMENT_LENGTH;
	k->tgt_rdsl = IDM_ISER_DEFAULT_TARGET_RECV_DATA_SEGMENT_LENGTH;
	k->erl = IDM_ISCSI_DEFAULT_ERROR_RECOVERY_LEVEL;
}

static const char hello_key[] = P_HELLO_KEY;

static void kv_add(struct pair *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void kv_add(struct pair *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(p->kv + p->kv_len, sizeof(p->kv) - p->kv_len, fmt, ap);
	va_end(ap);
	if (n > 0 && p->kv_len + (size_t)n + 1 < sizeof(p->kv))
		p->kv_len += (size_t)n + 1;
}

static void build_kv(struct pair *p, bool rdma)
{
	const struct p_keys *k = &p->k;

	p->kv_len = 0;
	if (rdma)
		kv_add(p, "RDMAExtensions=Yes");
	kv_add(p, "HeaderDigest=None");
	kv_add(p, "DataDigest=None");
	kv_add(p, "ImmediateData=%s", k->immediate_data ? "Yes" : "No");
	kv_add(p, "InitialR2T=%s", k->initial_r2t ? "Yes" : "No");
	kv_add(p, "FirstBurstLength=%u", k->first_burst);
	kv_add(p, "MaxBurstLength=%u", k->max_burst);
	kv_add(p, "InitiatorRecvDataSegmentLength=%u", k->ini_rdsl);
	kv_add(p, "TargetRecvDataSegmentLength=%u", k->tgt_rdsl);
	kv_add(p, "ErrorRecoveryLevel=%d", k->erl);
	kv_add(p, "MaxOutstandingUnexpectedPDUs=0");
}

/* ---- target ------------------------------------------------------------ */

static void t_send_rsp(struct pair *p, idm_task *t)
{
	uint8_t rsp[48] = {0};
	int r;

	rsp[0] = IDM_ISCSI_OP_SCSI_RSP;
	rsp[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_ITT, idm_task_itt(t));
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_CMDSN, p->statsn++);
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_EXP_STATSN, p->cmdsn);
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_MAX_CMDSN, p->cmdsn + 64);
	r = idm_send_control(p->tc, rsp, NULL, 0, NULL, 0, NULL, 0);
	if (r < 0)
		set_err(p, "target: send SCSI Response: %s", idm_strerror(r));
}

static void t_login(struct pair *p, idm_conn *c, const uint8_t *req)
{
	uint8_t rsp[48] = {0};
	int r;

	rsp[0] = IDM_ISCSI_OP_LOGIN_RSP;
	rsp[1] = IDM_ISCSI_LOGIN_TRANSIT | (IDM_ISCSI_STAGE_OPERATIONAL << 2) |
		 IDM_ISCSI_STAGE_FULL_FEATURE;
	memcpy(rsp + 8, req + 8, 6);          /* ISID */
	idm_iscsi_put16(rsp + 14, 1);             /* TSIH */
	memcpy(rsp + 16, req + 16, 4);        /* ITT */
	idm_iscsi_put32(rsp + 24, p->statsn++);
	idm_iscsi_put32(rsp + 28, idm_iscsi_get32(req + 24));
	idm_iscsi_put32(rsp + 32, idm_iscsi_get32(req + 24) + 64);
	r = idm_notice_key_values(c, p->kv, p->kv_len);
	if (r == 0 && p->hello)
		r = idm_notice_key_values(c, hello_key, sizeof(hello_key));
	if (r == 0)
		r = idm_allocate_connection_resources(c);
	if (r == 0)
		r = idm_enable_datamover(c, rsp, p->kv, p->kv_len);
	if (r < 0)
		set_err(p, "target login: %s", idm_strerror(r));
	else
		p->t_ffp = true;
}

static void t_cmd(struct pair *p, idm_pdu *pdu)
{
	const uint8_t *bhs = idm_pdu_bhs(pdu);
	idm_task *t = idm_pdu_task(pdu);
	uint32_t len = idm_iscsi_get32(bhs + IDM_ISCSI_CMD_EDTL);
	uint8_t tmpl[48] = {0};
	idm_buf *buf = p->disk_buf;
	size_t off = P_GUARD;
	int r;

	if (!t) {
		set_err(p, "target: SCSI Command without a task");
		return;
	}
	if (len > p->cap) {
		set_err(p, "target: SCSI Command of %u bytes, the disk has %u",
			len, p->cap);
		return;
	}
	memcpy(tmpl + IDM_ISCSI_BHS_LUN, bhs + IDM_ISCSI_BHS_LUN, 8);
	memcpy(tmpl + IDM_ISCSI_BHS_ITT, bhs + IDM_ISCSI_BHS_ITT, 4);
	if (p->t_buf) {
		buf = p->t_buf;
		off = p->t_buf_off;
	}
	if (bhs[IDM_ISCSI_CMD_CDB] == P_CDB_READ) {
		tmpl[0] = IDM_ISCSI_OP_DATA_IN;
		if (p->status_mode == P_STATUS_IN_DATAIN) {
			tmpl[1] = IDM_ISCSI_DATAIN_STATUS;
			idm_iscsi_put32(tmpl + IDM_ISCSI_BHS_CMDSN, p->statsn++);
			idm_iscsi_put32(tmpl + IDM_ISCSI_BHS_EXP_STATSN, p->cmdsn);
			idm_iscsi_put32(tmpl + IDM_ISCSI_BHS_MAX_CMDSN, p->cmdsn + 64);
		}
		r = idm_put_data(t, tmpl, buf, off, 0, len,
				 p->put_ack ? IDM_PUT_ACK : 0);
	} else {
		tmpl[0] = IDM_ISCSI_OP_R2T;
		r = idm_get_data(t, tmpl, buf, off, 0, len, 0);
	}
	if (r < 0)
		set_err(p, "target: %s_Data(%u): %s",
			bhs[IDM_ISCSI_CMD_CDB] == P_CDB_READ ? "Put" : "Get", len,
			idm_strerror(r));
	else if (p->cmd_fd > 0 && write(p->cmd_fd, "c", 1) != 1)
		set_err(p, "target: cannot report the command");
}

/* A ping asks for a NOP-In; with the send queue full (the peer does not
 * read) -EAGAIN is an answer too, counted. */
static void t_nop(struct pair *p, const uint8_t *bhs)
{
	uint8_t rsp[48] = {0};
	int r;

	p->t_nops++;
	if (idm_iscsi_bhs_itt(bhs) == IDM_ISCSI_RESERVED_TAG)
		return;
	rsp[0] = IDM_ISCSI_OP_NOP_IN;
	rsp[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_ITT, idm_iscsi_bhs_itt(bhs));
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_TTT, IDM_ISCSI_RESERVED_TAG);
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_CMDSN, p->statsn++);
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_EXP_STATSN, p->cmdsn);
	idm_iscsi_put32(rsp + IDM_ISCSI_BHS_MAX_CMDSN, p->cmdsn + 64);
	r = idm_send_control(p->tc, rsp, NULL, 0, NULL, 0, NULL, 0);
	if (r == -EAGAIN)
		p->t_nop_eagain++;
	else if (r < 0)
		set_err(p, "target: send NOP-In: %s", idm_strerror(r));
}

static void t_control(idm_conn *c, idm_pdu *pdu, void *arg)
{
	struct pair *p = arg;
	const uint8_t *bhs = idm_pdu_bhs(pdu);

	if (p->t_terminated)
		p->cb_after_end++;
	switch (idm_pdu_opcode(pdu)) {
	case IDM_ISCSI_OP_LOGIN_REQ:
		t_login(p, c, bhs);
		break;
	case IDM_ISCSI_OP_SCSI_CMD:
		t_cmd(p, pdu);
		break;
	case IDM_ISCSI_OP_NOP_OUT:
		t_nop(p, bhs);
		break;
	default:
		/* an opcode no initiator sends: handed up with no task for
		 * the caller to Reject (doc/api.md 7.1); counted, the test
		 * that sends it checks */
		if (!idm_pdu_task(pdu) && idm_pdu_opcode(pdu) > IDM_ISCSI_OP_SNACK_REQ)
			p->t_unmatched++;
		else
			set_err(p, "target: unexpected opcode %#x",
				idm_pdu_opcode(pdu));
	}
}

static void t_done(idm_task *t, enum idm_data_dir dir, uint32_t off,
		   uint32_t len, uint32_t sn, int status, void *arg)
{
	struct pair *p = arg;

	(void)off;
	(void)len;
	(void)sn;
	p->t_completions++;
	if (status < 0)
		set_err(p, "target: data completion %s failed: %s",
			dir == IDM_DATA_IN ? "IN" : "OUT", idm_strerror(status));
	if (dir == IDM_DATA_OUT || p->status_mode == P_STATUS_RSP)
		t_send_rsp(p, t);
	if (!(dir == IDM_DATA_IN && p->put_ack))
		idm_deallocate_task_resources(t);
}

static void t_ack(idm_task *t, uint32_t datasn, void *arg)
{
	struct pair *p = arg;

	(void)datasn;
	p->data_acks++;
	idm_deallocate_task_resources(t);
}

static void t_term(idm_conn *c, int reason, void *arg)
{
	struct pair *p = arg;

	(void)c;
	p->t_terminated++;
	p->t_reason = reason;
}

static const struct idm_conn_cbs t_cbs = {
	.size = sizeof(struct idm_conn_cbs),
	.control_notify = t_control,
	.data_completion_notify = t_done,
	.data_ack_notify = t_ack,
	.connection_terminate_notify = t_term,
};

static int t_accept(idm_portal *portal, idm_conn *c, void *arg)
{
	struct pair *p = arg;

	(void)portal;
	if (p->tc)
		return -EBUSY;
	p->tc = c;
	return idm_conn_set_cbs(c, &t_cbs, p);
}

/* ---- initiator ------------------------------------------------------------ */

static void i_connected(idm_conn *c, int status, void *arg)
{
	struct pair *p = arg;
	uint8_t req[48] = {0};
	char data[1024];
	size_t n = 0;
	int r;

	p->connected = true;
	p->connect_status = status;
	if (status < 0)
		return;
	/* "auto" decided only now; the target side reads the same keys */
	build_kv(p, !strcmp(idm_conn_provider(c), "iser"));
	/* early allocation (RFC 7145 5.1.1): before the final request */
	r = idm_notice_key_values(c, p->kv, p->kv_len);
	if (r == 0)
		r = idm_allocate_connection_resources(c);
	if (r < 0) {
		set_err(p, "initiator keys: %s", idm_strerror(r));
		return;
	}
	n += (size_t)snprintf(data + n, sizeof(data) - n,
			      "InitiatorName=iqn.2026-11.test:ini") + 1;
	n += (size_t)snprintf(data + n, sizeof(data) - n,
			      "TargetName=iqn.2026-11.test:tgt") + 1;
	n += (size_t)snprintf(data + n, sizeof(data) - n,
			      "SessionType=Normal") + 1;
	memcpy(data + n, p->kv, p->kv_len);
	n += p->kv_len;
	req[0] = IDM_ISCSI_OP_LOGIN_REQ | IDM_ISCSI_OP_IMMEDIATE;
	req[1] = IDM_ISCSI_LOGIN_TRANSIT | (IDM_ISCSI_STAGE_OPERATIONAL << 2) |
		 IDM_ISCSI_STAGE_FULL_FEATURE;
	req[8] = 0x80; /* ISID: random format */
	req[13] = 1;
	idm_iscsi_put32(req + 16, 0x1000);
	idm_iscsi_put32(req + 24, p->cmdsn);
	r = idm_send_control(c, req, NULL, 0, data, n, NULL, 0);
	if (r < 0)
		set_err(p, "initiator: send Login Request: %s", idm_strerror(r));
}

static void i_control(idm_conn *c, idm_pdu *pdu, void *arg)
{
	struct pair *p = arg;
	const uint8_t *bhs = idm_pdu_bhs(pdu);
	int r;

	if (p->i_terminated)
		p->cb_after_end++;
	switch (idm_pdu_opcode(pdu)) {
	case IDM_ISCSI_OP_LOGIN_RSP:
		if (bhs[36] != 0) {
			set_err(p, "login rejected %#x/%#x", bhs[36], bhs[37]);
			return;
		}
		/* the caller noticed iSERHelloRequired=Yes in the response */
		r = p->hello ? idm_notice_key_values(c, hello_key,
						     sizeof(hello_key)) : 0;
		if (r == 0)
			r = idm_enable_datamover(c, NULL, NULL, 0);
		if (r < 0)
			set_err(p, "initiator: Enable_Datamover: %s",
				idm_strerror(r));
		else
			p->i_ffp = true;
		break;
	case IDM_ISCSI_OP_SCSI_RSP:
		if (idm_pdu_task(pdu) != p->task) {
			if (p->i_other_rsp && idm_pdu_task(pdu)) {
				p->i_other_rsp(p, idm_pdu_task(pdu), bhs);
				return;
			}
			set_err(p, "initiator: response for the wrong task");
			return;
		}
		p->status = bhs[3];
		p->i_received = idm_task_data_received(p->task);
		p->done = true;
		idm_deallocate_task_resources(p->task);
		p->task = NULL;
		break;
	default:
		set_err(p, "initiator: unexpected opcode %#x", idm_pdu_opcode(pdu));
	}
}

static void i_term(idm_conn *c, int reason, void *arg)
{
	struct pair *p = arg;

	(void)c;
	p->i_terminated++;
	p->i_reason = reason;
	p->task = NULL; /* ended with the connection */
}

static const struct idm_conn_cbs i_cbs = {
	.size = sizeof(struct idm_conn_cbs),
	.connected = i_connected,
	.control_notify = i_control,
	.connection_terminate_notify = i_term,
};

/* ---- driver ------------------------------------------------------------------ */

int p_progress_until(struct pair *p, bool (*cond)(struct pair *p), int ms)
{
	double end = p_now() + ms / 1000.0;

	while (!cond(p)) {
		int r;

		if (p->err[0])
			return -1;
		if (p_now() > end) {
			set_err(p, "timed out after %d ms", ms);
			return -1;
		}
		r = idm_ctx_progress(p->ctx, p->also ? 1 : 50);
		if (r >= 0 && p->also)
			r = idm_ctx_progress(p->also, 1);
		if (r < 0) {
			set_err(p, "idm_ctx_progress: %s", idm_strerror(r));
			return -1;
		}
	}
	return p->err[0] ? -1 : 0;
}

static uint8_t *guarded(size_t cap)
{
	uint8_t *m = NULL;

	if (posix_memalign((void **)&m, 4096, cap + 2 * P_GUARD))
		return NULL;
	memset(m, P_GUARD_BYTE, cap + 2 * P_GUARD);
	return m;
}

int p_init(struct pair *p, const char *ip, uint32_t cap)
{
	return p_init_with(p, ip, cap, "iser");
}

int p_init_with(struct pair *p, const char *ip, uint32_t cap,
		const char *providers)
{
	if (p_init_ctx(p, ip, cap, NULL) < 0)
		return -1;
	return p_listen(p, providers);
}

int p_init_ctx(struct pair *p, const char *ip, uint32_t cap, idm_ctx *shared)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->ip = ip;
	p->cap = cap;
	p->cmdsn = 1;
	p->itt = 1;
	if (shared) {
		p->ctx = shared;
		p->shared_ctx = true;
	} else {
		r = idm_ctx_create(NULL, &p->ctx);
		if (r < 0) {
			set_err(p, "idm_ctx_create: %s", idm_strerror(r));
			return -1;
		}
	}
	p->disk = guarded(cap);
	p->mem = guarded(cap);
	if (!p->disk || !p->mem) {
		set_err(p, "out of memory");
		return -1;
	}
	r = idm_buf_create(p->ctx, p->disk, cap + 2 * P_GUARD, &p->disk_buf);
	if (r == 0)
		r = idm_buf_create(p->ctx, p->mem, cap + 2 * P_GUARD, &p->buf);
	if (r < 0) {
		set_err(p, "idm_buf_create: %s", idm_strerror(r));
		return -1;
	}
	return 0;
}

int p_listen(struct pair *p, const char *providers)
{
	struct idm_portal_attr pa = {.size = sizeof(pa), .providers = providers,
				     .accept = t_accept};
	int r;

	pa.arg = p;
	r = idm_portal_create(p->ctx, p->ip, "0", &pa, &p->portal);
	if (r < 0) {
		set_err(p, "idm_portal_create(%s, %s): %s", providers, p->ip,
			idm_strerror(r));
		return -1;
	}
	return 0;
}

void p_set_keys(struct pair *p, const struct p_keys *k, bool rdma)
{
	p->k = *k;
	build_kv(p, rdma);
}

void p_close_conns(struct pair *p)
{
	if (p->ic)
		idm_conn_destroy(p->ic);
	if (p->tc)
		idm_conn_destroy(p->tc);
	if (p->portal)
		idm_portal_destroy(p->portal);
	p->ic = NULL;
	p->tc = NULL;
	p->portal = NULL;
}

void p_fini(struct pair *p)
{
	p_close_conns(p);
	if (p->buf)
		idm_buf_destroy(p->buf);
	if (p->disk_buf)
		idm_buf_destroy(p->disk_buf);
	if (p->ctx && !p->shared_ctx)
		idm_ctx_destroy(p->ctx);
	free(p->disk);
	free(p->mem);
	memset(p, 0, sizeof(*p));
}

static bool both_ffp(struct pair *p)
{
	return (p->connected && p->connect_status < 0) ||
	       (p->i_ffp && (p->t_ffp || p->remote_port));
}

int p_connect(struct pair *p, const struct p_keys *k)
{
	struct idm_conn_attr ca = {.size = sizeof(ca), .provider = "iser",
				   .cbs = &i_cbs};
	char port[16];
	int r;

	if (p->ini_provider)
		ca.provider = p->ini_provider;
	p_set_keys(p, k, strcmp(ca.provider, "tcp") != 0);
	ca.arg = p;
	snprintf(port, sizeof(port), "%d",
		 p->remote_port ? p->remote_port : idm_portal_port(p->portal));
	r = idm_conn_connect(p->ctx, p->ip, port, &ca, &p->ic);
	if (r < 0) {
		set_err(p, "idm_conn_connect(%s %s:%s): %s", ca.provider, p->ip,
			port, idm_strerror(r));
		return -1;
	}
	return 0;
}

int p_login(struct pair *p, const struct p_keys *k, int timeout_ms)
{
	const char *want = p->expect_provider ? p->expect_provider : "iser";

	if (p_connect(p, k) < 0)
		return -1;
	if (p_progress_until(p, both_ffp, timeout_ms) < 0)
		return -1;
	if (p->connect_status < 0) {
		set_err(p, "connect: %s (%s)", idm_strerror(p->connect_status),
			idm_conn_error(p->ic));
		return -1;
	}
	if (strcmp(idm_conn_provider(p->ic), want) ||
	    (p->tc && strcmp(idm_conn_provider(p->tc), want))) {
		set_err(p, "not %s: %s/%s", want, idm_conn_provider(p->ic),
			p->tc ? idm_conn_provider(p->tc) : "-");
		return -1;
	}
	return 0;
}

static bool io_done(struct pair *p)
{
	return p->done;
}

int p_io(struct pair *p, bool write, uint32_t len, int timeout_ms)
{
	if (p_io_start(p, write, len) < 0)
		return -1;
	return p_io_wait(p, timeout_ms);
}

int p_io_wait(struct pair *p, int timeout_ms)
{
	if (p_progress_until(p, io_done, timeout_ms) < 0) {
		char e[sizeof(p->err)];

		snprintf(e, sizeof(e), "%s", p->err);
		set_err(p, "%s %u: %s [ini: %s | tgt: %s]",
			p->io_write ? "WRITE" : "READ", p->io_len, e,
			p->ic ? idm_conn_error(p->ic) : "",
			p->tc ? idm_conn_error(p->tc) : "");
		return -1;
	}
	if (p->status != 0) {
		set_err(p, "SCSI status %#x", p->status);
		return -1;
	}
	return 0;
}

int p_io_start(struct pair *p, bool write, uint32_t len)
{
	uint8_t bhs[48] = {0};
	idm_buf *buf = p->i_buf ? p->i_buf : p->buf;
	size_t off = p->i_buf ? p->i_buf_off : P_GUARD;
	int r;

	if (len > p->cap) {
		set_err(p, "I/O larger than the buffers");
		return -1;
	}
	p->done = false;
	p->io_write = write;
	p->io_len = len;
	p->itt++;
	r = idm_task_create(p->ic, p->itt, &p->task);
	if (r == 0)
		r = idm_task_set_data(p->task, write ? NULL : buf, off,
				      write ? 0 : len, write ? buf : NULL,
				      off, write ? len : 0);
	if (r < 0) {
		set_err(p, "task: %s", idm_strerror(r));
		return -1;
	}
	bhs[0] = IDM_ISCSI_OP_SCSI_CMD;
	bhs[1] = IDM_ISCSI_FLAG_FINAL | (write ? IDM_ISCSI_CMD_WRITE : IDM_ISCSI_CMD_READ) |
		 IDM_ISCSI_ATTR_SIMPLE;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, p->itt);
	idm_iscsi_put32(bhs + IDM_ISCSI_CMD_EDTL, len);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, p->cmdsn++);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, p->statsn);
	bhs[IDM_ISCSI_CMD_CDB] = write ? P_CDB_WRITE : P_CDB_READ;
	r = idm_send_control(p->ic, bhs, NULL, 0, NULL, 0, p->task, 0);
	if (r < 0) {
		set_err(p, "send SCSI Command (%s %u): %s", write ? "W" : "R",
			len, idm_strerror(r));
		idm_deallocate_task_resources(p->task);
		p->task = NULL;
		return -1;
	}
	return 0;
}

int p_check_guards(struct pair *p)
{
	const uint8_t *bufs[2] = {p->disk, p->mem};

	for (int b = 0; b < 2; b++) {
		for (size_t i = 0; i < P_GUARD; i++) {
			if (bufs[b][i] != P_GUARD_BYTE ||
			    bufs[b][P_GUARD + p->cap + i] != P_GUARD_BYTE) {
				set_err(p, "%s guard byte %zu overwritten",
					b ? "initiator" : "disk", i);
				return -1;
			}
		}
	}
	return 0;
}

int p_write_read_verify(struct pair *p, uint32_t len, uint32_t seed)
{
	uint8_t *ini = p->mem + P_GUARD, *disk = p->disk + P_GUARD;

	p_pattern(ini, len, seed);
	memset(disk, 0, len + (len < p->cap ? 1 : 0));
	if (p_io(p, true, len, 60000) < 0)
		return -1;
	if (memcmp(disk, ini, len)) {
		set_err(p, "WRITE %u: data on the disk differs", len);
		return -1;
	}
	if (len < p->cap && disk[len] != 0) {
		set_err(p, "WRITE %u: byte past the end written", len);
		return -1;
	}
	memset(ini, 0, len);
	if (p_io(p, false, len, 60000) < 0)
		return -1;
	if (memcmp(disk, ini, len)) {
		set_err(p, "READ %u: data read back differs", len);
		return -1;
	}
	return p_check_guards(p);
}
