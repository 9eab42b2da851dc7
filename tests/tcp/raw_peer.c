/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The raw iSCSI peer of the wire, bad-input and terminate tests (see
 * raw_peer.h): iSCSI over a plain socket with its own CRC32C, the bring-up
 * of a libidm side against it, and the checks of how a bad PDU ended. It
 * shares the process with libidm, so every wait here keeps calling
 * idm_ctx_progress() instead of blocking.
 */
#include "raw_peer.h"

#include <check.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* CRC32C (Castagnoli), reflected, bit by bit: an independent
 * implementation to check the provider's, speed does not matter here. */
uint32_t h_crc32c(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1u)));
	}
	return ~crc;
}

/* iSCSI sends the digest in little-endian byte order (RFC 7143 13.1 and
 * the CRC32C test vectors). */
static void put_digest(uint8_t *p, uint32_t crc)
{
	p[0] = (uint8_t)crc;
	p[1] = (uint8_t)(crc >> 8);
	p[2] = (uint8_t)(crc >> 16);
	p[3] = (uint8_t)(crc >> 24);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -errno : fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

static void raw_init(struct h_raw *r, int fd)
{
	int one = 1;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->cmdsn = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void)nonblock(fd);
}

int h_raw_connect(struct h *h, struct h_raw *r)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	long end = now_ms() + 5000;

	if (fd < 0)
		return -errno;
	sa.sin_port = htons((uint16_t)h->port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	raw_init(r, fd);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 &&
	    errno != EINPROGRESS) {
		int e = -errno;

		close(fd);
		r->fd = -1;
		return e;
	}
	/* let libidm accept it */
	while (!h->t.conn && now_ms() < end)
		(void)idm_ctx_progress(h->ctx, 20);
	return h->t.conn ? 0 : -ETIMEDOUT;
}

int h_raw_listen(int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 4) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	(void)nonblock(fd);
	*port = ntohs(sa.sin_port);
	return fd;
}

int h_raw_accept(struct h *h, int lfd, struct h_raw *r, int timeout_ms)
{
	long end = now_ms() + timeout_ms;

	while (now_ms() < end) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd >= 0) {
			raw_init(r, fd);
			return 0;
		}
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		(void)idm_ctx_progress(h->ctx, 10);
	}
	return -ETIMEDOUT;
}

void h_raw_close(struct h_raw *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

void h_raw_end(struct h *h, struct h_raw *r)
{
	h_raw_close(r);
	h_fini(h);
}

int h_raw_write(struct h *h, struct h_raw *r, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	long end = now_ms() + 10000;

	static const size_t cuts[] = { 1, 47, 3, 49, 4093, 2, 517, 8191, 13 };

	while (len) {
		size_t want = len;
		ssize_t n;

		if (r->cut) {
			size_t c = cuts[r->cut_pos++ % (sizeof(cuts) / sizeof(cuts[0]))];

			if (c < want)
				want = c;
			(void)idm_ctx_progress(h->ctx, 0);
		}
		n = send(r->fd, p, want, MSG_NOSIGNAL);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			r->closed = true;
			return errno == ECONNRESET ? -EPIPE : -errno;
		}
		if (now_ms() > end)
			return -ETIMEDOUT;
		(void)idm_ctx_progress(h->ctx, 5);
	}
	return 0;
}

int h_raw_send_pdu(struct h *h, struct h_raw *r, const uint8_t bhs_in[48],
		   const void *ahs, size_t ahs_len, const void *data,
		   size_t data_len, unsigned flags)
{
	static uint8_t pkt[48 + 1024 + 4 + (1u << 18) + 8];
	uint8_t *p = pkt;
	size_t pad = idm_iscsi_pad4((uint32_t)data_len);

	if (ahs_len > 1020 || data_len > (1u << 18))
		return -EINVAL;
	memcpy(p, bhs_in, 48);
	if (!(flags & H_RAW_KEEP_LENGTHS)) {
		p[IDM_ISCSI_BHS_TOTAL_AHS_LEN] = (uint8_t)((ahs_len + 3) / 4);
		idm_iscsi_bhs_set_data_len(p, (uint32_t)data_len);
	}
	p += 48;
	if (ahs_len) {
		memcpy(p, ahs, ahs_len);
		p += ahs_len;
	}
	if (r->hd) {
		put_digest(p, h_crc32c(0, pkt, (size_t)(p - pkt)) ^
				      ((flags & H_RAW_BAD_HD) ? 1u : 0u));
		p += 4;
	}
	if (data_len) {
		uint8_t *d = p;

		memcpy(p, data, data_len);
		p += data_len;
		memset(p, 0, pad);
		p += pad;
		if (r->dd) {
			put_digest(p, h_crc32c(0, d, data_len + pad) ^
					      ((flags & H_RAW_BAD_DD) ? 1u : 0u));
			p += 4;
		}
	}
	return h_raw_write(h, r, pkt, (size_t)(p - pkt));
}

