/* SPDX-License-Identifier: BSD-2-Clause */
/* Logical units backed by a file (pread/pwrite) or by RAM. */
#ifndef IDM_TARGET_LUN_H
#define IDM_TARGET_LUN_H

#include <libidm/idm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PR_MAX_REGS 32

/* Persistent reservation state of a LUN (scsi_pr.c). */
struct pr_reg {
	char iport[256];   /* "initiator-name,i,0xISID" */
	uint64_t key;
};
struct pr_state {
	struct pr_reg regs[PR_MAX_REGS];
	int nregs;
	uint32_t generation;
	bool reserved;
	uint8_t type;
	char holder[256];  /* initiator port of the holder (not for *_AR types) */
};

#define LUN_MAX_LOOPS 64 /* --threads */

struct lun {
	int id;
	bool ram;
	int fd;            /* file LUN */
	uint8_t *mem;      /* RAM LUN */
	/* RAM LUN memory as a libidm buffer of each loop's context (zero
	 * copy): iSER registers buffers per context and takes on a
	 * connection only those of the connection's context */
	idm_buf *ib[LUN_MAX_LOOPS];
	uint64_t size;     /* bytes, a multiple of bs */
	uint32_t bs;
	uint64_t nblocks;
	char spec[256];
	char serial[17];
	uint8_t naa[8];    /* NAA 3 designator for VPD 0x83 */
	/* state changed by MODE SELECT / PREVENT / START STOP */
	bool wce;
	bool prevent;
	bool stopped;
	bool swp;          /* control mode page SWP: software write protect */
	bool ro;           /* ",ro" or a read-only backing file: write
	                      protected whatever MODE SELECT says */
	bool ro_forced;    /* ro because the file only allows reading */
	bool d_sense;      /* control mode page D_SENSE: descriptor sense */
	/* Reservations: loops (--threads) share a LUN. reserved_by is read
	 * and written with atomics; pr under scsi_pr.c's lock, mirrored in
	 * pr_held (atomic) so that a command on a LUN without persistent
	 * reservations checks them without the lock. */
	const void *reserved_by; /* SPC-2 RESERVE holder (I_T nexus) or NULL */
	struct pr_state pr;      /* SPC-4 persistent reservations */
	int pr_held;             /* pr.nregs || pr.reserved */
};

/**
 * Open a LUN from a spec: "ram:SIZE" (SIZE in bytes, or with K/M/G/T
 * suffix) or "file:PATH" (an existing regular file or block device),
 * either followed by ",ro" for a write-protected LUN. The size must be a
 * non-zero multiple of `bs`, the logical block size. A file we may only
 * read is served write protected and sets *forced_ro. On error returns
 * -errno with a message for the user in `why`.
 */
int lun_open_ex(const char *spec, int id, uint32_t bs, struct lun **out,
		bool *forced_ro, char *why, size_t whylen);
/** lun_open_ex() without the message. */
int lun_open(const char *spec, int id, uint32_t bs, struct lun **out);
/** Is the LUN write protected (",ro", read-only file, or SWP)? */
static inline bool lun_write_protected(const struct lun *l)
{
	return l->ro || l->swp;
}
/** Register RAM LUN memory with libidm (zero copy Put/Get_Data), as the
 *  buffer of loop `loop`, whose context is ctx. */
int lun_attach_ctx(struct lun *l, idm_ctx *ctx, int loop);
void lun_close(struct lun *l);

/* Byte-range I/O; the caller has checked the range. 0 or -errno. */
int lun_read(struct lun *l, void *dst, uint64_t off, size_t len);
int lun_write(struct lun *l, const void *src, uint64_t off, size_t len);
/** Make [off, off+len) read as zeros (UNMAP, WRITE SAME with UNMAP). */
int lun_unmap(struct lun *l, uint64_t off, uint64_t len);
int lun_flush(struct lun *l);

#endif
