/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Teardown with I/O in flight:
 *  - idm_connection_terminate() on either side while 16 MiB reads and
 *    writes move: afterwards no callback of that connection runs, its
 *    buffers are the caller's at once (we free them: ASan catches a late
 *    touch), and the peer sees exactly one terminate notify;
 *  - idm_deallocate_task_resources() of tasks whose Put_Data, Get_Data or
 *    write data are still pending: no callback for the task afterwards,
 *    its buffer is freed at once.
 */
#include "raw_peer.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define BIG (16u << 20)

static void start_mixed(struct h *h, unsigned n)
{
	for (unsigned s = 0; s < n; s++) {
		h_slot_prepare(h, s, s & 1, BIG);
		ck_assert_msg(h_slot_start(h, s, h_disk_slot_off(h, s) - H_GUARD) == 0,
			      "start: %s", h->err);
	}
}

/* A few progress passes: enough for data to move, far too few for
 * 16 MiB to finish. */
static void progress_a_bit(struct h *h)
{
	for (int i = 0; i < 20; i++)
		(void)idm_ctx_progress(h->ctx, 1);
}

/* Progress until some read data has landed at the initiator: the
 * transfers are then really in the middle. */
static void progress_until_moving(struct h *h)
{
	for (int i = 0; i < 2000; i++) {
		for (size_t s = 0; s < h->n_slots; s++)
			if (h->slots[s].busy && !h->slots[s].write &&
			    idm_task_data_received(h->slots[s].task) > 0)
				return;
		(void)idm_ctx_progress(h->ctx, 1);
	}
	ck_abort_msg("no read data moved");
}

static void login(struct h *h, unsigned slots, uint32_t cap)
{
	struct h_params p;

	ck_assert_msg(h_init(h, cap, slots) == 0, "h_init: %s", h->err);
	h_params_default(&p);
	p.immediate_data = false;
	p.initial_r2t = true;
	p.max_r2t = 2;
	p.ini_mrdsl = 65536;
	p.tgt_mrdsl = 65536;
	p.max_burst = 262144;
	p.first_burst = 65536;
	ck_assert_msg(h_connect_login(h, &p, 5000) == 0, "login: %s", h->err);
}

/* Free the initiator's slot memory: libidm must not touch it any more. */
static void free_initiator_bufs(struct h *h)
{
	for (size_t s = 0; s < h->n_slots; s++) {
		if (h->slots[s].task)
			idm_deallocate_task_resources(h->slots[s].task);
		h->slots[s].task = NULL;
		h->slots[s].busy = false;
		idm_buf_destroy(h->slots[s].buf);
		h->slots[s].buf = NULL;
		free(h->slots[s].mem);
		h->slots[s].mem = NULL;
	}
}

static unsigned busy_slots(struct h *h)
{
	unsigned n = 0;

	for (size_t s = 0; s < h->n_slots; s++)
		n += h->slots[s].busy;
	return n;
}

static bool t_term(struct h *h)
{
	return h->t.terminate_count > 0;
}

static bool i_term(struct h *h)
{
	return h->i.terminate_count > 0;
}

START_TEST(initiator_terminate_in_flight)
{
	struct h h;
	int controls;

	login(&h, 4, BIG);
	start_mixed(&h, 4);
	/* the target frees its disk from the notify: late use shows in ASan */
	h.free_on_terminate = true;
	progress_until_moving(&h);
	ck_assert_int_eq(h.i.terminate_count, 0);
	ck_assert_msg(busy_slots(&h) > 0, "all I/O finished before the terminate");
	controls = h.i.control_count;
	idm_connection_terminate(h.i.conn);
	h.i.terminated_by_us = true;
	free_initiator_bufs(&h);
	ck_assert_int_eq(h_progress_until(&h, t_term, 3000), 0);
	h_progress_for(&h, 200);
	ck_assert_msg(h.i.cb_after_terminate == 0 && h.i.terminate_count == 0 &&
			      h.i.control_count == controls,
		      "callbacks after idm_connection_terminate(): %d",
		      h.i.cb_after_terminate);
	ck_assert_msg(h.t.terminate_count == 1, "target saw %d notifies",
		      h.t.terminate_count);
	ck_assert_msg(h.t.error[0], "target: no error text");
	ck_assert_int_eq(h.t.cb_after_terminate, 0);
	h_log("initiator terminate with 4 x 16 MiB in flight: no callback after it, target notified once (%s)",
	      h.t.error);
	h_fini(&h);
}
END_TEST

