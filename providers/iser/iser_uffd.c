/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The userfaultfd monitor of registration caches (iser_mrcache.c).
 *
 * A cache must never hand out a registration of pages the caller freed:
 * when memory is unmapped and new pages are mapped at the same address,
 * the old MR still pins (and the adapter would read and write) the old
 * pages. The kernel reports unmap (munmap, mremap shrink, MAP_FIXED over
 * a mapping, brk), remove (madvise DONTNEED/REMOVE) and remap (mremap)
 * of ranges registered with a userfaultfd, and the thread doing the
 * unmap waits until the event was read. So: one userfaultfd per process
 * (a range can be registered with one only), created with
 * UFFD_USER_MODE_ONLY (no privilege needed), ranges registered in
 * write-protect mode with nothing ever write-protected, so no fault is
 * ever trapped. Only private anonymous memory is watched: pages of a
 * shared or file mapping can change without any event in this process
 * (another mapping truncates or punches the file), and newer kernels
 * would let such ranges register. /proc/self/maps tells, read on a
 * cache miss only (a miss registers memory anyway, which costs more).
 *
 * The race: the unmap returns as soon as the monitor read the event, not
 * when the caches dropped the entries. The monitor makes seq odd before
 * it reads and even after every client was told; a lookup first waits
 * for an even seq (iser_uffd_settle), so a lookup that starts after an
 * unmap returned sees its invalidation.
 *
 * The monitor thread and the clients' callbacks never allocate, free or
 * unmap memory: any of those could trim a heap whose pages are watched
 * and wait for the monitor itself. Ranges are not unregistered one by
 * one: an event on a range no entry uses is read and ignored. The
 * monitor lives as long as a cache is attached: the first attach starts
 * it, the last detach stops its thread and closes the userfaultfd (which
 * unregisters every range and lets any unmap waiting on it go on), so a
 * process that destroyed its last context holds no descriptor or thread
 * of ours.
 */
#include "iser_uffd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/userfaultfd.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

/* The monitor's life: started by the first client, stopped by the last
 * (under life_lock, never taken by the monitor thread). */
static pthread_mutex_t life_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned mon_users;
static pthread_t mon_thread;
static int stop_fd = -1;     /* eventfd: the thread's signal to end */
static int mon_fd = -1;
static pthread_mutex_t mon_lock = PTHREAD_MUTEX_INITIALIZER;
static struct iser_uffd_client *mon_clients; /* under mon_lock */
static _Atomic uint64_t mon_seq;  /* odd: events being handed out */
static long mon_page;

static void tell(uintptr_t start, uintptr_t end)
{
	for (struct iser_uffd_client *c = mon_clients; c; c = c->next)
		c->invalidate(c, start, end);
}

static void handle(const struct uffd_msg *m)
{
	switch (m->event) {
	case UFFD_EVENT_UNMAP:
	case UFFD_EVENT_REMOVE:
		tell((uintptr_t)m->arg.remove.start,
		     (uintptr_t)m->arg.remove.end);
		break;
	case UFFD_EVENT_REMAP:
		tell((uintptr_t)m->arg.remap.from,
		     (uintptr_t)(m->arg.remap.from + m->arg.remap.len));
		break;
	case UFFD_EVENT_PAGEFAULT: {
		/* nothing is write-protected, so none should come; should
		 * one, let the thread go on rather than hang it */
		struct uffdio_writeprotect wp = {
			.range = {m->arg.pagefault.address &
				  ~(uint64_t)(mon_page - 1), (uint64_t)mon_page},
			.mode = 0,
		};

		(void)ioctl(mon_fd, UFFDIO_WRITEPROTECT, &wp);
		break;
	}
	default:
		break;
	}
}

static void *mon_main(void *arg)
{
	struct uffd_msg msg[16];
	struct pollfd p[2] = {{.fd = mon_fd, .events = POLLIN},
			      {.fd = stop_fd, .events = POLLIN}};

	(void)arg;
	for (;;) {
		ssize_t n;

		if (poll(p, 2, -1) < 0)
			continue; /* EINTR */
		if (p[1].revents)
			break;
		pthread_mutex_lock(&mon_lock);
		atomic_fetch_add_explicit(&mon_seq, 1, memory_order_acq_rel);
		while ((n = read(mon_fd, msg, sizeof(msg))) > 0)
			for (size_t i = 0; i < (size_t)n / sizeof(msg[0]); i++)
				handle(&msg[i]);
		atomic_fetch_add_explicit(&mon_seq, 1, memory_order_acq_rel);
		pthread_mutex_unlock(&mon_lock);
	}
	return NULL;
}

