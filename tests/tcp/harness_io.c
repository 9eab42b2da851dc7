/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Harness workload: the initiator's READ/WRITE commands against the
 * target's RAM disk, with every byte and every guard checked.
 */
#include "harness.h"

#include <inttypes.h>
#include "harness_priv.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Byte i of the pattern seeded *x, i taken in order from 0: xorshift32,
 * one word at a time (cheap enough for 16 MiB). */
static uint8_t pattern_byte(uint32_t *x, size_t i)
{
	if ((i & 3) == 0) {
		*x ^= *x << 13;
		*x ^= *x >> 17;
		*x ^= *x << 5;
	}
	return (uint8_t)(*x >> ((i & 3) * 8));
}

void h_pattern(uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed ? seed : 1;

	for (size_t i = 0; i < len; i++)
		p[i] = pattern_byte(&x, i);
}

long h_pattern_check(const uint8_t *p, size_t len, uint32_t seed)
{
	uint32_t x = seed ? seed : 1;

	for (size_t i = 0; i < len; i++)
		if (p[i] != pattern_byte(&x, i))
			return (long)i;
	return -1;
}

static long guard_bad(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != H_GUARD_BYTE)
			return (long)i;
	return -1;
}

int h_check_guards(struct h *h)
{
	long bad;

	if (h_sg_check_guards(h) < 0)
		return -1;
	for (size_t s = 0; h->disk && s < h->n_disk_slots + 1; s++) {
		/* the guard before slot s (and after the last one) */
		size_t g = s * ((size_t)h->slot_cap + H_GUARD);

		bad = guard_bad(h->disk + g, H_GUARD);
		if (bad >= 0) {
			h_set_err(h, "disk guard before slot %zu overwritten at +%ld",
				s, bad);
			return -1;
		}
	}
	for (size_t s = 0; s < h->n_slots; s++) {
		struct h_slot *sl = &h->slots[s];

		if (!sl->mem)
			continue; /* freed by the test */
		bad = guard_bad(sl->mem, H_GUARD);
		if (bad < 0)
			bad = guard_bad(sl->mem + H_GUARD + sl->cap, H_GUARD);
		if (bad >= 0) {
			h_set_err(h, "initiator buffer %zu guard overwritten", s);
			return -1;
		}
	}
	return 0;
}

void h_build_scsi_cmd(uint8_t bhs[48], bool write, uint32_t itt,
		      uint32_t cmdsn, uint32_t expstatsn, uint32_t len,
		      uint64_t disk_off, bool final)
{
	memset(bhs, 0, 48);
	bhs[0] = IDM_ISCSI_OP_SCSI_CMD;
	bhs[1] = (final ? IDM_ISCSI_FLAG_FINAL : 0) |
		 (write ? IDM_ISCSI_CMD_WRITE : IDM_ISCSI_CMD_READ) | IDM_ISCSI_ATTR_SIMPLE;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, itt);
	idm_iscsi_put32(bhs + IDM_ISCSI_CMD_EDTL, len);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, cmdsn);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, expstatsn);
	bhs[IDM_ISCSI_CMD_CDB] = write ? H_CDB_WRITE : H_CDB_READ;
	idm_iscsi_put64(bhs + IDM_ISCSI_CMD_CDB + 2, disk_off);
}

void h_build_nop_out(uint8_t bhs[48], uint32_t itt, uint32_t cmdsn)
{
	memset(bhs, 0, 48);
	bhs[0] = IDM_ISCSI_OP_NOP_OUT | IDM_ISCSI_OP_IMMEDIATE;
	bhs[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, itt);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_TTT, IDM_ISCSI_RESERVED_TAG);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, cmdsn);
}

void h_slot_prepare(struct h *h, size_t s, bool write, uint32_t len)
{
	struct h_slot *sl = &h->slots[s];
	uint8_t *disk = h_disk_slot(h, s);

	h->rnd = h->rnd * 1103515245u + 12345u;
	sl->seed = h->rnd | 1;
	sl->write = write;
	sl->len = len;
	sl->done = false;
	sl->scsi_status = 0xff;
	sl->response = 0xff;
	sl->received = 0;
	sl->via_datain = false;
	/* everything outside [0, len) of both buffers is guard */
	memset(sl->mem + H_GUARD, H_GUARD_BYTE, sl->cap);
	memset(disk, H_GUARD_BYTE, h->slot_cap);
	if (write)
		h_pattern(sl->mem + H_GUARD, len, sl->seed);
	else
		h_pattern(disk, len, sl->seed);
	h_sg_sync(h, s, true);
}

