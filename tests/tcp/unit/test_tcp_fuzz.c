/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Seeded random PDUs over 127.0.0.1. Against a libidm target, after a
 * real login, a raw peer sends plausible-but-wrong SCSI Commands,
 * Data-Out (some answering real R2Ts), SNACKs and junk; against a libidm
 * initiator with four commands outstanding, a raw target sends Data-In,
 * R2Ts, responses and junk. Whatever arrives, the libidm side must go on
 * or fail the connection once with a reason; never crash or touch memory
 * it does not own (run it under ASan), and never place data outside the
 * task's buffer (guard bytes checked).
 * Bounded: a fixed number of rounds, each with a time limit.
 */
#include <libidm/idm.h>
#include <libidm/iscsi.h>

#include <arpa/inet.h>
#include <check.h>
#include "check_suite.h"
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 150
#define BUF    65536
#define GUARD  256

static const char kv[] =
	"ImmediateData=Yes\0InitialR2T=No\0FirstBurstLength=16384\0"
	"MaxBurstLength=32768\0MaxOutstandingR2T=2\0ErrorRecoveryLevel=1\0"
	"TargetRecvDataSegmentLength=8192\0InitiatorRecvDataSegmentLength="
	"8192\0";

struct fz {
	idm_ctx *ctx;
	idm_portal *portal;
	idm_conn *tgt;
	bool ffp;
	int terminated;
	uint8_t *mem; /* GUARD | BUF | GUARD */
	idm_buf *buf;
	idm_task *busy; /* the task owning the buffer */
	uint32_t rng;
	int fd;
	uint8_t rx[1 << 16];
	size_t rxlen;
	uint32_t ttt[8], ttt_itt[8], ttt_off[8], ttt_len[8];
	unsigned nttt;
};