START_TEST(target_terminate_in_flight)
{
	struct h h;
	int controls, completions;

	login(&h, 4, BIG);
	start_mixed(&h, 4);
	/* the initiator frees its buffers from the notify */
	h.free_on_terminate = true;
	progress_until_moving(&h);
	ck_assert_int_eq(h.t.terminate_count, 0);
	ck_assert_msg(busy_slots(&h) > 0, "all I/O finished before the terminate");
	controls = h.t.control_count;
	completions = h.t.completion_count;
	idm_connection_terminate(h.t.conn);
	h.t.terminated_by_us = true;
	/* every task and buffer is ours again: end the tasks, free the disk */
	for (size_t i = 0; i < H_MAX_TTASKS; i++)
		if (h.tt[i].used) {
			idm_deallocate_task_resources(h.tt[i].task);
			h.tt[i].used = false;
		}
	idm_buf_destroy(h.disk_buf);
	h.disk_buf = NULL;
	free(h.disk);
	h.disk = NULL;
	h.n_disk_slots = 0;
	ck_assert_int_eq(h_progress_until(&h, i_term, 3000), 0);
	h_progress_for(&h, 200);
	ck_assert_msg(h.t.cb_after_terminate == 0 && h.t.terminate_count == 0 &&
			      h.t.control_count == controls &&
			      h.t.completion_count == completions,
		      "target callbacks after idm_connection_terminate()");
	ck_assert_msg(h.i.terminate_count == 1, "initiator saw %d notifies",
		      h.i.terminate_count);
	ck_assert_msg(h.i.error[0], "initiator: no error text");
	ck_assert_int_eq(h.i.cb_after_terminate, 0);
	for (size_t s = 0; s < h.n_slots; s++)
		ck_assert_msg(!h.slots[s].busy, "initiator task %zu not ended", s);
	h_log("target terminate with 4 x 16 MiB in flight: no callback after it, initiator notified once (%s)",
	      h.i.error);
	h_fini(&h);
}
END_TEST

/* Target hook: run the command's data transfer from a private buffer,
 * so the test can end the task and free that buffer mid-transfer. */
struct dealloc_ctx {
	idm_task *task;
	uint8_t *mem;
	idm_buf *buf;
	uint32_t itt;
	bool write;
	bool sg; /* the buffer in segments of SG_SEG bytes (idm_buf_create_iov) */
};

/* odd, so that PDUs end inside segments; BIG / SG_SEG < IDM_BUF_IOV_MAX */
#define SG_SEG 16411u

static int dealloc_buf(struct h *h, struct dealloc_ctx *d, uint32_t len)
{
	struct iovec v[IDM_BUF_IOV_MAX];
	int n = 0;

	if (!d->sg)
		return idm_buf_create(h->ctx, d->mem, len, &d->buf);
	for (uint32_t at = 0; at < len; at += SG_SEG, n++)
		v[n] = (struct iovec){ d->mem + at, len - at < SG_SEG ? len - at : SG_SEG };
	return idm_buf_create_iov(h->ctx, v, n, &d->buf);
}

static bool dealloc_hook(struct h *h, idm_task *task, const uint8_t *bhs)
{
	struct dealloc_ctx *d = h->hook_arg;
	uint32_t len = idm_iscsi_get32(bhs + IDM_ISCSI_CMD_EDTL);
	uint8_t tmpl[48] = { 0 };
	int rc;

	d->task = task;
	d->itt = idm_iscsi_bhs_itt(bhs);
	d->write = bhs[IDM_ISCSI_CMD_CDB] == H_CDB_WRITE;
	d->mem = malloc(len);
	ck_assert_ptr_nonnull(d->mem);
	memset(d->mem, 0x77, len);
	ck_assert_int_eq(dealloc_buf(h, d, len), 0);
	idm_task_set_arg(task, NULL); /* any completion for it is a bug */
	idm_iscsi_put32(tmpl + IDM_ISCSI_BHS_ITT, d->itt);
	tmpl[0] = d->write ? IDM_ISCSI_OP_R2T : IDM_ISCSI_OP_DATA_IN;
	tmpl[1] = IDM_ISCSI_FLAG_FINAL;
	rc = d->write ? idm_get_data(task, tmpl, d->buf, 0, 0, len, 0)
		      : idm_put_data(task, tmpl, d->buf, 0, 0, len, 0);
	ck_assert_msg(rc == 0, "transfer start: %s", idm_strerror(rc));
	return true;
}

static bool hook_ran(struct h *h)
{
	return ((struct dealloc_ctx *)h->hook_arg)->task != NULL;
}

/* End the target task and free its buffer at once: a provider touching
 * it later is a use after free under ASan. */