/* Read exactly len bytes (into buf, or discard if buf is NULL), folding
 * them into *crc when crc is not NULL. */
static int raw_read(struct h *h, struct h_raw *r, uint8_t *buf, size_t len,
		    long end, uint32_t *crc)
{
	uint8_t sink[4096];

	while (len) {
		size_t want = buf ? len : (len < sizeof(sink) ? len : sizeof(sink));
		ssize_t n = recv(r->fd, buf ? buf : sink, want, 0);

		if (n > 0) {
			if (crc)
				*crc = h_crc32c(*crc, buf ? buf : sink, (size_t)n);
			if (buf)
				buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			r->closed = true;
			return -ECONNRESET;
		}
		if (now_ms() > end)
			return -ETIMEDOUT;
		(void)idm_ctx_progress(h->ctx, 5);
	}
	return 0;
}

static uint32_t get_digest(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

int h_raw_recv_pdu(struct h *h, struct h_raw *r, uint8_t bhs[48],
		   uint8_t *data, size_t cap, uint32_t *data_len,
		   int timeout_ms)
{
	long end = now_ms() + timeout_ms;
	uint8_t hdr[48 + 1020 + 4], dig[4];
	uint32_t dlen, ahs, keep, crc = 0;
	int rc;

	/* nothing at all within the timeout is a timeout; once a PDU has
	 * begun it must arrive whole within the same time */
	rc = raw_read(h, r, hdr, 48, end, NULL);
	if (rc < 0)
		return rc;
	ahs = idm_iscsi_bhs_ahs_len(hdr);
	dlen = idm_iscsi_bhs_data_len(hdr);
	rc = raw_read(h, r, hdr + 48, ahs + (r->hd ? 4 : 0), end, NULL);
	if (rc < 0)
		return rc;
	memcpy(bhs, hdr, 48);
	/* check the sender's digests with our own CRC32C */
	if (r->hd && get_digest(hdr + 48 + ahs) != h_crc32c(0, hdr, 48 + ahs))
		return -EBADMSG;
	keep = dlen < cap ? dlen : (uint32_t)cap;
	if (keep) {
		rc = raw_read(h, r, data, keep, end, &crc);
		if (rc < 0)
			return rc;
	}
	rc = raw_read(h, r, NULL, dlen - keep + idm_iscsi_pad4(dlen), end, &crc);
	if (rc < 0)
		return rc;
	if (dlen && r->dd) {
		rc = raw_read(h, r, dig, 4, end, NULL);
		if (rc < 0)
			return rc;
		if (get_digest(dig) != crc)
			return -EBADMSG;
	}
	if (data_len)
		*data_len = dlen;
	return 0;
}

int h_raw_wait_closed(struct h *h, struct h_raw *r, int timeout_ms)
{
	long end = now_ms() + timeout_ms;
	uint8_t sink[4096];

	while (!r->closed) {
		ssize_t n = recv(r->fd, sink, sizeof(sink), 0);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			r->closed = true;
			break;
		}
		if (n > 0)
			continue;
		if (now_ms() > end)
			return -ETIMEDOUT;
		(void)idm_ctx_progress(h->ctx, 5);
	}
	return 0;
}

