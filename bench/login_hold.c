/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench-login-hold: log in N iSCSI sessions over TCP and hold them idle,
 * so that bench/run can read a target's resident memory per idle
 * full-feature session.
 *
 * It speaks the login phase itself over plain sockets instead of linking
 * libidm: the measurement is about the target, and a client without
 * libidm measures any target (tgtd included) the same way, with nothing
 * of its own in the way. Each session is one connection with its own
 * ISID, logged in one after the other (security stage, operational
 * stage, full feature phase) with the keys a typical initiator sends.
 *
 * When every session is in full feature phase it prints "ready N" on
 * stdout and waits. A line or EOF on stdin closes every connection,
 * prints "closed N" and exits 0. Any failure: a message on stderr,
 * exit 1. Usage errors: exit 2.
 */
#include <libidm/iscsi.h>

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define LOGIN_ROUNDS_MAX 8   /* Login Request/Response exchanges per session */
#define LOGIN_DATA_MAX 8192  /* bytes of key=value text we accept back */
#define IO_TIMEOUT_S 10

struct hold_opts {
	const char *host;
	const char *port;
	const char *target;
	const char *initiator;
	long sessions;
};

/* The operational keys most initiators (open-iscsi, libiscsi) offer, so
 * the target sizes a session as it would for them. */
static const char op_keys[] =
	"HeaderDigest=None\0"
	"DataDigest=None\0"
	"MaxRecvDataSegmentLength=262144\0"
	"InitialR2T=No\0"
	"ImmediateData=Yes\0"
	"MaxBurstLength=1048576\0"
	"FirstBurstLength=262144\0"
	"MaxOutstandingR2T=1\0"
	"MaxConnections=1\0"
	"DataPDUInOrder=Yes\0"
	"DataSequenceInOrder=Yes\0"
	"ErrorRecoveryLevel=0\0"
	"DefaultTime2Wait=2\0"
	"DefaultTime2Retain=0\0";

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET; /* the target closed the connection */
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static int connect_to(const struct hold_opts *o)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	struct timeval tv = { .tv_sec = IO_TIMEOUT_S };
	int fd = -1, one = 1, rc;

	rc = getaddrinfo(o->host, o->port, &hints, &res);
	if (rc) {
		fprintf(stderr, "bench-login-hold: %s:%s: %s\n", o->host,
			o->port, gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		rc = -errno;
		close(fd);
		fd = rc;
	}
	freeaddrinfo(res);
	return fd;
}

/* One Login Request: CSG -> NSG with the Transit bit, and keys. */
static int send_login(int fd, long idx, uint8_t csg, uint8_t nsg,
		      uint32_t exp_statsn, const char *keys, size_t klen)
{
	uint8_t pdu[IDM_ISCSI_BHS_LEN + 1024];
	static const uint8_t zero[4];

	if (klen > sizeof(pdu) - IDM_ISCSI_BHS_LEN)
		return -E2BIG;
	memset(pdu, 0, IDM_ISCSI_BHS_LEN);
	pdu[IDM_ISCSI_BHS_OPCODE] = IDM_ISCSI_OP_LOGIN_REQ | IDM_ISCSI_OP_IMMEDIATE;
	pdu[IDM_ISCSI_BHS_FLAGS] = IDM_ISCSI_LOGIN_TRANSIT |
			       (uint8_t)(csg << IDM_ISCSI_LOGIN_CSG_SHIFT) | nsg;
	idm_iscsi_put24(pdu + IDM_ISCSI_BHS_DATA_SEG_LEN, (uint32_t)klen);
	/* ISID: type 2 (random, "0x80" in the top bits) with the session
	 * index in the qualifier, so no two sessions reinstate each other. */
	pdu[8] = 0x80;
	pdu[9] = 0x42;
	idm_iscsi_put32(pdu + 10, (uint32_t)idx);
	/* TSIH 0 (bytes 14-15): a new session */
	idm_iscsi_put32(pdu + IDM_ISCSI_BHS_ITT, (uint32_t)idx);
	idm_iscsi_put32(pdu + IDM_ISCSI_BHS_CMDSN, 1);
	idm_iscsi_put32(pdu + IDM_ISCSI_BHS_EXP_STATSN, exp_statsn);
	memcpy(pdu + IDM_ISCSI_BHS_LEN, keys, klen);
	if (write_all(fd, pdu, IDM_ISCSI_BHS_LEN + klen))
		return -EIO;
	return write_all(fd, zero, pad4(klen) - klen);
}

/* Read one Login Response; checks opcode, lengths and status. */
static int recv_login(int fd, uint8_t *bhs, char *why, size_t whylen)
{
	static uint8_t data[LOGIN_DATA_MAX];
	uint32_t ahs, dsl;
	int rc;

	rc = read_all(fd, bhs, IDM_ISCSI_BHS_LEN);
	if (rc) {
		snprintf(why, whylen, "no Login Response: %s", strerror(-rc));
		return rc;
	}
	if ((bhs[IDM_ISCSI_BHS_OPCODE] & IDM_ISCSI_OPCODE_MASK) != IDM_ISCSI_OP_LOGIN_RSP) {
		snprintf(why, whylen, "opcode 0x%02x instead of a Login Response",
			 bhs[IDM_ISCSI_BHS_OPCODE]);
		return -EPROTO;
	}
	ahs = bhs[IDM_ISCSI_BHS_TOTAL_AHS_LEN] * 4u;
	dsl = idm_iscsi_get24(bhs + IDM_ISCSI_BHS_DATA_SEG_LEN);
	if (ahs + pad4(dsl) > sizeof(data)) {
		snprintf(why, whylen, "Login Response of %u bytes is too long",
			 ahs + dsl);
		return -EPROTO;
	}
	rc = read_all(fd, data, ahs + pad4(dsl));
	if (rc) {
		snprintf(why, whylen, "Login Response data: %s", strerror(-rc));
		return rc;
	}
	if (bhs[36] || bhs[37]) {
		snprintf(why, whylen, "login refused: status 0x%02x%02x",
			 bhs[36], bhs[37]);
		return -EACCES;
	}
	return 0;
}

