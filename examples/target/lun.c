/* SPDX-License-Identifier: BSD-2-Clause */
/* LUN backends: RAM (calloc'd, zero copy through idm_buf_create) and
 * files (pread/pwrite, fdatasync). */
#include "lun.h"

#include <errno.h>
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

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	case 't': case 'T': v <<= 40; end++; break;
	default: break;
	}
	if (*end == 'i' || *end == 'B')
		end++;
	if (*end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int lun_open(const char *spec, int id, uint32_t bs, struct lun **out)
{
	struct lun *l = calloc(1, sizeof(*l));
	uint64_t size = 0;
	int r;

	if (!l)
		return -ENOMEM;
	l->id = id;
	l->bs = bs;
	l->fd = -1;
	l->wce = true;
	snprintf(l->spec, sizeof(l->spec), "%s", spec);
	if (strncmp(spec, "ram:", 4) == 0) {
		if ((r = parse_size(spec + 4, &size)) < 0)
			goto fail;
		size -= size % bs;
		l->ram = true;
		l->mem = size ? calloc(1, size) : NULL;
		if (!l->mem) {
			r = size ? -ENOMEM : -EINVAL;
			goto fail;
		}
	} else if (strncmp(spec, "file:", 5) == 0) {
		struct stat st;
		l->fd = open(spec + 5, O_RDWR | O_CLOEXEC);
		if (l->fd < 0) {
			r = -errno;
			goto fail;
		}
		if (fstat(l->fd, &st) < 0) {
			r = -errno;
			goto fail;
		}
		if (S_ISBLK(st.st_mode)) {
			if (ioctl(l->fd, BLKGETSIZE64, &size) < 0) {
				r = -errno;
				goto fail;
			}
		} else {
			size = (uint64_t)st.st_size;
		}
		size -= size % bs;
		if (!size) {
			r = -EINVAL;
			goto fail;
		}
	} else {
		r = -EINVAL;
		goto fail;
	}
	l->size = size;
	l->nblocks = size / bs;
	/* stable per-LUN identifiers derived from the id and the spec */
	uint32_t h = 2166136261u;
	for (const char *p = spec; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	snprintf(l->serial, sizeof(l->serial), "IDM%04x%08x", (unsigned)id & 0xffff, h);
	/* NAA 3 (locally assigned, 8 bytes, SPC-4 7.8.6.6.2) */
	l->naa[0] = 0x3d;
	l->naa[1] = 0x1d;
	l->naa[2] = (uint8_t)(id >> 8);
	l->naa[3] = (uint8_t)id;
	l->naa[4] = (uint8_t)(h >> 24);
	l->naa[5] = (uint8_t)(h >> 16);
	l->naa[6] = (uint8_t)(h >> 8);
	l->naa[7] = (uint8_t)(h ^ (uint32_t)id);
	*out = l;
	return 0;
fail:
	if (l->fd >= 0)
		close(l->fd);
	free(l->mem);
	free(l);
	return r;
}

int lun_attach_ctx(struct lun *l, idm_ctx *ctx)
{
	if (!l->ram)
		return 0;
	return idm_buf_create(ctx, l->mem, l->size, &l->ib);
}

void lun_close(struct lun *l)
{
	if (!l)
		return;
	if (l->ib)
		idm_buf_destroy(l->ib);
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
