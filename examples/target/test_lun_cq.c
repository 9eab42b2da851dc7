/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The completion queue of a loop (lun_cq.c) and the SCSI layer's
 * asynchronous medium access (scsi_sbc.c) over a LUN that completes on
 * another thread, as librbd does: producers push while the owner sleeps
 * in idm_ctx_progress() with no timeout (a lost wakeup hangs until the
 * test's timeout), every completion runs once, in order per producer, on
 * the owner's thread; quiesce waits for calls in flight. ThreadSanitizer
 * runs it (suite 'threads').
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <libidm/idm.h>

#include "lun_cq.h"
#include "scsi.h"

#define PRODUCERS 4
#define PER_PRODUCER 5000

static idm_ctx *new_ctx(void)
{
	struct idm_ctx_attr attr = { .size = sizeof(attr), .log_level = -1 };
	idm_ctx *ctx = NULL;

	ck_assert_int_eq(idm_ctx_create(&attr, &ctx), 0);
	return ctx;
}

static void wake(void *arg)
{
	idm_ctx_wakeup(arg);
}

struct prod {
	struct lun_cq *q;
	struct lun_io *ios;
	int id;
};

static pthread_t owner;
static int done_count;               /* owner's thread only */
static uint64_t next_seq[PRODUCERS];  /* owner's thread only */
static struct lun dummy_lun;

static void count_done(struct lun_io *io)
{
	int p = (int)(intptr_t)io->arg;

	ck_assert(pthread_equal(pthread_self(), owner));
	ck_assert_uint_eq(io->off, next_seq[p]); /* in order per producer */
	next_seq[p]++;
	ck_assert_int_eq(io->result, -p);
	done_count++;
}

static void *produce(void *arg)
{
	struct prod *p = arg;

	for (int i = 0; i < PER_PRODUCER; i++) {
		struct lun_io *io = &p->ios[i];
		io->off = (uint64_t)i;
		io->arg = (void *)(intptr_t)p->id;
		io->done = count_done;
		io->lun = &dummy_lun;
		io->result = -p->id;
		lun_cq_push(p->q, io);
	}
	return NULL;
}

START_TEST(producers_wake_a_sleeping_owner)
{
	idm_ctx *ctx = new_ctx();
	struct lun_cq q;
	struct prod p[PRODUCERS];
	pthread_t th[PRODUCERS];

	owner = pthread_self();
	done_count = 0;
	memset(next_seq, 0, sizeof(next_seq));
	ck_assert_int_eq(lun_cq_init(&q, wake, ctx), 0);
	ck_assert_int_eq(lun_cq_drain(&q), 0); /* empty: nothing, no lock */
	for (int i = 0; i < PRODUCERS * PER_PRODUCER; i++)
		lun_cq_submitted(&q);
	for (int i = 0; i < PRODUCERS; i++) {
		p[i].q = &q;
		p[i].id = i;
		p[i].ios = calloc(PER_PRODUCER, sizeof(struct lun_io));
		ck_assert_ptr_nonnull(p[i].ios);
		ck_assert_int_eq(pthread_create(&th[i], NULL, produce, &p[i]), 0);
	}
	/* sleep with no timeout: only the producers' wakeups return */
	while (done_count < PRODUCERS * PER_PRODUCER) {
		ck_assert_int_ge(idm_ctx_progress(ctx, -1), 0);
		lun_cq_drain(&q);
	}
	for (int i = 0; i < PRODUCERS; i++) {
		pthread_join(th[i], NULL);
		ck_assert_uint_eq(next_seq[i], PER_PRODUCER);
		free(p[i].ios);
	}
	ck_assert_int_eq(q.inflight, 0);
	ck_assert_int_eq(lun_cq_drain(&q), 0);
	lun_cq_fini(&q);
	idm_ctx_destroy(ctx);
}
END_TEST

START_TEST(quiesce_waits_then_gives_up)
{
	idm_ctx *ctx = new_ctx();
	struct lun_cq q;
	struct prod p = { .q = &q, .id = 0 };
	pthread_t th;

	owner = pthread_self();
	done_count = 0;
	memset(next_seq, 0, sizeof(next_seq));
	ck_assert_int_eq(lun_cq_init(&q, wake, ctx), 0);
	p.ios = calloc(PER_PRODUCER, sizeof(struct lun_io));
	for (int i = 0; i < PER_PRODUCER; i++)
		lun_cq_submitted(&q);
	ck_assert_int_eq(pthread_create(&th, NULL, produce, &p), 0);
	ck_assert_int_eq(lun_cq_quiesce(&q, 60000), 0);
	ck_assert_int_eq(done_count, PER_PRODUCER);
	pthread_join(th, NULL);
	/* one call that never completes: quiesce returns after its time */
	lun_cq_submitted(&q);
	ck_assert_int_eq(lun_cq_quiesce(&q, 100), 1);
	free(p.ios);
	lun_cq_fini(&q);
	idm_ctx_destroy(ctx);
}
END_TEST

/* A LUN in memory that completes on a thread of its own, as librbd. */
#define DISK_BLOCKS 64
static uint8_t disk[DISK_BLOCKS * 512];
static struct lun_io *work;          /* under work_lock */
static pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cond = PTHREAD_COND_INITIALIZER;
static int stop_worker, flushes, discards;

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&work_lock);
	for (;;) {
		struct lun_io *io;
		while (!work && !stop_worker)
			pthread_cond_wait(&work_cond, &work_lock);
		if (!work)
			break;
		io = work;
		work = io->next;
		pthread_mutex_unlock(&work_lock);
		switch (io->op) {
		case LUN_OP_READ: memcpy(io->buf, disk + io->off, io->len); break;
		case LUN_OP_WRITE: memcpy(disk + io->off, io->buf, io->len); break;
		case LUN_OP_FLUSH: flushes++; break;
		case LUN_OP_DISCARD: memset(disk + io->off, 0, io->len); discards++; break;
		case LUN_OP_WRITE_SAME:
			for (uint64_t o = 0; o < io->len; o += io->pat_len)
				memcpy(disk + io->off + o, io->buf, io->pat_len);
			break;
		}
		io->result = 0;
		lun_cq_push(io->cq, io);
		pthread_mutex_lock(&work_lock);
	}
	pthread_mutex_unlock(&work_lock);
	return NULL;
}