int h_slot_start(struct h *h, size_t s, uint64_t disk_off)
{
	struct h_slot *sl = &h->slots[s];
	uint8_t bhs[48];
	uint32_t expstatsn;
	int rc;

	sl->itt = h->next_itt++;
	rc = idm_task_create(h->i.conn, sl->itt, &sl->task);
	if (rc < 0) {
		h_set_err(h, "idm_task_create: %s", idm_strerror(rc));
		return rc;
	}
	idm_task_set_arg(sl->task, sl);
	if (sl->write)
		rc = idm_task_set_data(sl->task, NULL, 0, 0, sl->buf, H_GUARD,
				       sl->len);
	else
		rc = idm_task_set_data(sl->task, sl->buf, H_GUARD, sl->len,
				       NULL, 0, 0);
	if (rc < 0) {
		h_set_err(h, "idm_task_set_data: %s", idm_strerror(rc));
		idm_deallocate_task_resources(sl->task);
		sl->task = NULL;
		return rc;
	}
	/* exp_statsn: a response callback on the progress thread moves it */
	h_lock(h);
	expstatsn = h->exp_statsn;
	h_unlock(h);
	h_build_scsi_cmd(bhs, sl->write, sl->itt, h->cmdsn++, expstatsn,
			 sl->len, disk_off, true);
	sl->busy = true;
	rc = idm_send_control(h->i.conn, bhs, NULL, 0, NULL, 0, sl->task, 0);
	if (rc < 0) {
		h_set_err(h, "idm_send_control(SCSI Command): %s", idm_strerror(rc));
		idm_deallocate_task_resources(sl->task);
		sl->task = NULL;
		sl->busy = false;
		return rc;
	}
	return 0;
}

/* Initiator control_notify for SCSI Response / Data-In with status. */
void h_io_response(struct h *h, idm_pdu *pdu)
{
	const uint8_t *bhs = idm_pdu_bhs(pdu);
	idm_task *task = idm_pdu_task(pdu);
	struct h_slot *sl = task ? idm_task_get_arg(task) : NULL;

	h->exp_statsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_CMDSN) + 1;
	if (idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_DATA_IN &&
	    !(bhs[1] & IDM_ISCSI_DATAIN_STATUS)) {
		/* data-only Data-In must not reach us */
		h_unexpected(&h->i, "Data-In without status delivered");
		return;
	}
	if (!sl || sl->task != task || !sl->busy ||
	    idm_iscsi_bhs_itt(bhs) != sl->itt) {
		h_unexpected(&h->i, "response for unknown ITT 0x%x",
			     idm_iscsi_bhs_itt(bhs));
		return;
	}
	sl->via_datain = idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_DATA_IN;
	sl->response = sl->via_datain ? 0 : bhs[2];
	sl->scsi_status = bhs[3];
	sl->received = idm_task_data_received(task);
	idm_deallocate_task_resources(task);
	sl->task = NULL;
	sl->busy = false;
	sl->done = true;
}