int h_raw_login_initiator(struct h *h, struct h_raw *r,
			  const struct h_params *p)
{
	uint8_t bhs[48] = { 0 };
	char keys[1024];
	uint8_t rsp[1024];
	uint32_t rlen = 0;
	size_t klen = h_login_keys(p, true, keys, sizeof(keys));
	int rc;

	bhs[0] = IDM_ISCSI_OP_LOGIN_REQ | IDM_ISCSI_OP_IMMEDIATE;
	bhs[1] = IDM_ISCSI_LOGIN_TRANSIT | (IDM_ISCSI_STAGE_OPERATIONAL << 2) |
		 IDM_ISCSI_STAGE_FULL_FEATURE;
	bhs[8] = 0x80;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, 0x4c000001u);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, r->cmdsn);
	rc = h_raw_send_pdu(h, r, bhs, NULL, 0, keys, klen, 0);
	if (rc < 0)
		return rc;
	rc = h_raw_recv_pdu(h, r, bhs, rsp, sizeof(rsp), &rlen, 5000);
	if (rc < 0)
		return rc;
	if (idm_iscsi_bhs_opcode(bhs) != IDM_ISCSI_OP_LOGIN_RSP || bhs[36] != 0)
		return -EPROTO;
	r->statsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_CMDSN);
	/* digests start with the first PDU after the final response */
	r->hd = p->header_digest;
	r->dd = p->data_digest;
	return 0;
}

int h_raw_login_target(struct h *h, struct h_raw *r, const struct h_params *p)
{
	uint8_t bhs[48];
	uint8_t req[1024];
	char keys[1024];
	uint32_t rlen = 0;
	size_t klen;
	int rc;

	rc = h_raw_recv_pdu(h, r, bhs, req, sizeof(req), &rlen, 5000);
	if (rc < 0)
		return rc;
	if (idm_iscsi_bhs_opcode(bhs) != IDM_ISCSI_OP_LOGIN_REQ)
		return -EPROTO;
	bhs[0] = IDM_ISCSI_OP_LOGIN_RSP;
	/* bhs[1] (T, CSG, NSG) and ISID, ITT stay as the initiator sent */
	idm_iscsi_put16(bhs + 14, 1);
	r->cmdsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_CMDSN);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, r->statsn++);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, r->cmdsn);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_MAX_CMDSN, r->cmdsn + 64);
	memset(bhs + 36, 0, 12);
	klen = h_login_keys(p, false, keys, sizeof(keys));
	rc = h_raw_send_pdu(h, r, bhs, NULL, 0, keys, klen, 0);
	if (rc < 0)
		return rc;
	r->hd = p->header_digest;
	r->dd = p->data_digest;
	return 0;
}

/* ---- a libidm side against the raw peer, and how a bad PDU ended ---- */

bool h_target_in_ffp(struct h *h)
{
	return h->t.ffp || h->t.terminate_count;
}

bool h_initiator_in_ffp(struct h *h)
{
	return h->i.ffp || h->i.terminate_count || h->login_failed;
}

void h_raw_evil_initiator(struct h *h, struct h_raw *r, const struct h_params *p,
		       uint32_t slot_cap)
{
	h_raw_evil_initiator_slots(h, r, p, slot_cap, 2);
}

void h_raw_evil_initiator_slots(struct h *h, struct h_raw *r,
				const struct h_params *p, uint32_t slot_cap,
				size_t n_slots)
{
	int rc = h_init(h, slot_cap, n_slots);

	ck_assert_msg(rc == 0, "h_init: %s", h->err);
	h->p = *p; /* the target declares p->tgt_mrdsl */
	rc = h_raw_connect(h, r);
	ck_assert_msg(rc == 0, "raw connect: %d", rc);
	rc = h_raw_login_initiator(h, r, p);
	ck_assert_msg(rc == 0, "raw login: %d (%s)", rc, h->err);
	rc = h_progress_until(h, h_target_in_ffp, 3000);
	ck_assert_msg(rc == 0 && h->t.ffp, "target not in full feature phase");
}

