/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Logical units: RAM, a file or block device, or a Ceph RBD image. Each
 * kind has an ops table (struct lun_ops). The medium access of the SCSI
 * layer (READ, WRITE, SYNCHRONIZE CACHE, UNMAP, WRITE SAME) goes through
 * lun_submit(), which completes through a callback on the loop thread
 * that submitted: RAM and file LUNs complete inline, before lun_submit()
 * returns; an RBD LUN completes on librbd's threads, which queue the I/O
 * on the submitter's completion queue (lun_cq.h) and wake its loop.
 */
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

struct lun;
struct lun_cq;

enum lun_op {
	LUN_OP_READ,       /* buf <- [off, off+len) */
	LUN_OP_WRITE,      /* buf -> [off, off+len) */
	LUN_OP_FLUSH,      /* make written data durable */
	LUN_OP_DISCARD,    /* [off, off+len) reads back as zeros */
	LUN_OP_WRITE_SAME, /* the pat_len bytes at buf, repeated over [off, off+len) */
};

/*
 * One asynchronous LUN call, owned by its submitter (embedded in the SCSI
 * command: no allocation per I/O of ours). The data moves straight
 * between `buf` and the backend.
 */
struct lun_io {
	struct lun_io *next;   /* in a completion queue */
	enum lun_op op;
	void *buf;
	uint64_t off, len;
	uint32_t pat_len;      /* LUN_OP_WRITE_SAME */
	int result;            /* 0 or -errno, set before done() */
	struct lun_cq *cq;     /* the submitting loop's queue, for backends
	                          that complete on their own threads */
	void (*done)(struct lun_io *io); /* on the submitting thread */
	void *arg;             /* the submitter's */
	struct lun *lun;       /* set by lun_submit() */
};

/* What a kind of LUN implements. */
struct lun_ops {
	const char *kind;      /* "ram", "file", "rbd" */
	/* Start `io`; it ends with lun_io_complete(io), inline or later
	 * (through io->cq on the submitting loop). */
	void (*submit)(struct lun *l, struct lun_io *io);
	/* Synchronous byte-range calls, for the commands that stay
	 * synchronous (VERIFY, COMPARE AND WRITE, ORWRITE). */
	int (*read)(struct lun *l, void *dst, uint64_t off, size_t len);
	int (*write)(struct lun *l, const void *src, uint64_t off, size_t len);
	void (*close)(struct lun *l);
};

/* Where RBD LUNs find their cluster (--rbd-conf, --rbd-user,
 * --rbd-keyring, --rbd-timeout): set before the LUNs are opened. */
struct lun_rbd_settings {
	const char *conf;      /* ceph.conf; NULL: librados' default search */
	const char *user;      /* client id without "client."; NULL: admin */
	const char *keyring;   /* keyring file; NULL: the configuration's */
	unsigned timeout_s;    /* OSD/monitor operation timeout; 0: none */
};
extern struct lun_rbd_settings g_lun_rbd;

struct lun {
	int id;
	const struct lun_ops *ops;
	void *priv;        /* the kind's own state (RBD image) */
	int inflight;      /* lun_submit() calls not completed (atomic) */
	bool ram;
	int fd;            /* file LUN */
	uint8_t *mem;      /* RAM LUN */
	idm_buf *ib;       /* RAM LUN memory as a libidm buffer: zero copy */
	uint64_t size;     /* bytes, a multiple of bs */
	uint32_t bs;
	uint64_t nblocks;  /* atomic once serving: an RBD image may grow or
	                      shrink (lun_nblocks()) */
	unsigned cap_gen;  /* atomic: bumped when the capacity changed, for
	                      CAPACITY DATA HAS CHANGED */
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
 * suffix), "file:PATH" (an existing regular file or block device) or
 * "rbd:POOL/IMAGE" (built with librbd),
 * either followed by ",ro" for a write-protected LUN. The size must be a
 * non-zero multiple of `bs`, the logical block size. A file we may only
 * read is served write protected and sets *forced_ro. On error returns
 * -errno with a message for the user in `why`.
 */
int lun_open_ex(const char *spec, int id, uint32_t bs, struct lun **out,
		bool *forced_ro, char *why, size_t whylen);
/** lun_open_ex() without the message. */
int lun_open(const char *spec, int id, uint32_t bs, struct lun **out);
/** The LUN's capacity in blocks now (another thread may change it). */
static inline uint64_t lun_nblocks(const struct lun *l)
{
	return __atomic_load_n(&l->nblocks, __ATOMIC_ACQUIRE);
}
/** A backend's new size (any thread): capacity and generation. */
void lun_resized(struct lun *l, uint64_t size);
/** Is the LUN write protected (",ro", read-only file, or SWP)? */
static inline bool lun_write_protected(const struct lun *l)
{
	return l->ro || l->swp;
}
/** Register RAM LUN memory with libidm (zero copy Put/Get_Data). */
int lun_attach_ctx(struct lun *l, idm_ctx *ctx);
void lun_close(struct lun *l);

/**
 * Start an asynchronous call (io->op, buf, off, len, done, arg, cq set by
 * the caller, who has checked the range). io->done(io) runs on the
 * calling thread, possibly before lun_submit() returns; io->result is 0
 * or -errno.
 */
void lun_submit(struct lun *l, struct lun_io *io);
/** A backend's end of an io, on the submitting thread. */
void lun_io_complete(struct lun_io *io);
/** Whether calls on the LUN are still in flight (LUN retirement). */
bool lun_busy(const struct lun *l);

/* Synchronous byte-range I/O; the caller has checked the range. 0 or
 * -errno. An RBD LUN waits for the cluster here. */
int lun_read(struct lun *l, void *dst, uint64_t off, size_t len);
int lun_write(struct lun *l, const void *src, uint64_t off, size_t len);

/* lun_local.c: the RAM and file kinds */
extern const struct lun_ops lun_ram_ops, lun_file_ops;
int lun_local_open_ram(struct lun *l, const char *size, const char *spec,
		       char *why, size_t whylen);
int lun_local_open_file(struct lun *l, const char *path, bool *forced_ro,
			char *why, size_t whylen);
/* lun_rbd.c (built with librbd): "POOL/IMAGE" */
int lun_rbd_open(struct lun *l, const char *name, const char *spec,
		 char *why, size_t whylen);

#endif