static uint32_t rnd(struct fz *f)
{
	f->rng = f->rng * 1664525u + 1013904223u;
	return f->rng >> 8;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void t_control(idm_conn *c, idm_pdu *pdu, void *arg)
{
	struct fz *f = arg;
	const uint8_t *bhs = idm_pdu_bhs(pdu);
	idm_task *t = idm_pdu_task(pdu);
	uint8_t rsp[48] = { 0 };

	/* a Login Request in full feature phase is junk handed up to us
	 * (doc/api.md 7.1), like every PDU that matches no task */
	if (idm_pdu_opcode(pdu) == IDM_ISCSI_OP_LOGIN_REQ && !f->ffp) {
		ck_assert_int_eq(idm_notice_key_values(c, kv, sizeof(kv) - 1),
				 0);
		rsp[0] = IDM_ISCSI_OP_LOGIN_RSP;
		rsp[1] = IDM_ISCSI_LOGIN_TRANSIT | (IDM_ISCSI_STAGE_OPERATIONAL << 2) |
			 IDM_ISCSI_STAGE_FULL_FEATURE;
		idm_iscsi_put32(rsp + 16, idm_iscsi_bhs_itt(bhs));
		ck_assert_int_eq(idm_enable_datamover(c, rsp, NULL, 0), 0);
		f->ffp = true;
		return;
	}
	if (idm_pdu_opcode(pdu) != IDM_ISCSI_OP_SCSI_CMD)
		return; /* NOP-Out, TMF, SNACK, junk...: nothing to do */
	ck_assert_ptr_nonnull(t);
	if (f->busy) {
		idm_deallocate_task_resources(t);
		return;
	}
	{
		uint32_t edtl = idm_iscsi_get32(bhs + IDM_ISCSI_CMD_EDTL);
		uint32_t len = edtl < BUF ? edtl : BUF;
		uint8_t tmpl[48] = { 0 };
		int r;

		if (!len) {
			idm_deallocate_task_resources(t);
			return;
		}
		idm_iscsi_put32(tmpl + 16, idm_iscsi_bhs_itt(bhs));
		if (bhs[1] & IDM_ISCSI_CMD_WRITE) {
			tmpl[0] = IDM_ISCSI_OP_R2T;
			r = idm_get_data(t, tmpl, f->buf, GUARD, 0, len, 0);
		} else {
			tmpl[0] = IDM_ISCSI_OP_DATA_IN;
			r = idm_put_data(t, tmpl, f->buf, GUARD, 0, len,
					 (rnd(f) & 1) ? IDM_PUT_ACK : 0);
		}
		if (r < 0) {
			idm_deallocate_task_resources(t);
			return;
		}
		f->busy = t;
	}
}

static void t_completion(idm_task *t, enum idm_data_dir dir, uint32_t off,
			 uint32_t len, uint32_t sn, int status, void *arg)
{
	struct fz *f = arg;

	(void)dir, (void)off, (void)len, (void)sn, (void)status;
	ck_assert_ptr_eq(t, f->busy);
	idm_deallocate_task_resources(t);
	f->busy = NULL;
}

static void t_terminated(idm_conn *c, int reason, void *arg)
{
	struct fz *f = arg;

	(void)c;
	ck_assert_int_lt(reason, 0);
	ck_assert_str_ne(idm_conn_error(c), "");
	f->terminated++;
	f->busy = NULL; /* the provider let go; tasks die with the conn */
}

static const struct idm_conn_cbs cbs = {
	.size = sizeof(struct idm_conn_cbs),
	.control_notify = t_control,
	.data_completion_notify = t_completion,
	.connection_terminate_notify = t_terminated,
};

static int t_accept(idm_portal *p, idm_conn *c, void *arg)
{
	struct fz *f = arg;

	(void)p;
	if (f->tgt)
		return -EBUSY;
	f->tgt = c;
	return idm_conn_set_cbs(c, &cbs, f);
}

/* Read what the target sent; note the R2Ts. */
static void drain(struct fz *f)
{
	ssize_t n;

	while ((n = recv(f->fd, f->rx + f->rxlen, sizeof(f->rx) - f->rxlen,
			 MSG_DONTWAIT)) > 0) {
		f->rxlen += (size_t)n;
		for (;;) {
			size_t need;
			if (f->rxlen < 48)
				break;
			need = 48 + idm_iscsi_bhs_ahs_len(f->rx) +
			       idm_iscsi_bhs_data_len(f->rx) +
			       idm_iscsi_pad4(idm_iscsi_bhs_data_len(f->rx));
			if (need > sizeof(f->rx)) {
				f->rxlen = 0; /* not ours to parse further */
				break;
			}
			if (f->rxlen < need)
				break;
			if (idm_iscsi_bhs_opcode(f->rx) == IDM_ISCSI_OP_R2T) {
				unsigned k = f->nttt++ % 8;
				f->ttt[k] = idm_iscsi_get32(f->rx + 20);
				f->ttt_itt[k] = idm_iscsi_bhs_itt(f->rx);
				f->ttt_off[k] = idm_iscsi_get32(f->rx + 40);
				f->ttt_len[k] = idm_iscsi_get32(f->rx + 44);
			}
			memmove(f->rx, f->rx + need, f->rxlen - need);
			f->rxlen -= need;
		}
	}
}

/* Send all of p, pumping the target meanwhile. false: peer gone. */
static bool push(struct fz *f, const uint8_t *p, size_t len)
{
	double end = now_ms() + 2000;

	while (len && now_ms() < end) {
		ssize_t n = send(f->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN)
			return false;
		if (n > 0) {
			p += n;
			len -= (size_t)n;
		}
		ck_assert_int_ge(idm_ctx_progress(f->ctx, 0), 0);
		drain(f);
	}
	return len == 0;
}

static size_t make_pdu(struct fz *f, uint8_t *out)
{
	uint8_t *b = out;
	uint32_t kind = rnd(f) % 10, dsl = 0, ahs = 0;
	static const uint8_t ops[] = {
		0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x10
	};

	memset(b, 0, 48);
	idm_iscsi_put32(b + 16, 0x100 + rnd(f) % 4);
	switch (kind) {
	case 0:
	case 1:
	case 2: /* SCSI Command, mostly writes */
		b[0] = IDM_ISCSI_OP_SCSI_CMD;
		b[1] = (uint8_t)((rnd(f) & 1 ? IDM_ISCSI_CMD_WRITE
					     : IDM_ISCSI_CMD_READ) |
				 (rnd(f) % 4 ? IDM_ISCSI_FLAG_FINAL : 0) |
				 (rnd(f) % 8 == 0 ? 0x60 : 0));
		idm_iscsi_put32(b + 20,
			    rnd(f) % 5 ? rnd(f) % (BUF + 4096) : rnd(f) << 8);
		dsl = rnd(f) % 3 ? 0 : rnd(f) % (rnd(f) % 8 ? 8193 : 20000);
		break;
	case 3:
	case 4:
	case 5:
	case 6: /* Data-Out, often for a real R2T */
		b[0] = IDM_ISCSI_OP_DATA_OUT;
		b[1] = rnd(f) & 1 ? IDM_ISCSI_FLAG_FINAL : 0;
		dsl = rnd(f) % (rnd(f) % 8 ? 8192 : 9000) +
		      (rnd(f) % 8 == 0 ? 0 : 1);
		if (f->nttt && rnd(f) % 3) {
			unsigned k = rnd(f) % (f->nttt < 8 ? f->nttt : 8);
			idm_iscsi_put32(b + 16, f->ttt_itt[k]);
			idm_iscsi_put32(b + 20, f->ttt[k]);
			idm_iscsi_put32(b + 40,
				    f->ttt_off[k] +
					    (rnd(f) % 3 ? 0 : rnd(f) % 70000));
			if (rnd(f) % 2 && f->ttt_len[k] < dsl)
				dsl = f->ttt_len[k];
			idm_iscsi_put32(b + 36, rnd(f) % 4 ? 0 : rnd(f) % 3);
		} else {
			idm_iscsi_put32(b + 20,
				    rnd(f) % 2 ? IDM_ISCSI_RESERVED_TAG : rnd(f));
			idm_iscsi_put32(b + 40, rnd(f) % 2 ? (rnd(f) % 4) * 8192
						       : rnd(f) << 4);
			idm_iscsi_put32(b + 36, rnd(f) % 4);
		}
		break;
	case 7: /* SNACK (DataACK or other) */
		b[0] = IDM_ISCSI_OP_SNACK_REQ;
		b[1] = (uint8_t)(0x80 | (rnd(f) % 4));
		idm_iscsi_put32(b + 20, rnd(f) % 2 ? 0x1000 + rnd(f) % 64 : rnd(f));
		idm_iscsi_put32(b + 40, rnd(f) % 32);
		break;
	default: /* anything */
		b[0] = rnd(f) % 2 ? ops[rnd(f) % sizeof(ops)] : (uint8_t)rnd(f);
		b[1] = (uint8_t)rnd(f);
		for (int i = 8; i < 48; i++)
			b[i] = (uint8_t)rnd(f);
		dsl = rnd(f) % 4 ? rnd(f) % 10000 : rnd(f) & 0xffffff;
		ahs = rnd(f) % 6 == 0 ? rnd(f) % 256 : 0;
		break;
	}
	if (dsl > 20000 && kind < 8)
		dsl = 20000;
	b[4] = (uint8_t)ahs;
	idm_iscsi_bhs_set_data_len(b, dsl);
	/* send at most 48 + 1024 + 20000 bytes of it */
	{
		size_t body = ahs * 4u +
			      (dsl > 20000 ? 20000 : dsl + idm_iscsi_pad4(dsl));
		if (body > 21024)
			body = 21024;
		for (size_t i = 0; i < body; i++)
			b[48 + i] = (uint8_t)rnd(f);
		return 48 + body;
	}
}

static void one_round(struct fz *f, int port, uint32_t seed)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)port) };
	static uint8_t pdu[48 + 21024 + 8];
	uint8_t login[48] = { 0 };
	double end;
	int one = 1, n = 0;

	f->rng = seed;
	f->tgt = NULL;
	f->ffp = false;
	f->terminated = 0;
	f->busy = NULL;
	f->rxlen = 0;
	f->nttt = 0;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(f->fd, 0);
	setsockopt(f->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	ck_assert_int_eq(connect(f->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	login[0] = IDM_ISCSI_OP_LOGIN_REQ | IDM_ISCSI_OP_IMMEDIATE;
	login[1] = IDM_ISCSI_LOGIN_TRANSIT | (IDM_ISCSI_STAGE_OPERATIONAL << 2) |
		   IDM_ISCSI_STAGE_FULL_FEATURE;
	ck_assert(push(f, login, 48));
	end = now_ms() + 3000;
	while (!f->ffp && now_ms() < end) {
		ck_assert_int_ge(idm_ctx_progress(f->ctx, 5), 0);
		drain(f);
	}
	ck_assert_msg(f->ffp, "seed %u: no login", seed);
	n = 1 + (int)(rnd(f) % 25);
	for (int i = 0; i < n && !f->terminated; i++)
		if (!push(f, pdu, make_pdu(f, pdu)))
			break;
	end = now_ms() + 20;
	while (now_ms() < end) {
		ck_assert_int_ge(idm_ctx_progress(f->ctx, 2), 0);
		drain(f);
	}
	ck_assert_msg(f->terminated <= 1, "seed %u: %d terminate notifies",
		      seed, f->terminated);
	for (int i = 0; i < GUARD; i++)
		ck_assert_msg(
			f->mem[i] == 0xa5 && f->mem[GUARD + BUF + i] == 0xa5,
			"seed %u: write outside the Get_Data buffer", seed);
	if (f->busy)
		idm_deallocate_task_resources(f->busy);
	f->busy = NULL;
	idm_conn_destroy(f->tgt);
	close(f->fd);
}

START_TEST(fuzz_target)
{
	static struct fz f;
	struct idm_portal_attr pa = { .size = sizeof(pa),
				      .providers = "tcp",
				      .accept = t_accept,
				      .arg = &f };
	/* TCP_FUZZ_SEED / TCP_FUZZ_ROUNDS replay one seed or run longer */
	const char *env = getenv("TCP_FUZZ_SEED"),
		   *nr = getenv("TCP_FUZZ_ROUNDS");
	uint32_t base = env ? (uint32_t)strtoul(env, NULL, 0) : 20261123u;
	int rounds = nr ? atoi(nr) : env ? 1 : ROUNDS;

	ck_assert_int_eq(idm_ctx_create(NULL, &f.ctx), 0);
	ck_assert_int_eq(
		idm_portal_create(f.ctx, "127.0.0.1", "0", &pa, &f.portal), 0);
	f.mem = malloc(BUF + 2 * GUARD);
	ck_assert_ptr_nonnull(f.mem);
	memset(f.mem, 0xa5, BUF + 2 * GUARD);
	ck_assert_int_eq(idm_buf_create(f.ctx, f.mem, BUF + 2 * GUARD, &f.buf),
			 0);
	for (int r = 0; r < rounds; r++)
		one_round(&f, idm_portal_port(f.portal), base + (uint32_t)r);
	idm_buf_destroy(f.buf);
	free(f.mem);
	idm_portal_destroy(f.portal);
	idm_ctx_destroy(f.ctx);
}
END_TEST

/* ---- initiator side: a raw target answers with random PDUs ---------- */

#define NTASK 4
#define TBUF  65536

static const char ikv[] =
	"ImmediateData=Yes\0InitialR2T=No\0FirstBurstLength=16384\0"
	"MaxBurstLength=32768\0ErrorRecoveryLevel=1\0"
	"TargetRecvDataSegmentLength=8192\0InitiatorRecvDataSegmentLength="
	"8192\0";

struct fi {
	idm_ctx *ctx;
	idm_conn *ini;
	bool connected, ffp;
	int terminated;
	uint32_t rng;
	int lfd, fd;
	uint8_t *mem[NTASK]; /* GUARD | TBUF | GUARD */
	idm_buf *buf[NTASK];
	idm_task *task[NTASK];
	uint32_t len[NTASK];
	uint8_t rx[1 << 16];
	size_t rxlen;
	bool login_seen;
};

static uint32_t irnd(struct fi *f)
{
	f->rng = f->rng * 1664525u + 1013904223u;
	return f->rng >> 8;
}

static void i_connected(idm_conn *c, int status, void *arg)
{
	struct fi *f = arg;
	uint8_t login[48] = { 0 };

	ck_assert_int_eq(status, 0);
	f->connected = true;
	login[0] = IDM_ISCSI_OP_LOGIN_REQ | IDM_ISCSI_OP_IMMEDIATE;
	login[1] = IDM_ISCSI_LOGIN_TRANSIT | (IDM_ISCSI_STAGE_OPERATIONAL << 2) |
		   IDM_ISCSI_STAGE_FULL_FEATURE;
	idm_iscsi_put32(login + 16, 0x4c);
	ck_assert_int_eq(idm_send_control(c, login, NULL, 0, NULL, 0, NULL, 0),
			 0);
}

static void i_control(idm_conn *c, idm_pdu *pdu, void *arg)
{
	struct fi *f = arg;

	if (idm_pdu_opcode(pdu) == IDM_ISCSI_OP_LOGIN_RSP && !f->ffp) {
		ck_assert_int_eq(idm_notice_key_values(c, ikv, sizeof(ikv) - 1),
				 0);
		ck_assert_int_eq(idm_enable_datamover(c, NULL, NULL, 0), 0);
		f->ffp = true;
	}
}

static void i_terminated(idm_conn *c, int reason, void *arg)
{
	struct fi *f = arg;

	ck_assert_int_lt(reason, 0);
	ck_assert_str_ne(idm_conn_error(c), "");
	f->terminated++;
}

static const struct idm_conn_cbs icbs = {
	.size = sizeof(struct idm_conn_cbs),
	.connected = i_connected,
	.control_notify = i_control,
	.connection_terminate_notify = i_terminated,
};

/* Consume what the initiator sent; true once the Login Request is in. */
static void idrain(struct fi *f)
{
	ssize_t n;

	if (f->fd < 0)
		return;
	while ((n = recv(f->fd, f->rx + f->rxlen, sizeof(f->rx) - f->rxlen,
			 MSG_DONTWAIT)) > 0) {
		f->rxlen += (size_t)n;
		for (;;) {
			size_t need;
			if (f->rxlen < 48)
				break;
			need = 48 + idm_iscsi_bhs_ahs_len(f->rx) +
			       idm_iscsi_bhs_data_len(f->rx) +
			       idm_iscsi_pad4(idm_iscsi_bhs_data_len(f->rx));
			if (need > sizeof(f->rx)) {
				f->rxlen = 0;
				break;
			}
			if (f->rxlen < need)
				break;
			if (idm_iscsi_bhs_opcode(f->rx) == IDM_ISCSI_OP_LOGIN_REQ)
				f->login_seen = true;
			memmove(f->rx, f->rx + need, f->rxlen - need);
			f->rxlen -= need;
		}
	}
}

static bool ipush(struct fi *f, const uint8_t *p, size_t len)
{
	double end = now_ms() + 2000;

	while (len && now_ms() < end) {
		ssize_t n = send(f->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN)
			return false;
		if (n > 0) {
			p += n;
			len -= (size_t)n;
		}
		ck_assert_int_ge(idm_ctx_progress(f->ctx, 0), 0);
		idrain(f);
	}
	return len == 0;
}

static size_t make_tpdu(struct fi *f, uint8_t *b, uint32_t *datasn)
{
	unsigned k = irnd(f) % NTASK;
	uint32_t kind = irnd(f) % 10, dsl = 0;
	static const uint8_t ops[] = { 0x20, 0x21, 0x22, 0x24, 0x25,
				       0x26, 0x31, 0x32, 0x3f };

	memset(b, 0, 48);
	idm_iscsi_put32(b + 16, irnd(f) % 8 ? 0x10 + k : irnd(f));
	switch (kind) {
	case 0:
	case 1:
	case 2:
	case 3: /* Data-In, often right */
		b[0] = IDM_ISCSI_OP_DATA_IN;
		b[1] = (uint8_t)(irnd(f) % 4
					 ? 0
					 : 0x80 | (irnd(f) % 2) |
						   (irnd(f) % 2 ? 0x40 : 0));
		dsl = irnd(f) % 8 ? irnd(f) % 8193 : irnd(f) % 20000;
		idm_iscsi_put32(b + 36, irnd(f) % 4 ? datasn[k] : irnd(f) % 8);
		idm_iscsi_put32(b + 40, irnd(f) % 4 ? irnd(f) % TBUF : irnd(f));
		idm_iscsi_put32(b + 20, irnd(f));
		if (idm_iscsi_get32(b + 36) == datasn[k])
			datasn[k]++;
		break;
	case 4:
	case 5: /* R2T */
		b[0] = IDM_ISCSI_OP_R2T;
		b[1] = 0x80;
		idm_iscsi_put32(b + 20, irnd(f) % 8 ? 0x500 + irnd(f) % 16
						: IDM_ISCSI_RESERVED_TAG);
		idm_iscsi_put32(b + 36, irnd(f) % 3);
		idm_iscsi_put32(b + 40, irnd(f) % 4 ? irnd(f) % TBUF : irnd(f));
		idm_iscsi_put32(b + 44,
			    irnd(f) % 4 ? 1 + irnd(f) % 32768 : irnd(f));
		if (irnd(f) % 16 == 0)
			dsl = 4;
		break;
	case 6: /* SCSI Response, maybe with sense */
		b[0] = IDM_ISCSI_OP_SCSI_RSP;
		b[1] = 0x80;
		dsl = irnd(f) % 3 ? 0 : irnd(f) % 300;
		break;
	default:
		b[0] = irnd(f) % 2 ? ops[irnd(f) % sizeof(ops)]
				   : (uint8_t)irnd(f);
		b[1] = (uint8_t)irnd(f);
		for (int i = 8; i < 48; i++)
			b[i] = (uint8_t)irnd(f);
		dsl = irnd(f) % 4 ? irnd(f) % 10000 : irnd(f) & 0xffffff;
		b[4] = irnd(f) % 6 == 0 ? (uint8_t)irnd(f) : 0;
		break;
	}
	idm_iscsi_bhs_set_data_len(b, dsl);
	{
		size_t body = b[4] * 4u +
			      (dsl > 20000 ? 20000 : dsl + idm_iscsi_pad4(dsl));
		if (body > 21024)
			body = 21024;
		for (size_t i = 0; i < body; i++)
			b[48 + i] = (uint8_t)irnd(f);
		return 48 + body;
	}
}

static void iround(struct fi *f, int port, uint32_t seed)
{
	struct idm_conn_attr ca = {
		.size = sizeof(ca), .provider = "tcp", .cbs = &icbs, .arg = f
	};
	static uint8_t pdu[48 + 21024 + 8];
	uint8_t rsp[48] = { 0 };
	uint32_t datasn[NTASK] = { 0 };
	char ps[16];
	double end;
	int n;

	f->rng = seed;
	f->connected = f->ffp = f->login_seen = false;
	f->terminated = 0;
	f->rxlen = 0;
	f->fd = -1;
	snprintf(ps, sizeof(ps), "%d", port);
	ck_assert_int_eq(
		idm_conn_connect(f->ctx, "127.0.0.1", ps, &ca, &f->ini), 0);
	end = now_ms() + 3000;
	while (f->fd < 0 && now_ms() < end) {
		ck_assert_int_ge(idm_ctx_progress(f->ctx, 2), 0);
		f->fd = accept(f->lfd, NULL, NULL);
	}
	ck_assert_int_ge(f->fd, 0);
	while (!f->login_seen && now_ms() < end) {
		ck_assert_int_ge(idm_ctx_progress(f->ctx, 2), 0);
		idrain(f);
	}
	ck_assert_msg(f->login_seen, "seed %u: no Login Request", seed);
	rsp[0] = IDM_ISCSI_OP_LOGIN_RSP;
	rsp[1] = IDM_ISCSI_LOGIN_TRANSIT | (IDM_ISCSI_STAGE_OPERATIONAL << 2) |
		 IDM_ISCSI_STAGE_FULL_FEATURE;
	idm_iscsi_put32(rsp + 16, 0x4c);
	ck_assert(ipush(f, rsp, 48));
	while (!f->ffp && now_ms() < end) {
		ck_assert_int_ge(idm_ctx_progress(f->ctx, 2), 0);
		idrain(f);
	}
	ck_assert_msg(f->ffp, "seed %u: no full feature phase", seed);
	for (unsigned k = 0; k < NTASK; k++) {
		uint8_t cmd[48] = { 0 };
		bool write = irnd(f) & 1;

		f->len[k] = 1 + irnd(f) % TBUF;
		ck_assert_int_eq(idm_task_create(f->ini, 0x10 + k, &f->task[k]),
				 0);
		if (write)
			ck_assert_int_eq(idm_task_set_data(f->task[k], NULL, 0,
							   0, f->buf[k], GUARD,
							   f->len[k]),
					 0);
		else
			ck_assert_int_eq(
				idm_task_set_data(f->task[k], f->buf[k], GUARD,
						  f->len[k], NULL, 0, 0),
				0);
		cmd[0] = IDM_ISCSI_OP_SCSI_CMD;
		cmd[1] = (uint8_t)(0x80 |
				   (write ? IDM_ISCSI_CMD_WRITE : IDM_ISCSI_CMD_READ));
		idm_iscsi_put32(cmd + 16, 0x10 + k);
		idm_iscsi_put32(cmd + 20, f->len[k]);
		ck_assert_int_eq(idm_send_control(f->ini, cmd, NULL, 0, NULL, 0,
						  f->task[k], 0),
				 0);
	}
	n = 1 + (int)(irnd(f) % 25);
	for (int i = 0; i < n && !f->terminated; i++)
		if (!ipush(f, pdu, make_tpdu(f, pdu, datasn)))
			break;
	end = now_ms() + 20;
	while (now_ms() < end) {
		ck_assert_int_ge(idm_ctx_progress(f->ctx, 2), 0);
		idrain(f);
	}
	ck_assert_msg(f->terminated <= 1, "seed %u: %d terminate notifies",
		      seed, f->terminated);
	for (unsigned k = 0; k < NTASK; k++) {
		for (int i = 0; i < GUARD; i++)
			ck_assert_msg(
				f->mem[k][i] == 0xa5 &&
					f->mem[k][GUARD + TBUF + i] == 0xa5,
				"seed %u: write outside a read buffer", seed);
		ck_assert_msg(idm_task_data_received(f->task[k]) <= f->len[k],
			      "seed %u: more placed than the buffer holds",
			      seed);
		idm_deallocate_task_resources(f->task[k]);
	}
	idm_conn_destroy(f->ini);
	close(f->fd);
}

START_TEST(fuzz_initiator)
{
	static struct fi f;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	const char *env = getenv("TCP_FUZZ_SEED"),
		   *nr = getenv("TCP_FUZZ_ROUNDS");
	uint32_t base = env ? (uint32_t)strtoul(env, NULL, 0) : 20261123u;
	int rounds = nr ? atoi(nr) : env ? 1 : ROUNDS;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	ck_assert_int_ge(f.lfd, 0);
	ck_assert_int_eq(bind(f.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(f.lfd, 4), 0);
	ck_assert_int_eq(getsockname(f.lfd, (struct sockaddr *)&sa, &sl), 0);
	ck_assert_int_eq(idm_ctx_create(NULL, &f.ctx), 0);
	for (unsigned k = 0; k < NTASK; k++) {
		f.mem[k] = malloc(TBUF + 2 * GUARD);
		ck_assert_ptr_nonnull(f.mem[k]);
		memset(f.mem[k], 0xa5, TBUF + 2 * GUARD);
		ck_assert_int_eq(idm_buf_create(f.ctx, f.mem[k],
						TBUF + 2 * GUARD, &f.buf[k]),
				 0);
	}
	for (int r = 0; r < rounds; r++)
		iround(&f, ntohs(sa.sin_port), base + (uint32_t)r);
	for (unsigned k = 0; k < NTASK; k++) {
		idm_buf_destroy(f.buf[k]);
		free(f.mem[k]);
	}
	idm_ctx_destroy(f.ctx);
	close(f.lfd);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { fuzz_target, fuzz_initiator, NULL };

	return test_suite_run_case("tcp_fuzz", "fuzz", 60, tests);
}
