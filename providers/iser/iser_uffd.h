/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_uffd.c: the process's one userfaultfd monitor, which tells the
 * registration caches (iser_mrcache.c) when memory they registered is
 * unmapped, discarded or moved, before the address can be used again.
 * Verbs-free. */
#ifndef IDM_ISER_UFFD_H
#define IDM_ISER_UFFD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A cache told of changed ranges. invalidate runs on the monitor thread,
 * must not block on anything but a short lock, and must not allocate,
 * free or unmap memory (that could wait for the monitor itself). */
struct iser_uffd_client {
	void (*invalidate)(struct iser_uffd_client *c, uintptr_t start,
			   uintptr_t end);
	struct iser_uffd_client *next;
};

/* c hears of every change from now on: 0, or -errno when userfaultfd is
 * not available here (then nothing can be cached safely). */
int iser_uffd_attach(struct iser_uffd_client *c);
/* c hears nothing more once this returns. */
void iser_uffd_detach(struct iser_uffd_client *c);
/* Watch the pages of [addr, addr+len): 0, or -errno when they cannot be
 * watched (not private anonymous memory, another monitor's, ...). */
int iser_uffd_watch(const void *addr, size_t len);
/* Wait until no event that was read is still being handed out: any
 * unmap that returned before this call is then known to the clients. */
void iser_uffd_settle(void);

#endif