static void dealloc_and_free(struct dealloc_ctx *d)
{
	idm_deallocate_task_resources(d->task);
	idm_buf_destroy(d->buf);
	free(d->mem);
	d->buf = NULL;
	d->mem = NULL;
}

/* Put_Data of 16 MiB to a raw initiator that does not read: the socket
 * fills, the task is deallocated with most Data-In unsent, then the raw
 * side reads on. Whatever it gets must be whole PDUs (a PDU begun must be
 * finished without the freed buffer), then the connection must still
 * answer a NOP-Out, or have failed cleanly. */
static void dealloc_pending_put(bool sg)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	struct dealloc_ctx d = { .sg = sg };
	uint8_t bhs[48];
	uint32_t got = 0, dlen;

	h_params_default(&p);
	p.ini_mrdsl = 65536;
	h_raw_evil_initiator(&h, &r, &p, 8192);
	h.cmd_hook = dealloc_hook;
	h.hook_arg = &d;
	h_raw_send_cmd(&h, &r, false, 0x500, BIG);
	ck_assert_int_eq(h_progress_until(&h, hook_ran, 3000), 0);
	progress_a_bit(&h);
	ck_assert_msg(h.t.completion_count == 0, "16 MiB went out unread?");
	dealloc_and_free(&d);
	h.cmd_hook = NULL;
	/* read on: only whole Data-In PDUs of this task may come */
	while (h_raw_recv_pdu(&h, &r, bhs, NULL, 0, &dlen, 300) == 0) {
		ck_assert_msg(idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_DATA_IN &&
				      idm_iscsi_bhs_itt(bhs) == 0x500,
			      "after the dealloc: opcode 0x%02x itt 0x%x (framing lost?)",
			      idm_iscsi_bhs_opcode(bhs), idm_iscsi_bhs_itt(bhs));
		ck_assert_uint_eq(idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET), got);
		got += dlen;
	}
	ck_assert_msg(got < BIG, "all 16 MiB were sent after the dealloc");
	h_raw_target_outcome(&h, &r, true, "Put_Data cancelled by Deallocate_Task_Resources");
	ck_assert_msg(h.t.completion_count == 0,
		      "data_completion_notify for a deallocated task");
	h_log("  %u of 16 MiB were sent (whole PDUs) before the cancel took effect",
	      got);
	h_raw_end(&h, &r);
}

START_TEST(target_dealloc_pending_put)
{
	dealloc_pending_put(false);
}
END_TEST

/* The same from a scatter-gather buffer: the half-sent PDU is finished
 * from a copy of its segments. */
START_TEST(target_dealloc_pending_put_sg)
{
	dealloc_pending_put(true);
}
END_TEST

/* Get_Data of 16 MiB: two Data-Out PDUs land, the task is deallocated
 * and its buffer freed, then more Data-Out for it arrives. */
static void dealloc_pending_get(bool sg)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	struct dealloc_ctx d = { .sg = sg };
	uint8_t bhs[48];
	static uint8_t data[65536];
	uint32_t ttt;

	h_params_default(&p);
	p.immediate_data = false;
	p.initial_r2t = true;
	p.max_burst = 1 << 20;
	p.tgt_mrdsl = 65536;
	h_raw_evil_initiator(&h, &r, &p, 8192);
	h.cmd_hook = dealloc_hook;
	h.hook_arg = &d;
	h_raw_send_cmd(&h, &r, true, 0x501, BIG);
	ck_assert_int_eq(h_progress_until(&h, hook_ran, 3000), 0);
	h_raw_recv_op(&h, &r, IDM_ISCSI_OP_R2T, bhs);
	ttt = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_TTT);
	memset(data, 0x12, sizeof(data));
	for (uint32_t i = 0; i < 2; i++) {
		h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, 0x501, ttt, i, i * 65536, false);
		ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, data,
						sizeof(data), 0), 0);
	}
	h_progress_for(&h, 50);
	ck_assert_msg(d.mem[0] == 0x12 && d.mem[131071] == 0x12,
		      "Data-Out not placed in the Get_Data buffer");
	dealloc_and_free(&d);
	h.cmd_hook = NULL;
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_OUT, 0x501, ttt, 2, 2 * 65536, false);
	(void)h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, sizeof(data), 0);
	h_raw_target_outcome(&h, &r, true, "Data-Out for a task deallocated mid-Get_Data");
	ck_assert_msg(h.t.completion_count == 0,
		      "data_completion_notify for a deallocated task");
	h_raw_end(&h, &r);
}

START_TEST(target_dealloc_pending_get)
{
	dealloc_pending_get(false);
}
END_TEST