/* Start the monitor: 0, or -errno when userfaultfd is not available here
 * (then nothing can be cached safely). Under life_lock. */
static int mon_start(void)
{
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE |
			    UFFD_FEATURE_EVENT_REMAP,
	};
	sigset_t all, old;
	int fd, efd, r;

	mon_page = sysconf(_SC_PAGESIZE);
	fd = (int)syscall(SYS_userfaultfd,
			  O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	mon_fd = fd;
	stop_fd = efd;
	/* the monitor takes no signal of the caller's */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&mon_thread, NULL, mon_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		mon_fd = stop_fd = -1;
		close(efd);
		close(fd);
		return -r;
	}
	pthread_setname_np(mon_thread, "idm-iser-uffd");
	return 0;
}

/* Stop the monitor and close its descriptors. Under life_lock, with no
 * client left. */
static void mon_stop(void)
{
	uint64_t one = 1;

	if (write(stop_fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		return; /* cannot happen on an eventfd; keep it running */
	pthread_join(mon_thread, NULL);
	close(mon_fd);
	close(stop_fd);
	mon_fd = stop_fd = -1;
}

int iser_uffd_attach(struct iser_uffd_client *c)
{
	int r = 0;

	pthread_mutex_lock(&life_lock);
	if (mon_users == 0)
		r = mon_start();
	if (r == 0) {
		mon_users++;
		pthread_mutex_lock(&mon_lock);
		c->next = mon_clients;
		mon_clients = c;
		pthread_mutex_unlock(&mon_lock);
	}
	pthread_mutex_unlock(&life_lock);
	return r;
}

void iser_uffd_detach(struct iser_uffd_client *c)
{
	pthread_mutex_lock(&life_lock);
	pthread_mutex_lock(&mon_lock);
	for (struct iser_uffd_client **p = &mon_clients; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	pthread_mutex_unlock(&mon_lock);
	if (mon_users && --mon_users == 0)
		mon_stop();
	pthread_mutex_unlock(&life_lock);
}

/* One line of /proc/self/maps: does it cover a private anonymous
 * mapping, and where. */
static bool maps_line(const char *l, uintptr_t *s, uintptr_t *e)
{
	unsigned long long a, b, ino;
	char perms[8];
	int path = 0;

	*s = *e = 0; /* a line it cannot read covers nothing */
	if (sscanf(l, "%llx-%llx %7s %*s %*s %llu %n", &a, &b, perms, &ino,
		   &path) < 4)
		return false;
	*s = (uintptr_t)a;
	*e = (uintptr_t)b;
	/* no file (inode 0) and no name but the kernel's own [heap],
	 * [stack], [anon:...]; shared anonymous memory is shmem ('s') */
	return perms[3] == 'p' && ino == 0 && (l[path] == '\0' ||
					       l[path] == '[');
}

/* Whether [s, e) lies wholly in private anonymous mappings. Reads
 * /proc/self/maps with a buffer on the stack (no allocation). */
static bool private_anon(uintptr_t s, uintptr_t e)
{
	char buf[4096];
	size_t have = 0;
	uintptr_t at = s;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	bool ok = false;

	if (fd < 0)
		return false;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *l = buf, *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		while ((nl = strchr(l, '\n'))) {
			uintptr_t vs, ve;
			bool anon;

			*nl = '\0';
			anon = maps_line(l, &vs, &ve);
			l = nl + 1;
			if (ve <= at)
				continue;
			if (vs > at || !anon)
				goto done; /* a hole, or not anonymous */
			at = ve;
			if (at >= e) {
				ok = true;
				goto done;
			}
		}
		have = (size_t)(buf + have - l);
		if (have == sizeof(buf) - 1)
			break; /* a line longer than the buffer: give up */
		memmove(buf, l, have);
	}
done:
	close(fd);
	return ok;
}

int iser_uffd_watch(const void *addr, size_t len)
{
	uintptr_t s = (uintptr_t)addr & ~(uintptr_t)(mon_page - 1);
	uintptr_t e = ((uintptr_t)addr + len + (uintptr_t)mon_page - 1) &
		      ~(uintptr_t)(mon_page - 1);
	struct uffdio_register r = {
		.range = {s, e - s},
		.mode = UFFDIO_REGISTER_MODE_WP,
	};

	if (mon_fd < 0)
		return -ENODEV;
	if (len == 0 || e <= s)
		return -EINVAL;
	if (!private_anon(s, e))
		return -EPERM;
	return ioctl(mon_fd, UFFDIO_REGISTER, &r) < 0 ? -errno : 0;
}

void iser_uffd_settle(void)
{
	while (atomic_load_explicit(&mon_seq, memory_order_acquire) & 1)
		sched_yield();
}