static void async_submit(struct lun *l, struct lun_io *io)
{
	(void)l;
	ck_assert_ptr_nonnull(io->cq);
	lun_cq_submitted(io->cq);
	pthread_mutex_lock(&work_lock);
	io->next = work;
	work = io;
	pthread_cond_signal(&work_cond);
	pthread_mutex_unlock(&work_lock);
}

static int no_sync(struct lun *l, void *dst, uint64_t off, size_t len)
{
	(void)l; (void)dst; (void)off; (void)len;
	return -EIO;
}

static int no_sync_w(struct lun *l, const void *src, uint64_t off, size_t len)
{
	(void)l; (void)src; (void)off; (void)len;
	return -EIO;
}

static void no_close(struct lun *l)
{
	(void)l;
}

static const struct lun_ops async_ops = {
	.kind = "async-test", .submit = async_submit, .read = no_sync,
	.write = no_sync_w, .close = no_close,
};

static int cmd_done;
static void on_cmd_done(struct scsi_cmd *sc)
{
	ck_assert(pthread_equal(pthread_self(), owner));
	ck_assert(!sc->pending);
	cmd_done++;
}

/* Run one command to its end: scsi_exec returns pending, done() comes
 * from the owner's drain. */
static void run_async(idm_ctx *ctx, struct lun_cq *q, struct lun *l, const uint8_t *cdb,
		      uint8_t *buf, uint32_t len, struct scsi_cmd *sc)
{
	memset(sc, 0, sizeof(*sc));
	sc->cdb = cdb;
	sc->lun = l;
	sc->max_io = 1 << 20;
	sc->edtl = len;
	sc->cq = q;
	sc->done = on_cmd_done;
	ck_assert_int_eq(scsi_prepare(sc), 0);
	sc->buf = buf;
	sc->buf_len = len;
	cmd_done = 0;
	scsi_exec(sc);
	ck_assert(sc->pending); /* nothing completes inside submit */
	while (!cmd_done) {
		ck_assert_int_ge(idm_ctx_progress(ctx, -1), 0);
		lun_cq_drain(q);
	}
	ck_assert_int_eq(cmd_done, 1);
	ck_assert_int_eq(sc->status, SAM_GOOD);
}