static int login_one(const struct hold_opts *o, long idx, int *out)
{
	char keys[1024], why[160] = "";
	size_t klen;
	uint8_t bhs[IDM_ISCSI_BHS_LEN];
	uint8_t stage = IDM_ISCSI_STAGE_SECURITY;
	uint32_t exp_statsn = 0;
	bool first_in_stage = true;
	int fd, rc = -EPROTO, n;

	fd = connect_to(o);
	if (fd < 0) {
		fprintf(stderr, "bench-login-hold: session %ld: connect: %s\n",
			idx + 1, strerror(-fd));
		return fd;
	}
	for (int round = 0; round < LOGIN_ROUNDS_MAX; round++) {
		uint8_t nsg;

		klen = 0;
		if (stage == IDM_ISCSI_STAGE_SECURITY) {
			nsg = IDM_ISCSI_STAGE_OPERATIONAL;
			if (first_in_stage) {
				n = snprintf(keys, sizeof(keys),
					     "InitiatorName=%s%cTargetName=%s%c"
					     "SessionType=Normal%cAuthMethod=None",
					     o->initiator, 0, o->target, 0, 0);
				if (n < 0 || (size_t)n >= sizeof(keys)) {
					rc = -ENAMETOOLONG;
					snprintf(why, sizeof(why), "names too long");
					break;
				}
				klen = (size_t)n + 1;
			}
		} else {
			nsg = IDM_ISCSI_STAGE_FULL_FEATURE;
			if (first_in_stage) {
				memcpy(keys, op_keys, sizeof(op_keys) - 1);
				klen = sizeof(op_keys) - 1;
			}
		}
		rc = send_login(fd, idx, stage, nsg, exp_statsn, keys, klen);
		if (rc) {
			snprintf(why, sizeof(why), "send: %s", strerror(-rc));
			break;
		}
		rc = recv_login(fd, bhs, why, sizeof(why));
		if (rc)
			break;
		exp_statsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_CMDSN) + 1; /* StatSN */
		first_in_stage = false;
		if (bhs[IDM_ISCSI_BHS_FLAGS] & IDM_ISCSI_LOGIN_TRANSIT) {
			uint8_t next = bhs[IDM_ISCSI_BHS_FLAGS] & IDM_ISCSI_LOGIN_NSG_MASK;

			if (next == IDM_ISCSI_STAGE_FULL_FEATURE) {
				*out = fd;
				return 0;
			}
			if (next != stage)
				first_in_stage = true;
			stage = next;
		}
		rc = -EPROTO;
		snprintf(why, sizeof(why), "no full feature phase after %d rounds",
			 LOGIN_ROUNDS_MAX);
	}
	fprintf(stderr, "bench-login-hold: session %ld: %s\n", idx + 1, why);
	close(fd);
	return rc;
}

/* Each session holds one descriptor: lift the soft limit to the hard. */
static void raise_nofile(long need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)need + 16) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: bench-login-hold [-i INITIATOR-IQN] HOST PORT "
		"TARGET-IQN N\n"
		"Logs in N iSCSI sessions (one TCP connection each), prints "
		"\"ready N\" when all\n"
		"are in full feature phase, holds them idle until a line or "
		"EOF on stdin,\n"
		"then closes them and prints \"closed N\".\n");
}

int main(int argc, char **argv)
{
	struct hold_opts o = {
		.initiator = "iqn.2026-11.org.libidm:bench-login-hold",
	};
	int *fds, opt;
	char *end;
	char line[64];
	long done = 0;

	while ((opt = getopt(argc, argv, "hi:")) != -1) {
		switch (opt) {
		case 'i':
			o.initiator = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 4) {
		usage(stderr);
		return 2;
	}
	o.host = argv[optind];
	o.port = argv[optind + 1];
	o.target = argv[optind + 2];
	errno = 0;
	o.sessions = strtol(argv[optind + 3], &end, 10);
	if (errno || *end || o.sessions < 1 || o.sessions > 100000) {
		fprintf(stderr, "bench-login-hold: N must be 1 to 100000\n");
		return 2;
	}
	raise_nofile(o.sessions);
	fds = calloc((size_t)o.sessions, sizeof(*fds));
	if (!fds) {
		fprintf(stderr, "bench-login-hold: out of memory\n");
		return 1;
	}
	for (done = 0; done < o.sessions; done++)
		if (login_one(&o, done, &fds[done]))
			break;
	if (done < o.sessions) {
		fprintf(stderr, "bench-login-hold: %ld of %ld sessions logged in\n",
			done, o.sessions);
		for (long i = 0; i < done; i++)
			close(fds[i]);
		free(fds);
		return 1;
	}
	printf("ready %ld\n", done);
	fflush(stdout);
	/* Idle until told to go: the targets measured send nothing to an
	 * idle session in the seconds this lasts (no NOP-In pings). */
	if (!fgets(line, sizeof(line), stdin) && ferror(stdin))
		fprintf(stderr, "bench-login-hold: stdin: %s\n", strerror(errno));
	for (long i = 0; i < done; i++)
		close(fds[i]);
	free(fds);
	printf("closed %ld\n", done);
	return 0;
}