void h_raw_evil_target(struct h *h, struct h_raw *r, const struct h_params *p,
		    uint32_t slot_cap)
{
	int port = 0, lfd, rc;

	rc = h_init(h, slot_cap, 2);
	ck_assert_msg(rc == 0, "h_init: %s", h->err);
	lfd = h_raw_listen(&port);
	ck_assert_msg(lfd >= 0, "listen: %d", lfd);
	rc = h_connect_start(h, p, port, 5000);
	ck_assert_msg(rc == 0, "connect: %s", h->err);
	rc = h_raw_accept(h, lfd, r, 5000);
	h_raw_close(&(struct h_raw){ .fd = lfd });
	ck_assert_msg(rc == 0, "accept: %d", rc);
	rc = h_raw_login_target(h, r, p);
	ck_assert_msg(rc == 0, "raw target login: %d", rc);
	rc = h_progress_until(h, h_initiator_in_ffp, 3000);
	ck_assert_msg(rc == 0 && h->i.ffp, "initiator not in FFP: %s", h->err);
}

void h_raw_send_cmd(struct h *h, struct h_raw *r, bool write, uint32_t itt,
		 uint32_t len)
{
	uint8_t bhs[48];
	int rc;

	h_build_scsi_cmd(bhs, write, itt, r->cmdsn++, r->statsn + 1, len, 0,
			 true);
	rc = h_raw_send_pdu(h, r, bhs, NULL, 0, NULL, 0, 0);
	ck_assert_msg(rc == 0, "send command: %d", rc);
}

void h_raw_recv_op(struct h *h, struct h_raw *r, uint8_t op, uint8_t bhs[48])
{
	for (int i = 0; i < 64; i++) {
		uint32_t dlen;
		int rc = h_raw_recv_pdu(h, r, bhs, NULL, 0, &dlen, 3000);

		ck_assert_msg(rc == 0, "waiting for opcode 0x%02x: %d", op, rc);
		if (idm_iscsi_bhs_opcode(bhs) == op)
			return;
	}
	ck_abort_msg("opcode 0x%02x never came", op);
}

void h_raw_data_bhs(uint8_t bhs[48], uint8_t op, uint32_t itt, uint32_t ttt,
		 uint32_t sn, uint32_t offset, bool final)
{
	memset(bhs, 0, 48);
	bhs[0] = op;
	bhs[1] = final ? IDM_ISCSI_FLAG_FINAL : 0;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, itt);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_TTT, ttt);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_DATASN, sn);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_BUF_OFFSET, offset);
}

static bool all_guard(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != H_GUARD_BYTE)
			return false;
	return true;
}

bool h_raw_disk_untouched(struct h *h, uint32_t off, uint32_t len)
{
	return all_guard(h_disk_slot(h, 0) + off, len);
}

bool h_raw_ibuf_untouched(struct h *h, uint32_t off, uint32_t len)
{
	return all_guard(h->slots[0].mem + H_GUARD + off, len);
}

static bool t_term(struct h *h)
{
	return h->t.terminate_count > 0;
}

static bool i_term(struct h *h)
{
	return h->i.terminate_count > 0;
}

static enum h_raw_outcome failed_checks(struct h *h, struct h_raw *r,
				     struct h_side *s, const char *what)
{
	int rc;

	ck_assert_msg(s->error[0], "%s: idm_conn_error() empty at notify",
		      what);
	/* libidm must have closed its socket */
	rc = h_raw_wait_closed(h, r, 2000);
	ck_assert_msg(rc == 0, "%s: socket still open after the notify", what);
	h_progress_for(h, 100);
	h_raw_assert_failed_once(s, what);
	ck_assert_msg(h_check_guards(h) == 0, "%s: %s", what, h->err);
	h_log("%s: connection failed once, reason: %s", what, s->error);
	return H_RAW_FAILED;
}

void h_raw_assert_failed_once(const struct h_side *s, const char *what)
{
	ck_assert_msg(s->terminate_count == 1, "%s: %d terminate notifies",
		      what, s->terminate_count);
	ck_assert_msg(s->error[0], "%s: no error text", what);
	ck_assert_msg(s->cb_after_terminate == 0,
		      "%s: %d callbacks after terminate", what,
		      s->cb_after_terminate);
}