START_TEST(scsi_commands_complete_from_another_thread)
{
	idm_ctx *ctx = new_ctx();
	struct lun_cq q;
	struct lun l = { .ops = &async_ops, .bs = 512, .size = sizeof(disk),
			 .nblocks = DISK_BLOCKS, .wce = true };
	struct scsi_cmd sc;
	uint8_t buf[8 * 512], in[8 * 512];
	pthread_t th;
	uint8_t write16[16] = { 0x8a, 0x08 /* FUA */ }, read10[10] = { 0x28 };
	uint8_t sync10[10] = { 0x35 }, unmap[10] = { 0x42 }, ws16[16] = { 0x93 };
	uint8_t ud[8 + 3 * 16] = { 0 };

	owner = pthread_self();
	stop_worker = 0;
	memset(disk, 0xee, sizeof(disk));
	ck_assert_int_eq(lun_cq_init(&q, wake, ctx), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, worker, NULL), 0);

	/* WRITE(16) FUA of 8 blocks at LBA 4: the data, then a flush */
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	write16[9] = 4;
	write16[13] = 8;
	flushes = 0;
	run_async(ctx, &q, &l, write16, buf, sizeof(buf), &sc);
	ck_assert_int_eq(flushes, 1);
	ck_assert_mem_eq(disk + 4 * 512, buf, sizeof(buf));
	/* READ(10) of them back into the buffer the Data-In goes from */
	read10[5] = 4;
	read10[8] = 8;
	memset(in, 0, sizeof(in));
	run_async(ctx, &q, &l, read10, in, sizeof(in), &sc);
	ck_assert_uint_eq(sc.in_len, sizeof(in));
	ck_assert_mem_eq(in, buf, sizeof(buf));
	/* SYNCHRONIZE CACHE(10): a flush */
	run_async(ctx, &q, &l, sync10, NULL, 0, &sc);
	ck_assert_int_eq(flushes, 2);
	/* UNMAP of three descriptors (one of 0 blocks): two discards, one
	 * after the other */
	ud[3] = 3 * 16;
	ud[8 + 7] = 4;  ud[8 + 11] = 2;     /* LBA 4, 2 blocks */
	ud[24 + 7] = 9; ud[24 + 11] = 0;    /* nothing */
	ud[40 + 7] = 10; ud[40 + 11] = 1;   /* LBA 10, 1 block */
	unmap[8] = sizeof(ud);
	discards = 0;
	run_async(ctx, &q, &l, unmap, ud, sizeof(ud), &sc);
	ck_assert_int_eq(discards, 2);
	for (int b = 4; b < 12; b++)
		for (int i = 0; i < 512; i++)
			ck_assert_uint_eq(disk[b * 512 + i],
					  b == 4 || b == 5 || b == 10 ? 0 : buf[(b - 4) * 512 + i]);
	/* WRITE SAME(16) of a pattern over 16 blocks at LBA 32 */
	memset(buf, 0x5a, 512);
	ws16[9] = 32;
	ws16[13] = 16;
	run_async(ctx, &q, &l, ws16, buf, 512, &sc);
	for (int i = 0; i < 16 * 512; i++)
		ck_assert_uint_eq(disk[32 * 512 + i], 0x5a);

	pthread_mutex_lock(&work_lock);
	stop_worker = 1;
	pthread_cond_signal(&work_cond);
	pthread_mutex_unlock(&work_lock);
	pthread_join(th, NULL);
	ck_assert_int_eq(q.inflight, 0);
	lun_cq_fini(&q);
	idm_ctx_destroy(ctx);
}
END_TEST

/* A RAM LUN completes inline: scsi_exec returns finished, done() is not
 * called, however many steps (an UNMAP of 256 descriptors does not
 * recurse). */
