/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm-adopt-example: the worked example of handing libidm a socket the
 * program connected and logged in on itself.
 *
 * A stack that already has a login of its own (or gets the connection
 * from elsewhere) keeps it: it connects, sends the Login Request and reads
 * the final Login Response with plain blocking socket calls, then gives
 * the socket to libidm with idm_conn_adopt_fd_ffp() and the negotiated
 * keys. From there libidm moves the PDUs and data: here one INQUIRY whose
 * Data-In lands straight in our buffer, then a Logout.
 *
 * usage: idm-adopt-example HOST PORT TARGET-IQN [LUN]
 * Prints the vendor and product the INQUIRY returned; exit 0 on success.
 * Error handling is kept to what the example needs; see idm-initiator for
 * a complete initiator.
 */
#include <libidm/idm.h>
#include <libidm/iscsi.h>

#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define INITIATOR "iqn.2026-11.org.libidm:adopt-example"
#define MY_MRDSL 65536 /* MaxRecvDataSegmentLength we declare */
#define INQ_LEN 96

/* ---- before libidm: connect and log in on our own ------------------ */

static int connect_to(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd = -1;

	if (getaddrinfo(host, port, &hints, &res))
		return -1;
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd;
}

static int read_all(int fd, void *buf, size_t len)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = recv(fd, (char *)buf + got, len - got, 0);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static size_t add_key(char *buf, size_t pos, const char *kv)
{
	size_t n = strlen(kv) + 1; /* each "Key=Value" ends with a NUL */

	memcpy(buf + pos, kv, n);
	return pos + n;
}

/* The keys of our one Login Request into req: the operational stage
 * straight to full feature phase, no digests (so no CRC here). Returns
 * their length. */
static size_t login_keys(char *req, const char *target)
{
	char line[300];
	size_t n = 0;

	snprintf(line, sizeof(line), "TargetName=%s", target);
	n = add_key(req, n, "InitiatorName=" INITIATOR);
	n = add_key(req, n, line);
	n = add_key(req, n, "SessionType=Normal");
	n = add_key(req, n, "HeaderDigest=None");
	n = add_key(req, n, "DataDigest=None");
	n = add_key(req, n, "ImmediateData=Yes");
	n = add_key(req, n, "InitialR2T=No");
	n = add_key(req, n, "MaxBurstLength=262144");
	n = add_key(req, n, "FirstBurstLength=65536");
	n = add_key(req, n, "ErrorRecoveryLevel=0");
	snprintf(line, sizeof(line), "MaxRecvDataSegmentLength=%u", MY_MRDSL);
	return add_key(req, n, line);
}

static int send_login(int fd, const char *target)
{
	uint8_t bhs[IDM_ISCSI_BHS_LEN] = { 0 };
	char req[512];
	size_t n = login_keys(req, target), padded;

	bhs[IDM_ISCSI_BHS_OPCODE] = IDM_ISCSI_OP_LOGIN_REQ | IDM_ISCSI_OP_IMMEDIATE;
	bhs[IDM_ISCSI_BHS_FLAGS] = IDM_ISCSI_LOGIN_TRANSIT |
		 (IDM_ISCSI_STAGE_OPERATIONAL << IDM_ISCSI_LOGIN_CSG_SHIFT) |
		 IDM_ISCSI_STAGE_FULL_FEATURE;
	bhs[IDM_ISCSI_LOGIN_ISID] = 0x80; /* ISID: random type */
	bhs[IDM_ISCSI_LOGIN_ISID + 3] = 0x42;
	idm_iscsi_bhs_set_data_len(bhs, (uint32_t)n);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, 1);
	padded = n + idm_iscsi_pad4((uint32_t)n);
	memset(req + n, 0, padded - n);
	if (send(fd, bhs, sizeof(bhs), MSG_NOSIGNAL) != (ssize_t)sizeof(bhs) ||
	    send(fd, req, padded, MSG_NOSIGNAL) != (ssize_t)padded)
		return -1;
	return 0;
}

/* One Login Request, then its final response. On success keys[] holds
 * the text idm_conn_adopt_fd_ffp() takes and *statsn the target's
 * StatSN. */
