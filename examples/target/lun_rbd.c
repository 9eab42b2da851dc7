/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * RBD LUNs: "rbd:POOL/IMAGE", a Ceph RBD image through librbd's
 * asynchronous calls. librbd completes on its own threads: the callback
 * only records the result and queues the call on the submitting loop's
 * completion queue (lun_cq.h), which wakes that loop; the SCSI command
 * goes on there. Reads land in the buffer the Data-In goes out from and
 * writes leave from the buffer the Data-Out arrived in.
 *
 * The cluster is found through g_lun_rbd (--rbd-conf, --rbd-user,
 * --rbd-keyring, --rbd-timeout): never a key on the command line.
 */
#include "lun.h"
#include "lun_cq.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rados/librados.h>
#include <rbd/librbd.h>

#define WHY(...) snprintf(why, whylen, __VA_ARGS__)

struct rbd_lun {
	rados_t cluster;
	rados_ioctx_t ioctx;
	rbd_image_t image;
	uint64_t watch;
	bool connected, have_ioctx, have_image, watching;
};

/* librbd's thread: the image's header changed (a resize among others) */
static void rbd_changed(void *arg)
{
	struct lun *l = arg;
	struct rbd_lun *rl = l->priv;
	uint64_t size;

	if (rbd_get_size(rl->image, &size) == 0)
		lun_resized(l, size);
}

/* librbd's thread: hand the call back to its loop. */
static void rbd_done(rbd_completion_t c, void *arg)
{
	struct lun_io *io = arg;
	ssize_t r = rbd_aio_get_return_value(c);

	rbd_aio_release(c);
	/* a read returns the bytes read: whole, as librbd reads past the
	 * end of written data as zeros */
	io->result = r < 0 ? (int)r : 0;
	lun_cq_push(io->cq, io);
}

static void rbd_submit(struct lun *l, struct lun_io *io)
{
	struct rbd_lun *rl = l->priv;
	rbd_completion_t c;
	int r;

	if (!io->cq) { /* no loop to complete on (unit tests): refused */
		io->result = -EOPNOTSUPP;
		lun_io_complete(io);
		return;
	}
	/* librbd allocates its completion: one allocation per I/O that is
	 * not ours to avoid through the C API */
	r = rbd_aio_create_completion(io, rbd_done, &c);
	if (r < 0) {
		io->result = r;
		lun_io_complete(io);
		return;
	}
	switch (io->op) {
	case LUN_OP_READ:
		r = rbd_aio_read(rl->image, io->off, (size_t)io->len, io->buf, c);
		break;
	case LUN_OP_WRITE:
		r = rbd_aio_write(rl->image, io->off, (size_t)io->len, io->buf, c);
		break;
	case LUN_OP_FLUSH:
		r = rbd_aio_flush(rl->image, c);
		break;
	case LUN_OP_DISCARD:
		r = rbd_aio_discard(rl->image, io->off, io->len, c);
		break;
	case LUN_OP_WRITE_SAME:
		r = rbd_aio_writesame(rl->image, io->off, (size_t)io->len, io->buf,
				      io->pat_len, c, 0);
		break;
	default:
		r = -EINVAL;
		break;
	}
	if (r < 0) {
		rbd_aio_release(c);
		io->result = r;
		lun_io_complete(io);
		return;
	}
	lun_cq_submitted(io->cq);
}

static int rbd_read_sync(struct lun *l, void *dst, uint64_t off, size_t len)
{
	struct rbd_lun *rl = l->priv;
	ssize_t r = rbd_read(rl->image, off, len, dst);

	return r < 0 ? (int)r : (size_t)r == len ? 0 : -EIO;
}

static int rbd_write_sync(struct lun *l, const void *src, uint64_t off, size_t len)
{
	struct rbd_lun *rl = l->priv;
	ssize_t r = rbd_write(rl->image, off, len, src);

	return r < 0 ? (int)r : (size_t)r == len ? 0 : -EIO;
}

static void rbd_close_lun(struct lun *l)
{
	struct rbd_lun *rl = l->priv;

	if (!rl)
		return;
	if (rl->watching)
		rbd_update_unwatch(rl->image, rl->watch);
	if (rl->have_image)
		rbd_close(rl->image); /* waits for calls in flight */
	if (rl->have_ioctx)
		rados_ioctx_destroy(rl->ioctx);
	if (rl->connected)
		rados_shutdown(rl->cluster);
	free(rl);
	l->priv = NULL;
}

static const struct lun_ops lun_rbd_ops = {
	.kind = "rbd",
	.submit = rbd_submit,
	.read = rbd_read_sync,
	.write = rbd_write_sync,
	.close = rbd_close_lun,
};

