/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A provider that moves nothing, for the unit tests. Built several times
 * (tests/unit/fakes/<variant>/) with FAKE_VARIANT selecting a defect the
 * loader must refuse:
 *   FAKE_GOOD      complete and well-formed ("fake")
 *   FAKE_BADABI    abi_version from the future
 *   FAKE_NOOP      mandatory op put_data missing
 *   FAKE_NOENTRY   no IDM_PROV_ENTRY symbol at all
 *   FAKE_SMALL     ops table shorter than the mandatory part
 *   FAKE_MISNAME   file libidm-misname.so calls itself "other"
 *   FAKE_INITFAIL  init() fails, as iser does without an RDMA device
 *   FAKE_SECOND    a second, complete "fake" (search order test)
 *   FAKE_OLDER     ops table ending before the optional ops at its end
 *                  (adopt, listen_fd, conn_stats), as the 1.1 table did:
 *                  must still load
 *   FAKE_OLDENTRY  built against the previous IDM_PROV_ABI: its entry
 *                  point is FAKE_OLD_ENTRY (idm_provider_entry_v<n-1>)
 *   FAKE_OLDNODE   complete, but linked against a libidm of the previous
 *                  IDM_PROV_ABI (tests/unit/fakes/oldnode): dlopen fails
 *
 * The good variant works enough for the core's state machine: connect
 * succeeds (or fails for port "1"; for port "2" it reports the failure
 * and then returns it too, a provider defect the core must survive), listen raises one accepted connection
 * from a deferred item, put_data/get_data complete from a deferred item,
 * and every op is counted in fake_stats, which tests read with dlsym().
 *
 * Like any provider it says what it serves and where it stands in the
 * "auto" order, in its own table: URL scheme "fake", and auto_order 0
 * (never tried by "auto") unless the test places it with
 * IDM_TEST_FAKE_AUTO_ORDER (a number), read when libidm loads it. That is
 * all it takes for libidm to pick it by scheme or automatically: nothing
 * outside this file names it.
 */
#include <libidm/provider.h>

#include "fake_provider.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_GOOD 1
#define FAKE_BADABI 2
#define FAKE_NOOP 3
#define FAKE_NOENTRY 4
#define FAKE_SMALL 5
#define FAKE_MISNAME 6
#define FAKE_INITFAIL 7
#define FAKE_SECOND 8
#define FAKE_OLDER 9
#define FAKE_OLDENTRY 10
#define FAKE_OLDNODE 11

#ifndef FAKE_VARIANT
#error "FAKE_VARIANT must be set"
#endif

/* Counters the tests read through dlsym(handle, "fake_stats"). */
IDM_PROV_EXPORT struct fake_stats fake_stats;

struct fake_conn {
	int magic;
};

struct fake_listener {
	struct idm_prov_defer accept_defer;
	struct idm_prov_listener *l;
	struct sockaddr_in sa;
};

/* Per-task area (ops->task_priv_size): the pending data transfer. */
struct fake_task {
	struct idm_prov_defer done;
	struct idm_task *task;
	enum idm_data_dir dir;
	uint32_t offset, length;
};

static int fake_init(struct idm_prov *prov)
{
	fake_stats.init++;
#if FAKE_VARIANT == FAKE_INITFAIL
	idm_prov_set_why(prov, "no fake device here");
	return -ENODEV;
#else
	return 0;
#endif
}

static void fake_fini(struct idm_prov *prov)
{
	fake_stats.fini++;
}

static void accept_one(struct idm_prov_defer *d)
{
	struct fake_listener *fl = (struct fake_listener *)d;
	struct fake_conn *fc = calloc(1, sizeof(*fc));
	struct idm_conn *conn;

	if (!fc)
		return;
	fc->magic = 0xfa6e;
	if (idm_prov_conn_accepted(fl->l, fc, (struct sockaddr *)&fl->sa,
			       (struct sockaddr *)&fl->sa, &conn) < 0)
		free(fc); /* refused: the provider frees its state */
}