static int login(int fd, const char *target, char *keys, size_t cap,
		 size_t *klen, uint32_t *statsn)
{
	uint8_t bhs[IDM_ISCSI_BHS_LEN];
	char line[300];
	uint8_t *rsp;
	uint32_t dlen;

	/* Read the response exactly to its end (padding included): the next
	 * byte on the socket is libidm's to read. */
	if (send_login(fd, target) < 0 || read_all(fd, bhs, sizeof(bhs)) < 0 ||
	    idm_iscsi_bhs_opcode(bhs) != IDM_ISCSI_OP_LOGIN_RSP)
		return -1;
	dlen = idm_iscsi_bhs_data_len(bhs);
	if (idm_iscsi_bhs_ahs_len(bhs) != 0 || dlen > cap - 64 || !(rsp = malloc(dlen + 4)))
		return -1;
	if (read_all(fd, rsp, dlen + idm_iscsi_pad4(dlen)) < 0) {
		free(rsp);
		return -1;
	}
	if (bhs[IDM_ISCSI_LOGIN_STATUS_CLASS] != IDM_ISCSI_LOGIN_CLASS_SUCCESS ||
	    !(bhs[IDM_ISCSI_BHS_FLAGS] & IDM_ISCSI_LOGIN_TRANSIT)) {
		fprintf(stderr, "login refused: class %u detail %u\n",
			bhs[IDM_ISCSI_LOGIN_STATUS_CLASS], bhs[IDM_ISCSI_LOGIN_STATUS_DETAIL]);
		free(rsp);
		return -1;
	}
	/* The target answered every key with the negotiated result and its
	 * own MaxRecvDataSegmentLength (which Notice_Key_Values reads as
	 * the peer's): pass its text on as is, plus the limit we declared. */
	memcpy(keys, rsp, dlen);
	*klen = dlen;
	if (dlen && keys[dlen - 1] != '\0')
		keys[(*klen)++] = '\0';
	snprintf(line, sizeof(line), "InitiatorRecvDataSegmentLength=%u", MY_MRDSL);
	*klen = add_key(keys, *klen, line);
	*statsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_CMDSN /* StatSN */);
	free(rsp);
	return 0;
}

/* ---- with libidm: the session goes on ------------------------------ */

struct state {
	bool done, failed;
	uint8_t status;
	uint32_t statsn;
};

static void on_control(idm_conn *conn, idm_pdu *pdu, void *arg)
{
	struct state *s = arg;
	const uint8_t *bhs = idm_pdu_bhs(pdu);
	idm_task *t = idm_pdu_task(pdu);

	(void)conn;
	s->statsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_CMDSN /* StatSN */);
	switch (idm_pdu_opcode(pdu)) {
	case IDM_ISCSI_OP_SCSI_RSP:
		s->status = bhs[IDM_ISCSI_BHS_STATUS];
		s->done = true;
		break;
	case IDM_ISCSI_OP_DATA_IN: /* with status (S bit): data is placed */
		s->status = bhs[IDM_ISCSI_BHS_STATUS];
		s->done = true;
		break;
	case IDM_ISCSI_OP_LOGOUT_RSP:
		s->done = true;
		break;
	default:
		break;
	}
	if (t && s->done)
		idm_deallocate_task_resources(t);
}

static void on_terminate(idm_conn *conn, int reason, void *arg)
{
	struct state *s = arg;

	fprintf(stderr, "connection lost: %s\n", idm_conn_error(conn));
	(void)reason;
	s->failed = true;
}

static const struct idm_conn_cbs cbs = {
	.size = sizeof(cbs),
	.control_notify = on_control,
	.connection_terminate_notify = on_terminate,
};

static int wait_done(idm_ctx *ctx, struct state *s)
{
	for (int i = 0; i < 100 && !s->done && !s->failed; i++)
		if (idm_ctx_progress(ctx, 100) < 0)
			return -1;
	return s->done ? 0 : -1;
}

/* INQUIRY through libidm into inq: CmdSN 1 again (the login was
 * immediate), ExpStatSN one past the final Login Response. 0, or -1
 * after a message. */
