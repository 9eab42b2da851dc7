/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Zero-copy Data-In (the TCP provider's IDM_TCP_ZEROCOPY, set to 4096
 * here before any context exists), on the epoll and the io_uring engine:
 *  - verified reads of 4 KiB to 1 MiB at queue depth 8, digests off and
 *    on, every byte and guard checked, and every Put_Data completion
 *    reported only after the provider released it on the kernel's
 *    notification (its debug log says so first; the test watches the
 *    log and the target's data_completion_notify);
 *  - Connection_Terminate on the target with 16 MiB reads in flight and
 *    zero-copy sends not yet notified: no callback afterwards, the disk
 *    freed at once (ASan catches a late touch), no leak, the initiator
 *    notified once.
 * On loopback the kernel copies anyway and says so (ZEROCOPY_COPIED);
 * the notification path is what is tested, not the copy saved.
 */
#include "harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZC_MIN "4096"
#define BIG (16u << 20)

/* Both engines send with MSG_ZEROCOPY (IDM_TCP_ENGINE is read per
 * context; where io_uring cannot be had, the context uses epoll). */
static const char *const engines[] = { "epoll", "uring" };

/* What the provider's debug log said, counted by log_hook. */
static struct {
	unsigned released;  /* Data-In completions released by a notification */
	unsigned copied;    /* "the kernel copied the data anyway" lines */
	unsigned reset;     /* closes with zero-copy calls outstanding */
	unsigned long long sends, notes, copies; /* the close summary */
	unsigned summaries;
	unsigned datain_done;  /* target Data-In completions seen */
	unsigned early;        /* ... of them with no release logged first */
} zl;

static bool log_hook(int level, const char *msg)
{
	unsigned long long s, n, c;
	const char *p;

	if (strstr(msg, "zero-copy: Data-In completion released"))
		zl.released++;
	else if (strstr(msg, "the kernel copied the data anyway"))
		zl.copied++;
	else if (strstr(msg, "not notified at close: connection reset"))
		zl.reset++;
	else if ((p = strstr(msg, "zero-copy: ")) &&
		 sscanf(p, "zero-copy: %llu sends, %llu notifications, %llu",
			&s, &n, &c) == 3) {
		zl.sends += s;
		zl.notes += n;
		zl.copies += c;
		zl.summaries++;
	}
	return level == IDM_LOG_DEBUG; /* the rest of debug: off stderr */
}

/* Every read here is zero-copy: its completion must follow its release. */
static void completion_hook(struct h *h, idm_task *task, enum idm_data_dir dir)
{
	(void)h;
	(void)task;
	if (dir != IDM_DATA_IN)
		return;
	zl.datain_done++;
	if (zl.released < zl.datain_done)
		zl.early++;
}

static void login(struct h *h, unsigned slots, uint32_t cap, bool digests)
{
	struct h_params p;
	char ps[200];

	memset(&zl, 0, sizeof(zl));
	ck_assert_msg(h_init(h, cap, slots) == 0, "h_init: %s", h->err);
	h->completion_hook = completion_hook;
	h_params_default(&p);
	p.ini_mrdsl = 65536;
	p.tgt_mrdsl = 65536;
	p.max_burst = 262144;
	p.header_digest = digests;
	p.data_digest = digests;
	ck_assert_msg(h_connect_login(h, &p, 5000) == 0, "login with %s: %s",
		      h_params_str(&p, ps, sizeof(ps)), h->err);
}

START_TEST(verified_reads)
{
	static const uint32_t sizes[] = { 4096, 8193, 65536, 262145,
					  1u << 20, (1u << 20) - 1 };
	struct h_io ios[48];
	size_t n = 0;

	for (unsigned r = 0; r < 8; r++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			ios[n++] = (struct h_io){ false, sizes[i] };
	for (int run = 0; run < 4; run++) {
		const char *engine = engines[run / 2];
		int dig = run % 2;
		struct h h;
		unsigned reads;

		setenv("IDM_TCP_ENGINE", engine, 1);
		login(&h, 8, 1u << 20, dig);
		ck_assert_msg(h_run_io(&h, ios, n, 8, 60000) == 0, "reads: %s", h.err);
		h_assert_io_clean(&h, 0);
		reads = zl.datain_done;
		ck_assert_uint_eq(reads, n);
		ck_assert_msg(zl.early == 0, "%u of %u Data-In completions came "
			      "before their zero-copy notification", zl.early, reads);
		ck_assert_uint_ge(zl.released, reads);
		h_fini(&h);
		ck_assert_msg(zl.summaries == 1 && zl.sends > 0 && zl.notes > 0,
			      "no zero-copy sends logged (summaries %u, sends %llu)",
			      zl.summaries, zl.sends);
		h_log("verified_reads (%s, digests %s): %u reads, %llu zero-copy "
		      "sends, %llu notifications, %llu of them 'copied'%s",
		      engine, dig ? "on" : "off", reads, zl.sends, zl.notes,
		      zl.copies,
		      zl.copied ? " (loopback copies)" : "");
	}
}
END_TEST

static void start_reads(struct h *h, unsigned n)
{
	for (unsigned s = 0; s < n; s++) {
		h_slot_prepare(h, s, false, BIG);
		ck_assert_msg(h_slot_start(h, s, h_disk_slot_off(h, s) - H_GUARD) == 0,
			      "start: %s", h->err);
	}
}

/* Some read data landed at the initiator: the sends are under way. */
static void progress_until_moving(struct h *h)
{
	for (int i = 0; i < 2000; i++) {
		for (size_t s = 0; s < h->n_slots; s++)
			if (h->slots[s].busy &&
			    idm_task_data_received(h->slots[s].task) > 0)
				return;
		(void)idm_ctx_progress(h->ctx, 1);
	}
	ck_abort_msg("no read data moved");
}

static bool i_term(struct h *h)
{
	return h->i.terminate_count > 0;
}

/* The target's disk (every Put_Data's buffer) goes at once. */
static void free_target_tasks_and_disk(struct h *h)
{
	for (size_t i = 0; i < H_MAX_TTASKS; i++)
		if (h->tt[i].used) {
			idm_deallocate_task_resources(h->tt[i].task);
			h->tt[i].used = false;
		}
	idm_buf_destroy(h->disk_buf);
	h->disk_buf = NULL;
	free(h->disk);
	h->disk = NULL;
	h->n_disk_slots = 0;
}

static void terminate_outstanding_on(const char *engine)
{
	struct h h;
	int completions;

	setenv("IDM_TCP_ENGINE", engine, 1);
	login(&h, 4, BIG, false);
	start_reads(&h, 4);
	h.free_on_terminate = true; /* the initiator frees its buffers */
	progress_until_moving(&h);
	completions = h.t.completion_count;
	idm_connection_terminate(h.t.conn);
	h.t.terminated_by_us = true;
	free_target_tasks_and_disk(&h);
	ck_assert_int_eq(h_progress_until(&h, i_term, 3000), 0);
	h_progress_for(&h, 200);
	ck_assert_msg(h.t.cb_after_terminate == 0 && h.t.terminate_count == 0 &&
			      h.t.completion_count == completions,
		      "target callbacks after idm_connection_terminate()");
	ck_assert_msg(h.i.terminate_count == 1, "initiator saw %d notifies",
		      h.i.terminate_count);
	ck_assert_int_eq(h.i.cb_after_terminate, 0);
	ck_assert_msg(h.i.error[0], "initiator: no error text");
	ck_assert_msg(zl.reset == 1, "the target closed without zero-copy "
		      "sends outstanding (%u): nothing tested", zl.reset);
	ck_assert_msg(zl.summaries == 1 && zl.sends > 0, "no zero-copy sends");
	h_log("%s: terminate with 4 x 16 MiB reads and zero-copy sends "
	      "outstanding: reset, no callback after it, initiator notified "
	      "once (%s); %llu sends, %llu notified", engine, h.i.error,
	      zl.sends, zl.notes);
	h_fini(&h);
}

START_TEST(terminate_outstanding)
{
	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		terminate_outstanding_on(engines[i]);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { verified_reads, terminate_outstanding,
				       NULL };

	/* before any context: the provider reads its knobs as it loads */
	setenv("IDM_TCP_ZEROCOPY", ZC_MIN, 1);
	setenv("IDM_LOG_LEVEL", "debug", 1);
	h_log_hook = log_hook;
	return h_main("test_zerocopy", 110, "tcp_zerocopy", "zerocopy", 60,
		      tests);
}
