/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The TCP provider's receive path, initiator role: the input is the byte
 * stream a hostile target sends (Login Responses, then SCSI Data-In,
 * R2T, SCSI Response, NOP-In, Text Response, Reject, Asynchronous
 * Message, Logout Response...), read by the real libidm and
 * libidm-tcp.so on a connection made with idm_conn_connect() (public API
 * only). A small initiator drives it the way a session layer does: it
 * logs in, and when the final Login Response arrives it notices the key
 * values, enables the data mover and issues four commands with buffers,
 * so that the Data-In and R2Ts of the stream meet real tasks in flight:
 *
 *   ITT 0x10  READ, 8 KiB into the read buffer
 *   ITT 0x11  WRITE, 8 KiB from the write buffer (R2Ts, unsolicited data)
 *   ITT 0x12  bidirectional, 4 KiB each way
 *   ITT 0x13  READ, 512 bytes
 *
 * A SCSI Response, or a Data-In with status, ends its task (so late
 * Data-In for it exercises the provider's freed-ITT handling); a NOP-In
 * asking for an answer gets a NOP-Out; a Login Response that does not
 * end the login gets the next Login Request (up to 8). What the
 * initiator sends (Login Requests, commands, Data-Out) is read and
 * dropped. An input ends when the connection fails or closes after the
 * stream's end (EOF).
 *
 * Input: a configuration byte, then the TCP byte stream.
 *   bit 0 HeaderDigest=CRC32C   bit 1 DataDigest=CRC32C
 *   bit 2 ImmediateData=Yes     bit 3 InitialR2T=Yes
 *   bit 4 small bursts (FirstBurstLength 512, MaxBurstLength 1024; else
 *         65536 and 262144)
 *   bit 5 MaxRecvDataSegmentLength 512 on both sides (else 8192)
 *   bit 6 ErrorRecoveryLevel=1 (Data-In A bit, SNACK)
 *   bit 7 MaxOutstandingR2T=4 (else 1)
 * The digests apply after the final Login Response, as on the wire.
 *
 * The connection is a socketpair put in place of the provider's TCP
 * socket at connect() (sock_shim.c); context and buffers are set up once.
 * Needs IDM_PROVIDER_PATH to find the provider in the build tree (meson
 * test and run-long.sh set it).
 */
#include "fuzz.h"
#include "sock_shim.h"

#include <libidm/idm.h>
#include <libidm/iscsi.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_ROUNDS 4000 /* progress calls per input: a bound, never reached */
#define PORT 3260	/* what the shim answers connect() for */
#define NTASKS 4
#define MAX_LOGINS 8

static idm_ctx *ctx;
static idm_buf *rbuf, *wbuf; /* read and write data */

/* One input's connection and what its initiator did so far. */
static struct {
	idm_conn *conn;
	uint8_t cfg;
	bool up, ended, ffp;
	unsigned logins;
	uint32_t cmdsn, exp_statsn;
	idm_task *task[NTASKS];
} s;

static const struct {
	uint32_t itt;
	bool read, write;
	uint32_t len;
} cmds[NTASKS] = {
	{ 0x10, true, false, 8192 },
	{ 0x11, false, true, 8192 },
	{ 0x12, true, true, 4096 },
	{ 0x13, true, false, 512 },
};

static void end_task(int i)
{
	if (s.task[i]) {
		idm_deallocate_task_resources(s.task[i]);
		s.task[i] = NULL;
	}
}

static void send_login(void)
{
	static const char keys[] = "InitiatorName=iqn.2026-11.org.libidm:fuzz\0"
				   "TargetName=iqn.2026-11.org.libidm:tgt\0"
				   "SessionType=Normal\0HeaderDigest=CRC32C,None\0";
	uint8_t bhs[IDM_BHS_LEN] = { IDM_ISCSI_OP_LOGIN_REQ | IDM_ISCSI_OP_IMMEDIATE,
				     0x87 /* T, CSG 1, NSG 3 */ };

	bhs[8] = 0x40; /* ISID: random type, ISID 0x400000000001 */
	bhs[13] = 1;
	idm_iscsi_put32(bhs + 16, 1); /* ITT */
	idm_iscsi_put32(bhs + 24, s.cmdsn);
	idm_iscsi_put32(bhs + 28, s.exp_statsn);
	s.logins++;
	idm_send_control(s.conn, bhs, NULL, 0, keys, sizeof(keys) - 1, NULL, 0);
}

/* The negotiated values the configuration byte stands for. */
static void notice_keys(void)
{
	uint8_t c = s.cfg;
	char kv[512];
	int n;

	n = snprintf(kv, sizeof(kv),
		     "HeaderDigest=%s%cDataDigest=%s%cImmediateData=%s%c"
		     "InitialR2T=%s%cFirstBurstLength=%s%cMaxBurstLength=%s%c"
		     "MaxRecvDataSegmentLength=%s%c"
		     "InitiatorRecvDataSegmentLength=%s%c"
		     "TargetRecvDataSegmentLength=%s%cErrorRecoveryLevel=%s%c"
		     "MaxOutstandingR2T=%s%c",
		     c & 1 ? "CRC32C" : "None", 0, c & 2 ? "CRC32C" : "None", 0,
		     c & 4 ? "Yes" : "No", 0, c & 8 ? "Yes" : "No", 0,
		     c & 16 ? "512" : "65536", 0, c & 16 ? "1024" : "262144", 0,
		     c & 32 ? "512" : "8192", 0, c & 32 ? "512" : "8192", 0,
		     c & 32 ? "512" : "8192", 0, c & 64 ? "1" : "0", 0,
		     c & 128 ? "4" : "1", 0);
	if (idm_notice_key_values(s.conn, kv, (size_t)n) < 0)
		abort(); /* the harness's own keys: always valid */
}

static void start_commands(void)
{
	for (int i = 0; i < NTASKS; i++) {
		uint8_t bhs[IDM_BHS_LEN] = { IDM_ISCSI_OP_SCSI_CMD,
					     IDM_ISCSI_FLAG_FINAL | 1 /* simple */ };
		idm_task *t;

		if (idm_task_create(s.conn, cmds[i].itt, &t) < 0)
			return;
		if (idm_task_set_data(t, cmds[i].read ? rbuf : NULL, 0,
				      cmds[i].read ? cmds[i].len : 0,
				      cmds[i].write ? wbuf : NULL, 0,
				      cmds[i].write ? cmds[i].len : 0) < 0) {
			idm_deallocate_task_resources(t);
			return;
		}
		s.task[i] = t;
		if (cmds[i].read)
			bhs[1] |= 0x40;
		if (cmds[i].write)
			bhs[1] |= IDM_ISCSI_CMD_WRITE;
		idm_iscsi_put32(bhs + 16, cmds[i].itt);
		idm_iscsi_put32(bhs + IDM_ISCSI_CMD_EDTL, cmds[i].len);
		idm_iscsi_put32(bhs + 24, s.cmdsn++);
		idm_iscsi_put32(bhs + 28, s.exp_statsn);
		bhs[32] = cmds[i].write ? 0x2a : 0x28; /* CDB: WRITE/READ(10) */
		bhs[39] = (uint8_t)(cmds[i].len / 512);
		if (idm_send_control(s.conn, bhs, NULL, 0, NULL, 0, t, 0) < 0) {
			end_task(i);
			return;
		}
	}
}

static void on_login_rsp(const uint8_t *bhs)
{
	bool transit = bhs[1] & 0x80;
	uint8_t nsg = bhs[1] & 3, status = bhs[36];

	if (s.ffp)
		return;
	s.exp_statsn = idm_iscsi_get32(bhs + 24) + 1;
	if (status != 0) /* refused: the target closes */
		return;
	if (transit && nsg == 3) {
		/* final: the provider switches its receive side to the
		 * negotiated digests right after this callback */
		notice_keys();
		if (idm_enable_datamover(s.conn, NULL, NULL, 0) < 0)
			return;
		s.ffp = true;
		start_commands();
		return;
	}
	if (s.logins < MAX_LOGINS)
		send_login();
}

static void control_notify(idm_conn *conn, idm_pdu *pdu, void *arg)
{
	const uint8_t *bhs = idm_pdu_bhs(pdu);
	idm_task *t = idm_pdu_task(pdu);
	uint8_t op = idm_pdu_opcode(pdu);
	size_t dlen;

	(void)conn;
	(void)arg;
	/* what the caller may read of every PDU: ASan checks the lengths */
	if (idm_pdu_data(pdu, &dlen) && dlen)
		(void)((volatile const uint8_t *)idm_pdu_data(pdu, &dlen))[dlen - 1];
	switch (op) {
	case IDM_ISCSI_OP_LOGIN_RSP:
		on_login_rsp(bhs);
		break;
	case IDM_ISCSI_OP_SCSI_RSP:
	case IDM_ISCSI_OP_DATA_IN: /* S=1: the status is in it */
		for (int i = 0; i < NTASKS; i++)
			if (s.task[i] && (s.task[i] == t ||
					  idm_task_itt(s.task[i]) == idm_iscsi_bhs_itt(bhs)))
				end_task(i);
		break;
	case IDM_ISCSI_OP_NOP_IN:
		if (idm_iscsi_get32(bhs + 20) != IDM_ISCSI_RESERVED_TAG && s.ffp) {
			uint8_t out[IDM_BHS_LEN] = { IDM_ISCSI_OP_NOP_OUT | IDM_ISCSI_OP_IMMEDIATE,
						     IDM_ISCSI_FLAG_FINAL };

			memcpy(out + 20, bhs + 20, 4); /* TTT */
			idm_iscsi_put32(out + 16, IDM_ISCSI_RESERVED_TAG);
			idm_iscsi_put32(out + 24, s.cmdsn);
			idm_iscsi_put32(out + 28, s.exp_statsn);
			idm_send_control(s.conn, out, NULL, 0, NULL, 0, NULL, 0);
		}
		break;
	default:
		break;
	}
}

static void connected(idm_conn *conn, int status, void *arg)
{
	(void)conn;
	(void)arg;
	if (status < 0) {
		s.ended = true;
		return;
	}
	s.up = true;
	send_login();
}

static void terminated(idm_conn *conn, int reason, void *arg)
{
	(void)conn;
	(void)reason;
	(void)arg;
	/* the provider let go of every task: so do we */
	for (int i = 0; i < NTASKS; i++)
		s.task[i] = NULL;
	s.ended = true;
}

static const struct idm_conn_cbs cbs = {
	.size = sizeof(cbs),
	.connected = connected,
	.control_notify = control_notify,
	.connection_terminate_notify = terminated,
};

static void init_once(void)
{
	const char *l = getenv("IDM_FUZZ_LOG"); /* 3: what libidm says */
	struct idm_ctx_attr ca = {
		.size = sizeof(ca),
		.log_level = l ? atoi(l) : -1,
	};
	int r;

	/* a socketpair has no dead-peer timers to set (providers/tcp/README.md) */
	setenv("IDM_TCP_USER_TIMEOUT_MS", "0", 0);
	setenv("IDM_TCP_ZERO_WINDOW_TIMEOUT_MS", "0", 0);
	setenv("IDM_TCP_KEEPIDLE", "0", 0);
	setenv("IDM_TCP_KEEPINTVL", "0", 0);
	setenv("IDM_TCP_KEEPCNT", "0", 0);
	r = idm_ctx_create(&ca, &ctx);
	if (r < 0) {
		fprintf(stderr, "idm_ctx_create: %s\n", idm_strerror(r));
		abort();
	}
	if (idm_buf_alloc(ctx, 8192, &rbuf) < 0 || idm_buf_alloc(ctx, 8192, &wbuf) < 0)
		abort();
	memset(idm_buf_addr(wbuf), 0xa5, 8192);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t sink[65536];
	struct idm_conn_attr ca = { .size = sizeof(ca), .provider = "tcp", .cbs = &cbs };
	size_t off = 1;
	bool shut = false;
	int sv[2], r;

	if (size < 1)
		return 0;
	if (!ctx)
		init_once();
	memset(&s, 0, sizeof(s));
	s.cfg = data[0];
	s.cmdsn = 1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("socketpair");
		abort();
	}
	shim_connect_next(PORT, sv[1]);
	r = idm_conn_connect(ctx, "127.0.0.1", "3260", &ca, &s.conn);
	close(sv[1]); /* the provider has its own descriptor of it now */
	if (r < 0) {
		fprintf(stderr, "idm_conn_connect (IDM_PROVIDER_PATH=%s): %s\n",
			getenv("IDM_PROVIDER_PATH") ? getenv("IDM_PROVIDER_PATH") : "",
			idm_strerror(r));
		abort();
	}
	for (int round = 0; round < MAX_ROUNDS && !s.ended; round++) {
		bool busy = false;
		ssize_t n;

		/* the target speaks once the login request is out */
		if (s.up && off < size) {
			n = send(sv[0], data + off, size - off, MSG_NOSIGNAL);
			if (n > 0) {
				off += (size_t)n;
				busy = true;
			} else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
				off = size; /* the initiator closed: the rest is moot */
			}
		}
		if (s.up && off == size && !shut) {
			shutdown(sv[0], SHUT_WR); /* EOF: the stream is all there */
			shut = true;
		}
		while ((n = recv(sv[0], sink, sizeof(sink), 0)) > 0)
			busy = true;
		if (shut && (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)))
			busy = true; /* closed: one more progress reports it */
		idm_ctx_progress(ctx, busy ? 0 : 1);
	}
	for (int i = 0; i < NTASKS; i++)
		end_task(i);
	idm_conn_destroy(s.conn);
	close(sv[0]);
	return 0;
}
