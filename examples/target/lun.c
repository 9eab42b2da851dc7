/* SPDX-License-Identifier: BSD-2-Clause */
/* LUN backends: RAM (calloc'd, zero copy through idm_buf_create) and
 * files (pread/pwrite, fdatasync). */
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

/* Open the backing file: read-write unless `ro`, and read-only (write
 * protected) when the file only allows reading. */
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

static int open_file(struct lun *l, const char *path, bool *forced_ro,
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
static int open_ram(struct lun *l, const char *size, const char *spec, char *why, size_t whylen)
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
	l->mem = calloc(1, l->size);
	if (!l->mem) {
		WHY("'%s': cannot allocate %llu bytes", spec,
		    (unsigned long long)l->size);
		return -ENOMEM;
	}
	return 0;
}

/* The backend `body` names: ram:SIZE or file:PATH */
static int open_backend(struct lun *l, const char *body, const char *spec, bool *forced_ro,
			char *why, size_t whylen)
{
	const char *colon;

	if (strncmp(body, "ram:", 4) == 0)
		return open_ram(l, body + 4, spec, why, whylen);
	if (strncmp(body, "file:", 5) == 0) {
		if (!body[5]) {
			WHY("'%s': file: needs a path", spec);
			return -EINVAL;
		}
		return open_file(l, body + 5, forced_ro, why, whylen);
	}
	colon = strchr(body, ':');
	WHY("unknown LUN type '%.*s' in '%s': use ram:SIZE or file:PATH, "
	    "with ,ro for a write-protected LUN",
	    colon ? (int)(colon - body) : (int)strlen(body), body, spec);
	return -EINVAL;
}

/* Stable per-LUN identifiers derived from the id and the spec: the unit
 * serial number and an NAA 3 designator (locally assigned, 8 bytes,
 * SPC-4 7.8.6.6.2) */
static void make_identifiers(struct lun *l)
{
	uint32_t h = 2166136261u;
	int id = l->id;

	for (const char *p = l->spec; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	snprintf(l->serial, sizeof(l->serial), "IDM%04x%08x", (unsigned)id & 0xffff, h);
	l->naa[0] = 0x3d;
	l->naa[1] = 0x1d;
	l->naa[2] = (uint8_t)(id >> 8);
	l->naa[3] = (uint8_t)id;
	l->naa[4] = (uint8_t)(h >> 24);
	l->naa[5] = (uint8_t)(h >> 16);
	l->naa[6] = (uint8_t)(h >> 8);
	l->naa[7] = (uint8_t)(h ^ (uint32_t)id);
}

static void lun_free(struct lun *l)
{
	if (l->fd >= 0)
		close(l->fd);
	free(l->mem);
	free(l);
}

int lun_open_ex(const char *spec, int id, uint32_t bs, struct lun **out,
		bool *forced_ro, char *why, size_t whylen)
{
	struct lun *l = calloc(1, sizeof(*l));
	char body[256];
	size_t n = strlen(spec);
	int r;

	*forced_ro = false;
	if (!l) {
		WHY("out of memory");
		return -ENOMEM;
	}
	l->id = id;
	l->bs = bs;
	l->fd = -1;
	l->wce = true;
	if (n >= sizeof(body)) {
		WHY("LUN spec longer than %zu bytes", sizeof(body) - 1);
		lun_free(l);
		return -ENAMETOOLONG;
	}
	/* ",ro" at the end: serve the LUN write protected */
	snprintf(body, sizeof(body), "%s", spec);
	if (n > 3 && !strcmp(body + n - 3, ",ro")) {
		body[n - 3] = '\0';
		l->ro = true;
	}
	snprintf(l->spec, sizeof(l->spec), "%s", body);
	r = open_backend(l, body, spec, forced_ro, why, whylen);
	if (r < 0) {
		lun_free(l);
		return r;
	}
	l->nblocks = l->size / bs;
	make_identifiers(l);
	*out = l;
	return 0;
}

int lun_open(const char *spec, int id, uint32_t bs, struct lun **out)
{
	char why[256];
	bool forced_ro;

	return lun_open_ex(spec, id, bs, out, &forced_ro, why, sizeof(why));
}

int lun_attach_ctx(struct lun *l, idm_ctx *ctx, int loop)
{
	if (!l->ram)
		return 0;
	if (loop < 0 || loop >= LUN_MAX_LOOPS)
		return -EINVAL;
	return idm_buf_create(ctx, l->mem, l->size, &l->ib[loop]);
}

void lun_close(struct lun *l)
{
	if (!l)
		return;
	for (int i = 0; i < LUN_MAX_LOOPS; i++)
		if (l->ib[i])
			idm_buf_destroy(l->ib[i]);
	if (l->fd >= 0)
		close(l->fd);
	free(l->mem);
	free(l);
}

int lun_read(struct lun *l, void *dst, uint64_t off, size_t len)
{
	uint8_t *p = dst;

	if (l->ram) {
		memcpy(dst, l->mem + off, len);
		return 0;
	}
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

int lun_write(struct lun *l, const void *src, uint64_t off, size_t len)
{
	const uint8_t *p = src;

	if (l->ram) {
		if (l->mem + off != p)  /* data may already be in place */
			memmove(l->mem + off, src, len);
		return 0;
	}
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

int lun_unmap(struct lun *l, uint64_t off, uint64_t len)
{
	static const uint8_t zeros[65536];

	if (l->ram) {
		memset(l->mem + off, 0, len);
		return 0;
	}
	if (fallocate(l->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)off, (off_t)len) == 0)
		return 0;
	while (len) {
		size_t n = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);
		int r = lun_write(l, zeros, off, n);
		if (r < 0)
			return r;
		off += n;
		len -= n;
	}
	return 0;
}

int lun_flush(struct lun *l)
{
	if (l->ram)
		return 0;
	return fdatasync(l->fd) < 0 ? -errno : 0;
}