static int fake_listen(struct idm_prov_listener *l, const struct sockaddr *sa,
		       socklen_t salen, int backlog)
{
	struct fake_listener *fl = calloc(1, sizeof(*fl));

	if (!fl)
		return -ENOMEM;
	fake_stats.listen++;
	fl->l = l;
	fl->sa.sin_family = AF_INET;
	fl->sa.sin_port = htons(3260);
	fl->sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	idm_prov_listener_set_priv(l, fl);
	idm_prov_defer(idm_prov_listener_ctx(l), &fl->accept_defer, accept_one);
	return 0;
}

static void fake_unlisten(struct idm_prov_listener *l)
{
	struct fake_listener *fl = idm_prov_listener_priv(l);

	fake_stats.unlisten++;
	if (fl) {
		idm_prov_defer_cancel(idm_prov_listener_ctx(l), &fl->accept_defer);
		free(fl);
	}
	idm_prov_listener_set_priv(l, NULL);
}

static int fake_listener_port(struct idm_prov_listener *l)
{
	return 3260;
}

static int fake_connect(struct idm_conn *conn, const struct sockaddr *sa,
			socklen_t salen, int timeout_ms)
{
	const struct sockaddr_in *in = (const void *)sa;
	struct fake_conn *fc = calloc(1, sizeof(*fc));

	if (!fc)
		return -ENOMEM;
	fake_stats.connect++;
	fc->magic = 0xfa6e;
	idm_prov_conn_set_priv(conn, fc);
	if (in->sin_family == AF_INET && ntohs(in->sin_port) == 2) {
		/* Reports and fails at once: the core frees the connection
		 * (conn_free frees fc), so it must drop the queued report. */
		idm_prov_conn_connected(conn, -ECONNREFUSED);
		return -ECONNREFUSED;
	}
	idm_prov_conn_connected(conn, in->sin_family == AF_INET && ntohs(in->sin_port) == 1
					  ? -ECONNREFUSED
					  : 0);
	return 0;
}

static int fake_send_control(struct idm_conn *conn, const uint8_t *bhs,
			     const void *ahs, size_t ahs_len, const void *data,
			     size_t data_len, struct idm_task *task)
{
	fake_stats.send_control++;
	memcpy(fake_stats.last_bhs, bhs, sizeof(fake_stats.last_bhs));
	fake_stats.last_data_len = data_len;
	return 0;
}

static void data_done(struct idm_prov_defer *d)
{
	struct fake_task *ft = (struct fake_task *)d;

	if (ft->dir == IDM_DATA_OUT)
		idm_prov_task_add_received(ft->task, ft->length);
	idm_prov_data_completion(ft->task, ft->dir, ft->offset, ft->length, 0, 0);
}

static int queue_data(struct idm_task *task, enum idm_data_dir dir,
		      uint32_t offset, uint32_t length)
{
	struct fake_task *ft = idm_prov_task_priv(task);

	struct idm_prov_xfer *x = idm_prov_task_xfer_newest(task);

	if (ft->done.queued && !fake_stats.xfer_hold)
		return -EBUSY;
	/* the core recorded this very call last, priv area zeroed */
	if (!x || x->task != task || x->dir != dir || x->offset != offset ||
	    x->length != length || x->priv[0] != 0)
		return -EPROTO;
	x->priv[0] = FAKE_XFER_MARK;
	if (fake_stats.xfer_hold)
		return 0; /* the test completes it */
	ft->task = task;
	ft->dir = dir;
	ft->offset = offset;
	ft->length = length;
	idm_prov_defer(idm_prov_conn_ctx(idm_task_conn(task)), &ft->done, data_done);
	return 0;
}

#if FAKE_VARIANT != FAKE_NOOP
static int fake_put_data(struct idm_task *task, const uint8_t *tmpl,
			 struct idm_buf *buf, size_t buf_off, uint32_t offset,
			 uint32_t length, uint32_t flags)
{
	fake_stats.put_data++;
	if (fake_stats.reg_bufs) {
		struct idm_prov *prov = idm_prov_conn_provider(idm_task_conn(task));

		idm_prov_dom_lock(prov);
		if (!idm_prov_buf_reg(buf, prov))
			idm_prov_buf_set_reg(buf, prov, malloc(1));
		idm_prov_dom_unlock(prov);
	}
	return queue_data(task, IDM_DATA_IN, offset, length);
}
#endif