START_TEST(inline_completion_finishes_in_exec)
{
	struct lun *l;
	struct scsi_cmd sc;
	static uint8_t ud[8 + 256 * 16];
	uint8_t unmap[10] = { 0x42 };

	ck_assert_int_eq(lun_open("ram:1M", 1, 512, &l), 0);
	for (int i = 0; i < 256; i++) {
		ud[8 + i * 16 + 7] = (uint8_t)i;
		ud[8 + i * 16 + 11] = 1;
	}
	ud[2] = (256 * 16) >> 8;
	unmap[7] = sizeof(ud) >> 8;
	unmap[8] = sizeof(ud) & 0xff;
	memset(&sc, 0, sizeof(sc));
	sc.cdb = unmap;
	sc.lun = l;
	sc.max_io = 1 << 20;
	sc.edtl = sizeof(ud);
	sc.done = on_cmd_done;
	ck_assert_int_eq(scsi_prepare(&sc), 0);
	sc.buf = ud;
	sc.buf_len = sizeof(ud);
	cmd_done = 0;
	scsi_exec(&sc);
	ck_assert(!sc.pending);
	ck_assert_int_eq(cmd_done, 0);
	ck_assert_int_eq(sc.status, SAM_GOOD);
	ck_assert(!lun_busy(l));
	lun_close(l);
}
END_TEST

/* A capacity change is reported once per nexus, to a command other than
 * INQUIRY, and READ CAPACITY then gives the new size. */
START_TEST(capacity_change_is_a_unit_attention_once)
{
	struct lun *l;
	struct scsi_cmd sc;
	uint8_t tur[6] = { 0x00 }, inq[6] = { 0x12, 0, 0, 0, 36 }, rc16[16] = { 0x9e, 0x10 };
	uint8_t buf[64];
	unsigned seen_a, seen_b;
	const uint8_t *cdbs[] = { inq, tur, tur };
	const uint8_t want[] = { SAM_GOOD, SAM_CHECK_CONDITION, SAM_GOOD };

	ck_assert_int_eq(lun_open("ram:1M", 1, 512, &l), 0);
	seen_a = seen_b = __atomic_load_n(&l->cap_gen, __ATOMIC_RELAXED);
	lun_resized(l, 1 << 20);          /* the same size: nothing */
	lun_resized(l, (1 << 20) + 100);  /* no multiple of the block: ignored */
	ck_assert_uint_eq(l->cap_gen, seen_a);
	lun_resized(l, 512 * 1024);       /* shrunk to 1024 blocks */
	ck_assert_uint_eq(lun_nblocks(l), 1024);
	for (int k = 0; k < 3; k++) {
		memset(&sc, 0, sizeof(sc));
		sc.cdb = cdbs[k];
		sc.lun = l;
		sc.max_io = 1 << 20;
		sc.cap_seen = &seen_a;
		sc.edtl = cdbs[k] == inq ? 36 : 0;
		if (scsi_prepare(&sc) == 0) {
			sc.buf = buf;
			sc.buf_len = sc.spdtl_in < sizeof(buf) ? sc.spdtl_in : sizeof(buf);
			scsi_exec(&sc);
		}
		ck_assert_uint_eq(sc.status, want[k]);
		if (want[k] == SAM_CHECK_CONDITION) {
			ck_assert_uint_eq(sc.sense[2] & 0xf, SK_UNIT_ATTENTION);
			ck_assert_uint_eq(sc.sense[12], 0x2a);
			ck_assert_uint_eq(sc.sense[13], 0x09);
		}
	}
	/* the other nexus gets its own; READ CAPACITY(16) the new size */
	memset(&sc, 0, sizeof(sc));
	rc16[13] = 32;
	sc.cdb = rc16;
	sc.lun = l;
	sc.max_io = 1 << 20;
	sc.cap_seen = &seen_b;
	ck_assert_int_eq(scsi_prepare(&sc), -1);
	ck_assert_uint_eq(sc.status, SAM_CHECK_CONDITION);
	memset(&sc, 0, sizeof(sc));
	sc.cdb = rc16;
	sc.lun = l;
	sc.max_io = 1 << 20;
	sc.cap_seen = &seen_b;
	sc.edtl = 32;
	ck_assert_int_eq(scsi_prepare(&sc), 0);
	sc.buf = buf;
	sc.buf_len = 32;
	scsi_exec(&sc);
	ck_assert_uint_eq(sc.status, SAM_GOOD);
	ck_assert_uint_eq(be64(buf), 1023);
	lun_close(l);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("target_lun_cq");
	TCase *tc = tcase_create("all");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, producers_wake_a_sleeping_owner);
	tcase_add_test(tc, quiesce_waits_then_gives_up);
	tcase_add_test(tc, scsi_commands_complete_from_another_thread);
	tcase_add_test(tc, inline_completion_finishes_in_exec);
	tcase_add_test(tc, capacity_change_is_a_unit_attention_once);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
