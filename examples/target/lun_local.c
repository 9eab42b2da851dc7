/* SPDX-License-Identifier: BSD-2-Clause */
/* The local LUN kinds: RAM (calloc'd, zero copy through idm_buf_create)
 * and files or block devices (pread/pwrite, fdatasync, hole punching). */
#include "lun.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (shift && (*end == 'i' || *end == 'B'))
		end++;
	if (shift && *end == 'B')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

#define WHY(...) snprintf(why, whylen, __VA_ARGS__)

/* Open read-write unless the LUN is read-only; a file we may only read
 * is served read-only (*forced_ro). Returns the fd or -errno. */
static int open_backing(struct lun *l, const char *path, bool *forced_ro)
{
	int fd = l->ro ? -1 : open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0 && (l->ro || errno == EACCES || errno == EPERM || errno == EROFS)) {
		int werr = errno;

		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && !l->ro) {
			*forced_ro = true;
			l->ro = true;
		} else if (fd < 0 && !l->ro) {
			errno = werr;
		}
	}
	return fd < 0 ? -errno : fd;
}

/* The size of the open file or block device in l->fd */
static int backing_size(struct lun *l, const char *path, char *why, size_t whylen)
{
	struct stat st;

	if (fstat(l->fd, &st) < 0) {
		int e = errno;
		WHY("cannot stat %s: %s", path, strerror(e));
		return -e;
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(l->fd, BLKGETSIZE64, &l->size) < 0) {
			int e = errno;
			WHY("cannot get the size of block device %s: %s", path, strerror(e));
			return -e;
		}
	} else if (S_ISREG(st.st_mode)) {
		l->size = (uint64_t)st.st_size;
	} else {
		WHY("%s is not a regular file or a block device", path);
		return -EINVAL;
	}
	return 0;
}

int lun_local_open_file(struct lun *l, const char *path, bool *forced_ro,
			char *why, size_t whylen)
{
	struct stat st;
	int r;

	/* look before opening: opening a FIFO would block, a directory
	 * would only say EISDIR */
	if (stat(path, &st) < 0) {
		int e = errno;
		WHY("cannot open %s: %s", path, strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		WHY("%s is not a regular file or a block device", path);
		return -EINVAL;
	}
	l->fd = open_backing(l, path, forced_ro);
	if (l->fd < 0) {
		r = l->fd;
		l->fd = -1;
		WHY("cannot open %s: %s", path, strerror(-r));
		return r;
	}
	l->ops = &lun_file_ops;
	if ((r = backing_size(l, path, why, whylen)) < 0)
		return r;
	if (!l->size) {
		WHY("%s is empty (0 bytes)", path);
		return -EINVAL;
	}
	if (l->size % l->bs) {
		WHY("%s is %llu bytes, not a multiple of the block size %u "
		    "(grow it with truncate -s, or serve part of it with a loop device)",
		    path, (unsigned long long)l->size, l->bs);
		return -EINVAL;
	}
	return 0;
}

/* ram:SIZE: a LUN in memory */
int lun_local_open_ram(struct lun *l, const char *size, const char *spec,
		       char *why, size_t whylen)
{
	if (parse_size(size, &l->size) < 0) {
		WHY("bad size '%s' in '%s': a number of bytes with an "
		    "optional K, M, G or T suffix, e.g. ram:64M", size, spec);
		return -EINVAL;
	}
	if (!l->size) {
		WHY("'%s': the size must not be 0", spec);
		return -EINVAL;
	}
	if (l->size % l->bs) {
		WHY("'%s': %llu bytes is not a multiple of the block size %u",
		    spec, (unsigned long long)l->size, l->bs);
		return -EINVAL;
	}
	l->ram = true;
	l->ops = &lun_ram_ops;
	l->mem = calloc(1, l->size);
	if (!l->mem) {
		WHY("'%s': cannot allocate %llu bytes", spec,
		    (unsigned long long)l->size);
		return -ENOMEM;
	}
	return 0;
}

static int ram_read(struct lun *l, void *dst, uint64_t off, size_t len)
{
	memcpy(dst, l->mem + off, len);
	return 0;
}

static int file_read(struct lun *l, void *dst, uint64_t off, size_t len)
{
	uint8_t *p = dst;

	while (len) {
		ssize_t n = pread(l->fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) { /* past EOF of a file that shrank: zeros */
			memset(p, 0, len);
			return 0;
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static int ram_write(struct lun *l, const void *src, uint64_t off, size_t len)
{
	if (l->mem + off != (const uint8_t *)src)  /* data may already be in place */
		memmove(l->mem + off, src, len);
	return 0;
}

static int file_write(struct lun *l, const void *src, uint64_t off, size_t len)
{
	const uint8_t *p = src;

	while (len) {
		ssize_t n = pwrite(l->fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* Make [off, off+len) read as zeros (UNMAP, WRITE SAME with UNMAP):
 * punch a hole, or write zeros where that is not supported */
static int file_discard(struct lun *l, uint64_t off, uint64_t len)
{
	static const uint8_t zeros[65536];

	if (fallocate(l->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)off, (off_t)len) == 0)
		return 0;
	while (len) {
		size_t n = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);
		int r = file_write(l, zeros, off, n);
		if (r < 0)
			return r;
		off += n;
		len -= n;
	}
	return 0;
}

/* WRITE SAME: the pattern block by block */
static int write_same(struct lun *l, const void *pat, uint32_t pat_len, uint64_t off,
		      uint64_t len)
{
	for (uint64_t o = 0; o < len; o += pat_len) {
		int r = l->ops->write(l, pat, off + o, pat_len);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * The local kinds complete inline: a RAM LUN's call is a memcpy, and a
 * file LUN's pread/pwrite mostly hits the page cache, where handing it
 * to a thread pool would cost two thread switches and a wakeup per I/O
 * on a machine whose cores run the loops (the loop stays blocked while
 * the disk works; io_uring would be the way to lift that).
 */
static void local_submit(struct lun *l, struct lun_io *io)
{
	int r = 0;

	switch (io->op) {
	case LUN_OP_READ:
		r = l->ops->read(l, io->buf, io->off, (size_t)io->len);
		break;
	case LUN_OP_WRITE:
		r = l->ops->write(l, io->buf, io->off, (size_t)io->len);
		break;
	case LUN_OP_FLUSH:
		if (!l->ram)
			r = fdatasync(l->fd) < 0 ? -errno : 0;
		break;
	case LUN_OP_DISCARD:
		if (l->ram)
			memset(l->mem + io->off, 0, (size_t)io->len);
		else
			r = file_discard(l, io->off, io->len);
		break;
	case LUN_OP_WRITE_SAME:
		r = io->pat_len ? write_same(l, io->buf, io->pat_len, io->off, io->len) : -EINVAL;
		break;
	}
	io->result = r;
	lun_io_complete(io);
}

static void ram_close(struct lun *l)
{
	free(l->mem);
	l->mem = NULL;
}

static void file_close(struct lun *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

const struct lun_ops lun_ram_ops = {
	.kind = "ram",
	.submit = local_submit,
	.read = ram_read,
	.write = ram_write,
	.close = ram_close,
};

const struct lun_ops lun_file_ops = {
	.kind = "file",
	.submit = local_submit,
	.read = file_read,
	.write = file_write,
	.close = file_close,
};