static int fake_get_data(struct idm_task *task, const uint8_t *tmpl,
			 struct idm_buf *buf, size_t buf_off, uint32_t offset,
			 uint32_t length, uint32_t flags)
{
	fake_stats.get_data++;
	return queue_data(task, IDM_DATA_OUT, offset, length);
}

static int fake_enable_datamover(struct idm_conn *conn, const uint8_t *rsp,
				 const void *data, size_t data_len)
{
	fake_stats.enable_datamover++;
	return 0;
}

static int cancel_transfer(struct idm_task *t, void *arg)
{
	struct fake_task *ft = idm_prov_task_priv(t);

	idm_prov_defer_cancel(arg, &ft->done);
	return 0;
}

static void fake_conn_terminate(struct idm_conn *conn)
{
	fake_stats.conn_terminate++;
	/* let go of every transfer: no callback may follow */
	idm_prov_conn_foreach_task(conn, cancel_transfer, idm_prov_conn_ctx(conn));
}

static void fake_task_free(struct idm_task *task)
{
	struct fake_task *ft = idm_prov_task_priv(task);

	fake_stats.task_free++;
	idm_prov_defer_cancel(idm_prov_conn_ctx(idm_task_conn(task)), &ft->done);
}

static int fake_alloc_conn_rsrc(struct idm_conn *conn)
{
	fake_stats.alloc_conn_rsrc++;
	return 0;
}

static void fake_free_conn_rsrc(struct idm_conn *conn)
{
	fake_stats.free_conn_rsrc++;
}

static int fake_notice_key_values(struct idm_conn *conn)
{
	fake_stats.notice_key_values++;
	return fake_stats.notice_fail;
}

static void fake_conn_free(struct idm_conn *conn)
{
	fake_stats.conn_free++;
	free(idm_prov_conn_priv(conn));
	idm_prov_conn_set_priv(conn, NULL);
}

static void fake_buf_release(struct idm_prov *prov, struct idm_buf *buf)
{
	fake_stats.buf_release++;
	if (idm_prov_dom_priv(prov) == &fake_stats)
		fake_stats.released_in_domain++;
	free(idm_prov_buf_reg(buf, prov));
	idm_prov_buf_set_reg(buf, prov, NULL);
}

#if FAKE_VARIANT != FAKE_OLDER
static int fake_dom_open(struct idm_prov *prov, void **priv)
{
	(void)prov;
	fake_stats.dom_open++;
	*priv = &fake_stats;
	return 0;
}

static void fake_dom_close(void *priv)
{
	if (priv == &fake_stats)
		fake_stats.dom_close++;
}
#endif

#if FAKE_VARIANT != FAKE_OLDER
/* Gauges the unit tests can recognise. */
static void fake_conn_stats(struct idm_conn *conn, struct idm_prov_stats *st)
{
	(void)conn;
	fake_stats.conn_stats++;
	st->sendq_entries = 7;
	st->sendq_bytes = 4242;
	/* two copies of 512 bytes and one of none, whatever came before */
	st->payload_copies = st->payload_copy_bytes = 0;
	idm_prov_stats_copy(st, 512);
	idm_prov_stats_copy(st, 0);
	idm_prov_stats_copy(st, 512);
}
#endif

#if FAKE_VARIANT == FAKE_MISNAME
#define FAKE_NAME "other"
#elif FAKE_VARIANT == FAKE_BADABI
#define FAKE_NAME "badabi"
#elif FAKE_VARIANT == FAKE_NOOP
#define FAKE_NAME "noop"
#elif FAKE_VARIANT == FAKE_NOENTRY
#define FAKE_NAME "noentry"
#elif FAKE_VARIANT == FAKE_SMALL
#define FAKE_NAME "small"
#elif FAKE_VARIANT == FAKE_INITFAIL
#define FAKE_NAME "initfail"
#elif FAKE_VARIANT == FAKE_OLDER
#define FAKE_NAME "older"
#elif FAKE_VARIANT == FAKE_OLDENTRY
#define FAKE_NAME "oldentry"
#elif FAKE_VARIANT == FAKE_OLDNODE
#define FAKE_NAME "oldnode"
#else
#define FAKE_NAME "fake"
#endif