static int slot_verify(struct h *h, size_t s)
{
	struct h_slot *sl = &h->slots[s];
	const uint8_t *data = sl->write ? h_disk_slot(h, s) : sl->mem + H_GUARD;
	long bad;

	h_sg_sync(h, s, false);
	if (sl->response != 0 || sl->scsi_status != 0) {
		h_set_err(h, "%s of %u: response %u status %u",
			sl->write ? "write" : "read", sl->len, sl->response,
			sl->scsi_status);
		return -1;
	}
	if (!sl->write && sl->received != sl->len) {
		h_set_err(h, "read of %u: idm_task_data_received() = %u", sl->len,
			sl->received);
		return -1;
	}
	bad = h_pattern_check(data, sl->len, sl->seed);
	if (bad >= 0) {
		h_set_err(h, "%s of %u: data differs at byte %ld",
			sl->write ? "write" : "read", sl->len, bad);
		return -1;
	}
	/* nothing beyond the transfer was touched on either side */
	bad = guard_bad(h_disk_slot(h, s) + sl->len, h->slot_cap - sl->len);
	if (bad < 0)
		bad = guard_bad(sl->mem + H_GUARD + sl->len, sl->cap - sl->len);
	if (bad >= 0) {
		h_set_err(h, "%s of %u: bytes past the transfer overwritten",
			sl->write ? "write" : "read", sl->len);
		return -1;
	}
	return h_check_guards(h);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* With zero-copy Data-In (the TCP provider's IDM_TCP_ZEROCOPY) a
 * Put_Data completes only when the kernel let go of the caller's pages,
 * after the initiator acknowledged the data: the initiator may hold every
 * answer (status in the last Data-In) a moment before the target's last
 * completion. Give the target that moment, bounded; h_check_stats still
 * requires that nothing is left in flight. Without the knob no wait.
 * (Not h_progress_until: its condition runs under h->mu, and the stats
 * call takes the context's lock, which a threaded callback holds while
 * it waits for h->mu.) */
static void zc_settle(struct h *h)
{
	const char *zc = getenv("IDM_TCP_ZEROCOPY");
	long end = now_ms() + 2000;

	if (!zc || atoi(zc) <= 0 || strcmp(h_provider(), "tcp"))
		return;
	while (now_ms() < end) {
		struct idm_conn_stats st = { .size = sizeof(st) };

		if (idm_conn_get_stats(h->t.conn, &st) < 0 || !st.xfers_in_flight)
			return;
		if (h->threaded)
			usleep(500); /* the progress thread does the work */
		else
			(void)idm_ctx_progress(h->ctx, 10);
	}
}

int h_run_io(struct h *h, const struct h_io *ios, size_t n, unsigned qd,
	     int timeout_ms)
{
	const char *scale = getenv("IDM_TEST_TIME_SCALE");
	long end;
	size_t next = 0, finished = 0;
	struct h_stats st0;

	/* emulated RDMA is far slower than loopback TCP */
	if (scale && atoi(scale) > 1)
		timeout_ms *= atoi(scale);
	end = now_ms() + timeout_ms;
	if (h_stats_snapshot(h, &st0) < 0)
		return -1;
	if (qd > h->n_slots)
		qd = (unsigned)h->n_slots;
	while (finished < n) {
		/* reap and refill */
		for (size_t s = 0; s < qd; s++) {
			struct h_slot *sl = &h->slots[s];
			bool done, busy;

			/* a callback may be writing these on the progress
			 * thread; never call libidm with the lock held */
			h_lock(h);
			done = sl->done;
			sl->done = false;
			busy = sl->busy;
			h_unlock(h);
			if (done) {
				if (slot_verify(h, s) < 0)
					return -1;
				finished++;
			}
			if (!busy && next < n) {
				if (ios[next].len > sl->cap) {
					h_set_err(h, "io %zu larger than slots", next);
					return -1;
				}
				h_slot_prepare(h, s, ios[next].write, ios[next].len);
				if (h_slot_start(h, s, h_disk_slot_off(h, s) - H_GUARD) < 0)
					return -1;
				next++;
			}
		}
		if (finished == n)
			break;
		h_lock(h);
		if (h->i.terminate_count || h->t.terminate_count) {
			h_set_err(h, "connection failed: initiator '%s' target '%s'",
				h->i.error, h->t.error);
			h_unlock(h);
			return -1;
		}
		if (h->i.unexpected || h->t.unexpected || h->i.cb_after_terminate ||
		    h->t.cb_after_terminate) {
			h_set_err(h, "unexpected events: ini %d (%s) tgt %d (%s)",
				h->i.unexpected, h->i.why, h->t.unexpected,
				h->t.why);
			h_unlock(h);
			return -1;
		}
		h_unlock(h);
		if (now_ms() > end) {
			h_set_err(h, "timed out with %zu of %zu done", finished, n);
			return -1;
		}
		if (h->threaded) {
			usleep(200); /* the progress thread does the work */
			continue;
		}
		if (h->use_poll) {
			/* the caller-owned loop: sleep in poll() on the
			 * context fd; with I/O outstanding on loopback a
			 * quiet second means a lost wakeup */
			struct pollfd pfd = { .fd = idm_ctx_get_fd(h->ctx),
					      .events = POLLIN };

			if (poll(&pfd, 1, 1000) == 0) {
				h_set_err(h, "idm_ctx_get_fd() quiet for 1 s with %zu of %zu ios done (lost wakeup?)",
					  finished, n);
				return -1;
			}
			if (idm_ctx_progress(h->ctx, 0) < 0) {
				h_set_err(h, "idm_ctx_progress failed");
				return -1;
			}
			continue;
		}
		if (idm_ctx_progress(h->ctx, 50) < 0) {
			h_set_err(h, "idm_ctx_progress failed");
			return -1;
		}
	}
	zc_settle(h);
	return h_check_stats(h, &st0);
}

int h_stats_snapshot(struct h *h, struct h_stats *st)
{
	st->i.size = sizeof(st->i);
	st->t.size = sizeof(st->t);
	if (idm_conn_get_stats(h->i.conn, &st->i) < 0 ||
	    idm_conn_get_stats(h->t.conn, &st->t) < 0) {
		h_set_err(h, "idm_conn_get_stats failed");
		return -1;
	}
	return 0;
}

/* Every command answered, nothing else outstanding: what each side's
 * idm_conn_get_stats() counted since `before` mirrors the other's (the
 * difference, so that a login done outside libidm, as with an adopted
 * socket, does not count). Over TCP every PDU and byte one side sent, the
 * other received; over iSER the PDUs carried by Sends do (RDMA Writes
 * and Reads move data no receive-side counter sees). */
int h_check_stats(struct h *h, const struct h_stats *before)
{
	struct h_stats now;
	bool stream = !h_provider_rdma(); /* every byte in a PDU */

	if (h_stats_snapshot(h, &now) < 0)
		return -1;
#define MIRROR(a, b)                                                           \
	if (now.i.a - before->i.a != now.t.b - before->t.b) {                  \
		h_set_err(h, "stats: initiator " #a " +%" PRIu64               \
			  " != target " #b " +%" PRIu64,                       \
			  (uint64_t)(now.i.a - before->i.a),                   \
			  (uint64_t)(now.t.b - before->t.b));                  \
		return -1;                                                     \
	}
	MIRROR(pdus_tx, pdus_rx)
	MIRROR(pdus_rx, pdus_tx)
	if (stream) {
		MIRROR(bytes_tx, bytes_rx)
		MIRROR(bytes_rx, bytes_tx)
		MIRROR(data_in_pdus, data_in_pdus)
		MIRROR(data_out_pdus, data_out_pdus)
		MIRROR(r2t_pdus, r2t_pdus)
	}
#undef MIRROR
	/* iSER: Data-In comes by RDMA Write and immediate data is gathered
	 * from the caller's buffer, so the initiator copies no payload */
	if (!stream && now.i.payload_copies != before->i.payload_copies) {
		h_set_err(h, "stats: the iSER initiator copied payload %" PRIu64
			  " times (%" PRIu64 " bytes)",
			  now.i.payload_copies - before->i.payload_copies,
			  now.i.payload_copy_bytes - before->i.payload_copy_bytes);
		return -1;
	}
	if (now.i.header_digest_errors + now.i.data_digest_errors +
	    now.t.header_digest_errors + now.t.data_digest_errors) {
		h_set_err(h, "stats: digest errors counted on a clean run");
		return -1;
	}
	if (now.i.xfers_in_flight || now.t.xfers_in_flight) {
		h_set_err(h, "stats: transfers in flight after the run (%u/%u)",
			  now.i.xfers_in_flight, now.t.xfers_in_flight);
		return -1;
	}
	return 0;
}

void h_assert_io_clean(struct h *h, int rc)
{
	ck_assert_msg(rc == 0, "I/O: %s", h->err);
	ck_assert_int_eq(h->i.terminate_count + h->t.terminate_count, 0);
	ck_assert_int_eq(h->i.cb_after_terminate + h->t.cb_after_terminate, 0);
	ck_assert_msg(h->i.unexpected == 0, "initiator: %s", h->i.why);
	ck_assert_msg(h->t.unexpected == 0, "target: %s", h->t.why);
}