enum h_raw_outcome h_raw_target_outcome(struct h *h, struct h_raw *r,
				  bool allow_drop, const char *what)
{
	uint8_t bhs[48] = { 0 };
	int rc;

	(void)h_progress_until(h, t_term, 1500);
	if (h->t.terminate_count)
		return failed_checks(h, r, &h->t, what);
	ck_assert_msg(allow_drop, "%s: connection not failed within 1.5 s",
		      what);
	/* still usable? ping with a NOP-Out and wait for its NOP-In */
	h_build_nop_out(bhs, 0x7777, r->cmdsn);
	rc = h_raw_send_pdu(h, r, bhs, NULL, 0, NULL, 0, 0);
	ck_assert_msg(rc == 0, "%s: ping send: %d", what, rc);
	for (;;) {
		rc = h_raw_recv_pdu(h, r, bhs, NULL, 0, NULL, 2000);
		ck_assert_msg(rc == 0, "%s: no answer to the ping (%d), no terminate",
			      what, rc);
		if (idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_NOP_IN &&
		    idm_iscsi_bhs_itt(bhs) == 0x7777)
			break;
	}
	ck_assert_msg(h->t.terminate_count == 0 && h->t.cb_after_terminate == 0,
		      "%s: inconsistent state", what);
	ck_assert_msg(h_check_guards(h) == 0, "%s: %s", what, h->err);
	h_log("%s: connection stayed up (PDU %s), still answers a NOP-Out",
	      what, h->t.rejects ? "handed to the caller, which sent a Reject"
	      : h->t.unexpected ? "discarded or handed to the caller"
				: "discarded");
	return H_RAW_DROPPED;
}

void h_raw_expect_reject(struct h *h, struct h_raw *r, const uint8_t sent[48],
			 uint8_t reason, const char *what)
{
	uint8_t bhs[48], data[48];
	uint32_t len = 0;
	int rc;

	rc = h_raw_recv_pdu(h, r, bhs, data, sizeof(data), &len, 2000);
	ck_assert_msg(rc == 0, "%s: no Reject (%d); target error: %s", what, rc,
		      h->t.terminate_count ? h->t.error : "none");
	ck_assert_msg(idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_REJECT,
		      "%s: opcode 0x%02x instead of a Reject", what,
		      idm_iscsi_bhs_opcode(bhs));
	ck_assert_msg(bhs[2] == reason, "%s: Reject reason 0x%02x, expected 0x%02x",
		      what, bhs[2], reason);
	ck_assert_msg(len == 48 && memcmp(data, sent, 48) == 0,
		      "%s: the Reject does not carry the rejected BHS (%u bytes)",
		      what, len);
	ck_assert_int_eq(h->t.rejects, 1);
	ck_assert_int_eq(h_raw_target_outcome(h, r, true, what), H_RAW_DROPPED);
}

enum h_raw_outcome h_raw_initiator_outcome(struct h *h, struct h_raw *r,
				     bool allow_drop, const char *what)
{
	uint8_t bhs[48] = { 0 };
	int before, rc;

	(void)h_progress_until(h, i_term, 1500);
	if (h->i.terminate_count)
		return failed_checks(h, r, &h->i, what);
	ck_assert_msg(allow_drop, "%s: connection not failed within 1.5 s",
		      what);
	/* an unsolicited NOP-In must still reach control_notify */
	before = h->i.control_count;
	bhs[0] = IDM_ISCSI_OP_NOP_IN;
	bhs[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, IDM_ISCSI_RESERVED_TAG);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_TTT, IDM_ISCSI_RESERVED_TAG);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, r->statsn);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, r->cmdsn);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_MAX_CMDSN, r->cmdsn + 64);
	rc = h_raw_send_pdu(h, r, bhs, NULL, 0, NULL, 0, 0);
	ck_assert_msg(rc == 0, "%s: NOP-In send: %d", what, rc);
	for (int i = 0; i < 100 && h->i.control_count == before &&
			!h->i.terminate_count; i++)
		(void)idm_ctx_progress(h->ctx, 20);
	ck_assert_msg(h->i.control_count > before &&
			      h->i.last_opcode == IDM_ISCSI_OP_NOP_IN,
		      "%s: not failed, but a NOP-In no longer gets through",
		      what);
	ck_assert_msg(h_check_guards(h) == 0, "%s: %s", what, h->err);
	h_log("%s: connection stayed up (PDU discarded), a NOP-In still gets through",
	      what);
	return H_RAW_DROPPED;
}