#if FAKE_VARIANT != FAKE_OLDER
static const char *const fake_schemes[] = {"fake", NULL};
#endif

static const struct idm_prov_ops fake_ops = {
#if FAKE_VARIANT == FAKE_BADABI
	.abi_version = IDM_PROV_ABI + 1,
#else
	.abi_version = IDM_PROV_ABI,
#endif
#if FAKE_VARIANT == FAKE_SMALL
	.size = offsetof(struct idm_prov_ops, send_control),
#elif FAKE_VARIANT == FAKE_OLDER
	/* the table of a provider built against older headers of this
	 * IDM_PROV_ABI, without the optional ops added since (adopt,
	 * listen_fd, conn_stats): it must load, and the core must not read
	 * past it */
	.size = IDM_PROV_OPS_MIN_SIZE,
#else
	.size = sizeof(struct idm_prov_ops),
#endif
	.name = FAKE_NAME,
#if FAKE_VARIANT == FAKE_SECOND
	.description = "second fake",
#else
	.description = "fake provider for the unit tests",
#endif
	.caps = IDM_CAP_INITIATOR | IDM_CAP_TARGET | IDM_CAP_DATA_ACK,
	.task_priv_size = sizeof(struct fake_task),
	.init = fake_init,
	.fini = fake_fini,
	.listen = fake_listen,
	.unlisten = fake_unlisten,
	.listener_port = fake_listener_port,
	.connect = fake_connect,
	.send_control = fake_send_control,
#if FAKE_VARIANT != FAKE_NOOP
	.put_data = fake_put_data,
#endif
	.get_data = fake_get_data,
	.enable_datamover = fake_enable_datamover,
	.conn_terminate = fake_conn_terminate,
	.task_free = fake_task_free,
	.alloc_conn_rsrc = fake_alloc_conn_rsrc,
	.free_conn_rsrc = fake_free_conn_rsrc,
	.notice_key_values = fake_notice_key_values,
	.conn_free = fake_conn_free,
	.buf_release = fake_buf_release,
#if FAKE_VARIANT != FAKE_OLDER
	.conn_stats = fake_conn_stats,
	.url_schemes = fake_schemes,
	.dom_open = fake_dom_open,
	.dom_close = fake_dom_close,
#endif
};

#if FAKE_VARIANT == FAKE_OLDENTRY
/* The entry point under the name an older SDK gave it. */
IDM_PROV_EXPORT const struct idm_prov_ops *fake_old_entry(void) __asm__(FAKE_OLD_ENTRY);
IDM_PROV_EXPORT const struct idm_prov_ops *fake_old_entry(void)
{
	return &fake_ops;
}
#elif FAKE_VARIANT == FAKE_NOENTRY
/* Same function under another name, hidden: dlsym must not find it. */
const struct idm_prov_ops *fake_entry_hidden(void);
const struct idm_prov_ops *fake_entry_hidden(void)
{
	return &fake_ops;
}
#else
IDM_PROV_EXPORT const struct idm_prov_ops *IDM_PROV_ENTRY(void);
IDM_PROV_EXPORT const struct idm_prov_ops *IDM_PROV_ENTRY(void)
{
#if FAKE_VARIANT == FAKE_OLDER
	return &fake_ops;
#else
	/* the table with the place in the "auto" order the test asked for */
	static struct idm_prov_ops ops;
	const char *order = getenv("IDM_TEST_FAKE_AUTO_ORDER");

	ops = fake_ops;
	ops.auto_order = order ? (uint32_t)strtoul(order, NULL, 10) : 0;
	return &ops;
#endif
}
#endif