static int inquiry(idm_ctx *ctx, idm_conn *conn, struct state *s, int lun,
		   uint32_t statsn, uint8_t *inq, idm_buf **buf)
{
	uint8_t bhs[IDM_ISCSI_BHS_LEN] = { 0 };
	idm_task *task;
	int r;

	if (idm_buf_create(ctx, inq, INQ_LEN, buf) < 0 ||
	    idm_task_create(conn, 1, &task) < 0 ||
	    idm_task_set_data(task, *buf, 0, INQ_LEN, NULL, 0, 0) < 0)
		return -1;
	bhs[IDM_ISCSI_BHS_OPCODE] = IDM_ISCSI_OP_SCSI_CMD;
	bhs[IDM_ISCSI_BHS_FLAGS] = IDM_ISCSI_FLAG_FINAL | IDM_ISCSI_CMD_READ | 1; /* SIMPLE */
	bhs[9] = (uint8_t)lun; /* single-level LUN, peripheral addressing */
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, 1);
	idm_iscsi_put32(bhs + IDM_ISCSI_CMD_EDTL, INQ_LEN);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, 1);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, statsn + 1);
	bhs[IDM_ISCSI_CMD_CDB] = 0x12; /* INQUIRY */
	bhs[IDM_ISCSI_CMD_CDB + 4] = INQ_LEN;
	r = idm_send_control(conn, bhs, NULL, 0, NULL, 0, task, 0);
	if (r < 0 || wait_done(ctx, s) < 0) {
		fprintf(stderr, "INQUIRY failed: %s\n", idm_strerror(r));
		return -1;
	}
	if (s->status != 0) {
		fprintf(stderr, "INQUIRY: SCSI status 0x%02x\n", s->status);
		return -1;
	}
	return 0;
}

/* Logout: close the session. 0 once the target answered. */
static int logout(idm_ctx *ctx, idm_conn *conn, struct state *s)
{
	uint8_t bhs[IDM_ISCSI_BHS_LEN] = { 0 };

	bhs[IDM_ISCSI_BHS_OPCODE] = IDM_ISCSI_OP_LOGOUT_REQ | IDM_ISCSI_OP_IMMEDIATE;
	bhs[IDM_ISCSI_BHS_FLAGS] = IDM_ISCSI_FLAG_FINAL; /* reason 0: close the session */
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, 2);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, 2);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, s->statsn + 1);
	s->done = false;
	if (idm_send_control(conn, bhs, NULL, 0, NULL, 0, NULL, 0) < 0)
		return -1;
	return wait_done(ctx, s);
}

/* HOST PORT TARGET-IQN [LUN]: the LUN (default 1), or -1 after a
 * message. */
static int parse_args(int argc, char **argv)
{
	int lun;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: %s HOST PORT TARGET-IQN [LUN]\n", argv[0]);
		return -1;
	}
	lun = argc == 5 ? atoi(argv[4]) : 1;
	if (lun < 0 || lun > 255) {
		fprintf(stderr, "LUN %s: 0 to 255\n", argv[4]);
		return -1;
	}
	return lun;
}

/* Connect and log in on our own. The socket, or -1 after a message. */
static int connect_and_login(char **argv, char *keys, size_t cap, size_t *klen,
			     uint32_t *statsn)
{
	int fd = connect_to(argv[1], argv[2]);

	if (fd < 0 || login(fd, argv[3], keys, cap, klen, statsn) < 0) {
		fprintf(stderr, "%s:%s: connect or login failed\n", argv[1], argv[2]);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	static char keys[8192];
	uint8_t inq[INQ_LEN] = { 0 };
	struct state s = { 0 };
	struct idm_conn_attr attr = {
		.size = sizeof(attr), .provider = "tcp", .cbs = &cbs, .arg = &s,
	};
	idm_ctx *ctx = NULL;
	idm_conn *conn = NULL;
	idm_buf *buf = NULL;
	size_t klen = 0;
	uint32_t statsn = 0;
	int fd, r, rc = 1, lun = parse_args(argc, argv);

	if (lun < 0)
		return 2;
	fd = connect_and_login(argv, keys, sizeof(keys), &klen, &statsn);
	if (fd < 0)
		return 1;
	/* Hand over: from here libidm owns fd and closes it. */
	r = idm_ctx_create(NULL, &ctx);
	if (r == 0)
		r = idm_conn_adopt_fd_ffp(ctx, fd, IDM_ROLE_INITIATOR, &attr, keys,
					  klen, &conn);
	if (r < 0) {
		fprintf(stderr, "adopt: %s %s\n", idm_strerror(r), idm_last_error());
		close(fd); /* a refused descriptor is still ours */
	} else if (inquiry(ctx, conn, &s, lun, statsn, inq, &buf) == 0) {
		printf("INQUIRY through the adopted connection: %.8s %.16s\n",
		       (const char *)inq + 8, (const char *)inq + 16);
		rc = logout(ctx, conn, &s) == 0 ? 0 : 1;
	}
	if (conn)
		idm_conn_destroy(conn);
	if (buf)
		idm_buf_destroy(buf);
	idm_ctx_destroy(ctx);
	return rc;
}