/* The cluster handle, configured as g_lun_rbd says */
static int rbd_connect(struct rbd_lun *rl, const char *spec, char *why, size_t whylen)
{
	char name[128], tmo[16];
	int r;

	snprintf(name, sizeof(name), "client.%s", g_lun_rbd.user ? g_lun_rbd.user : "admin");
	r = rados_create2(&rl->cluster, "ceph", name, 0);
	if (r < 0) {
		WHY("'%s': cannot create a cluster handle for %s: %s", spec, name, strerror(-r));
		return r;
	}
	rl->connected = true; /* rados_shutdown() frees the handle too */
	r = rados_conf_read_file(rl->cluster, g_lun_rbd.conf);
	if (r < 0) {
		WHY("'%s': cannot read the Ceph configuration %s: %s", spec,
		    g_lun_rbd.conf ? g_lun_rbd.conf : "(default search path)", strerror(-r));
		return r;
	}
	if (g_lun_rbd.keyring && (r = rados_conf_set(rl->cluster, "keyring", g_lun_rbd.keyring)) < 0) {
		WHY("'%s': keyring %s: %s", spec, g_lun_rbd.keyring, strerror(-r));
		return r;
	}
	/* UNMAP deallocates and the LUN says unmapped blocks read as zeros
	 * (LBPRZ): librbd must zero the partial objects a discard covers,
	 * not skip them */
	rados_conf_set(rl->cluster, "rbd_skip_partial_discard", "false");
	/* a cluster that is down: commands fail after the timeout instead
	 * of waiting for ever, and start-up gives up */
	snprintf(tmo, sizeof(tmo), "%u", g_lun_rbd.timeout_s ? g_lun_rbd.timeout_s : 30);
	rados_conf_set(rl->cluster, "client_mount_timeout", tmo);
	if (g_lun_rbd.timeout_s) {
		rados_conf_set(rl->cluster, "rados_osd_op_timeout", tmo);
		rados_conf_set(rl->cluster, "rados_mon_op_timeout", tmo);
	}
	r = rados_connect(rl->cluster);
	if (r < 0) {
		WHY("'%s': cannot connect to the Ceph cluster as %s: %s", spec, name, strerror(-r));
		return r;
	}
	return 0;
}

int lun_rbd_open(struct lun *l, const char *name, const char *spec, char *why, size_t whylen)
{
	const char *slash = strchr(name, '/');
	struct rbd_lun *rl;
	char pool[128];
	uint64_t size;
	int r;

	if (!slash || slash == name || !slash[1] || strchr(slash + 1, '/') ||
	    (size_t)(slash - name) >= sizeof(pool)) {
		WHY("'%s': rbd: takes POOL/IMAGE, e.g. rbd:rbd/disk0", spec);
		return -EINVAL;
	}
	snprintf(pool, sizeof(pool), "%.*s", (int)(slash - name), name);
	rl = calloc(1, sizeof(*rl));
	if (!rl) {
		WHY("out of memory");
		return -ENOMEM;
	}
	l->priv = rl;
	l->ops = &lun_rbd_ops; /* its close undoes what was done */
	if ((r = rbd_connect(rl, spec, why, whylen)) < 0)
		return r;
	r = rados_ioctx_create(rl->cluster, pool, &rl->ioctx);
	if (r < 0) {
		WHY("'%s': pool %s: %s", spec, pool, strerror(-r));
		return r;
	}
	rl->have_ioctx = true;
	r = l->ro ? rbd_open_read_only(rl->ioctx, slash + 1, &rl->image, NULL)
		  : rbd_open(rl->ioctx, slash + 1, &rl->image, NULL);
	if (r < 0) {
		WHY("'%s': cannot open image %s in pool %s: %s", spec, slash + 1, pool,
		    strerror(-r));
		return r;
	}
	rl->have_image = true;
	r = rbd_get_size(rl->image, &size);
	if (r < 0) {
		WHY("'%s': cannot get the image size: %s", spec, strerror(-r));
		return r;
	}
	if (!size || size % l->bs) {
		WHY("'%s': the image is %llu bytes, not a non-zero multiple of the block size %u",
		    spec, (unsigned long long)size, l->bs);
		return -EINVAL;
	}
	l->size = size;
	/* a resize: READ CAPACITY follows, and every nexus gets CAPACITY
	 * DATA HAS CHANGED once (not a size that is no multiple of bs) */
	if (rbd_update_watch(rl->image, &rl->watch, rbd_changed, l) == 0)
		rl->watching = true;
	return 0;
}