/* The same into a scatter-gather buffer (Data-Out read into segments). */
START_TEST(target_dealloc_pending_get_sg)
{
	dealloc_pending_get(true);
}
END_TEST

/* Initiator write answering an 8 MiB R2T to a raw target that does not
 * read: the task is deallocated and its buffer freed mid-Data-Out. The
 * raw target must then see whole Data-Out PDUs only, and the connection
 * must still deliver a NOP-In or have failed cleanly. */
START_TEST(initiator_dealloc_pending_write)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	uint32_t itt, got = 0, dlen;

	h_params_default(&p);
	p.immediate_data = false;
	p.initial_r2t = true;
	p.max_burst = 8 << 20;
	p.tgt_mrdsl = 262144;
	h_raw_evil_target(&h, &r, &p, BIG);
	h_slot_prepare(&h, 0, true, BIG);
	ck_assert_int_eq(h_slot_start(&h, 0, 0), 0);
	h_raw_recv_op(&h, &r, IDM_ISCSI_OP_SCSI_CMD, bhs);
	itt = idm_iscsi_bhs_itt(bhs);
	memset(bhs, 0, sizeof(bhs));
	bhs[0] = IDM_ISCSI_OP_R2T;
	bhs[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, itt);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_TTT, 0x77);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, r.statsn);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, r.cmdsn + 1);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_MAX_CMDSN, r.cmdsn + 64);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_DESIRED_LEN, 8 << 20);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, NULL, 0, 0), 0);
	progress_a_bit(&h);
	idm_deallocate_task_resources(h.slots[0].task);
	h.slots[0].task = NULL;
	h.slots[0].busy = false;
	idm_buf_destroy(h.slots[0].buf);
	h.slots[0].buf = NULL;
	free(h.slots[0].mem);
	h.slots[0].mem = NULL;
	while (h_raw_recv_pdu(&h, &r, bhs, NULL, 0, &dlen, 300) == 0) {
		ck_assert_msg(idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_DATA_OUT &&
				      idm_iscsi_bhs_itt(bhs) == itt,
			      "after the dealloc: opcode 0x%02x itt 0x%x (framing lost?)",
			      idm_iscsi_bhs_opcode(bhs), idm_iscsi_bhs_itt(bhs));
		ck_assert_uint_eq(idm_iscsi_get32(bhs + IDM_ISCSI_BHS_BUF_OFFSET), got);
		got += dlen;
	}
	ck_assert_msg(got < (8u << 20), "the whole burst went out after the dealloc");
	h_raw_initiator_outcome(&h, &r, true, "initiator write cancelled mid-Data-Out");
	h_log("  %u of 8 MiB Data-Out were sent (whole PDUs) before the cancel", got);
	h_raw_end(&h, &r);
}
END_TEST

/* Initiator read: 64 KiB of Data-In land, the task is deallocated and its
 * buffer freed, then Data-In for it keeps coming. */
START_TEST(initiator_dealloc_pending_read)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48];
	static uint8_t data[65536];
	uint32_t itt;

	h_params_default(&p);
	p.ini_mrdsl = 65536;
	h_raw_evil_target(&h, &r, &p, 1 << 20);
	h_slot_prepare(&h, 0, false, 1 << 20);
	ck_assert_int_eq(h_slot_start(&h, 0, 0), 0);
	h_raw_recv_op(&h, &r, IDM_ISCSI_OP_SCSI_CMD, bhs);
	itt = idm_iscsi_bhs_itt(bhs);
	memset(data, 0x34, sizeof(data));
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_IN, itt, IDM_ISCSI_RESERVED_TAG, 0, 0, false);
	ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, sizeof(data), 0), 0);
	h_progress_for(&h, 50);
	ck_assert_msg(h.slots[0].mem[H_GUARD] == 0x34, "Data-In not placed");
	idm_deallocate_task_resources(h.slots[0].task);
	h.slots[0].task = NULL;
	h.slots[0].busy = false;
	idm_buf_destroy(h.slots[0].buf);
	h.slots[0].buf = NULL;
	free(h.slots[0].mem);
	h.slots[0].mem = NULL;
	h_raw_data_bhs(bhs, IDM_ISCSI_OP_DATA_IN, itt, IDM_ISCSI_RESERVED_TAG, 1, 65536, false);
	(void)h_raw_send_pdu(&h, &r, bhs, NULL, 0, data, sizeof(data), 0);
	h_raw_initiator_outcome(&h, &r, true, "Data-In for a read deallocated mid-transfer");
	h_raw_end(&h, &r);
}
END_TEST

/* ---- terminate and destroy from inside callbacks ------------------- */

/* Three NOP-Outs that arrive together; the first one's control_notify
 * ends the connection (idm_connection_terminate(), or since 1.2
 * idm_conn_destroy(), which the library then frees itself: under ASan a
 * late touch of it is caught). The socket closes, the two PDUs behind it
 * are never delivered, and there is no terminate notify. */
static void end_in_control_notify(bool destroy)
{
	struct h h;
	struct h_raw r;
	struct h_params p;
	uint8_t bhs[48] = { 0 };
	int controls;

	h_params_default(&p);
	h_raw_evil_initiator(&h, &r, &p, 8192);
	h.terminate_on_nop = !destroy;
	h.destroy_on_nop = destroy;
	controls = h.t.control_count;
	bhs[0] = IDM_ISCSI_OP_NOP_OUT | IDM_ISCSI_OP_IMMEDIATE;
	bhs[1] = IDM_ISCSI_FLAG_FINAL;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_TTT, IDM_ISCSI_RESERVED_TAG);
	for (uint32_t i = 0; i < 3; i++) {
		idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, 0x700 + i);
		ck_assert_int_eq(h_raw_send_pdu(&h, &r, bhs, NULL, 0, NULL, 0, 0), 0);
	}
	ck_assert_int_eq(h_raw_wait_closed(&h, &r, 2000), 0);
	h_progress_for(&h, 100);
	ck_assert_msg(h.t.control_count == controls + 1,
		      "%d control_notify after ending the connection in the first",
		      h.t.control_count - controls);
	if (destroy)
		ck_assert_ptr_null(h.t.conn);
	ck_assert_int_eq(h.t.terminate_count, 0);
	ck_assert_int_eq(h.t.cb_after_terminate, 0);
	h_log("%s inside control_notify: socket closed, the 2 PDUs behind it never delivered, no notify%s",
	      destroy ? "idm_conn_destroy()" : "idm_connection_terminate()",
	      destroy ? ", freed by the library" : "");
	h_raw_end(&h, &r);
}

START_TEST(terminate_from_control_notify)
{
	end_in_control_notify(false);
}
END_TEST

START_TEST(destroy_from_control_notify)
{
	end_in_control_notify(true);
}
END_TEST

START_TEST(destroy_from_notify_target)
{
	struct h h;
	struct h_raw r;
	struct h_params p;

	h_params_default(&p);
	p.ini_mrdsl = 65536;
	h_raw_evil_initiator(&h, &r, &p, 16u << 20);
	h.destroy_in_notify = true;
	h.free_on_terminate = true;
	h_raw_send_cmd(&h, &r, false, 0x600, 16u << 20);
	h_progress_for(&h, 50);
	h_raw_close(&r); /* with most of a 16 MiB Put_Data unsent */
	h_progress_for(&h, 500);
	ck_assert_int_eq(h.t.terminate_count, 1);
	ck_assert_msg(h.t.conn == NULL, "connection not destroyed");
	ck_assert_int_eq(h.t.cb_after_terminate, 0);
	h_log("target: idm_conn_destroy() from connection_terminate_notify with a Put_Data pending, buffers freed there too: clean");
	h_fini(&h);
}
END_TEST

START_TEST(destroy_from_notify_initiator)
{
	struct h h;
	struct h_raw r;
	struct h_params p;

	h_params_default(&p);
	h_raw_evil_target(&h, &r, &p, 1 << 20);
	h.destroy_in_notify = true;
	h.free_on_terminate = true;
	h_slot_prepare(&h, 0, true, 1 << 20);
	ck_assert_int_eq(h_slot_start(&h, 0, 0), 0);
	h_progress_for(&h, 50);
	h_raw_close(&r); /* with the write in flight */
	h_progress_for(&h, 500);
	ck_assert_int_eq(h.i.terminate_count, 1);
	ck_assert_msg(h.i.conn == NULL, "connection not destroyed");
	ck_assert_int_eq(h.i.cb_after_terminate, 0);
	h_log("initiator: idm_conn_destroy() from connection_terminate_notify with a write in flight: clean");
	h_fini(&h);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { initiator_terminate_in_flight,
				       target_terminate_in_flight,
				       target_dealloc_pending_get,
				       target_dealloc_pending_get_sg,
				       target_dealloc_pending_put,
				       target_dealloc_pending_put_sg,
				       initiator_dealloc_pending_write,
				       initiator_dealloc_pending_read,
				       terminate_from_control_notify,
				       destroy_from_control_notify,
				       destroy_from_notify_target,
				       destroy_from_notify_initiator,
				       NULL };

	return h_main("test_terminate", 110, "tcp_terminate", "terminate", 30,
		      tests);
}
