/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench-soak: many sessions to one target for a fixed time, random READs
 * and WRITEs, every READ checked against what the session last wrote, and
 * connections killed under load and logged in again. Driven by bench/soak
 * (which also watches the target's memory and descriptors); see
 * bench/README.md "Soak".
 *
 * It is idm-initiator's session engine (examples/initiator: login, SCSI
 * commands, session recovery) with a different workload on top.
 */
#ifndef BENCH_SOAK_H
#define BENCH_SOAK_H

#include "initiator.h"

#include <stdbool.h>
#include <stdint.h>

/* What the command line sets. */
struct soak_opts {
	int sessions;	     /* (the engine's ini_opts.qd: per session) */
	double duration;     /* seconds of load */
	double kill_every;   /* mean seconds between kills; 0: none */
	double interval;     /* seconds per report line */
	uint32_t max_io;     /* largest I/O in bytes (multiple of blocks) */
	int read_pct;	     /* 0..100 */
	uint64_t seed;	     /* 0: from the clock */
	int max_reported;    /* verify mismatches described on stderr */
};

/* Counters of one report interval, and of the whole run. */
struct soak_counts {
	uint64_t reads, writes;
	uint64_t read_bytes, write_bytes;
	uint64_t verified_blocks; /* blocks a READ checked */
	uint64_t verify_errors;	  /* blocks that were not what was written */
	uint64_t io_errors;	  /* commands that failed for good */
	uint64_t retried;	  /* commands sent again after a kill */
	uint64_t kills_abort, kills_shutdown;
	uint64_t recoveries;	   /* sessions logged in again */
	uint64_t session_failures; /* sessions given up and opened anew */
	uint64_t lat_max_ns;	   /* slowest command, retries included */
};

/* What one command slot is doing: the blocks it owns until it completes,
 * so that no two commands of a session touch the same block at once. */
struct soak_slot {
	uint64_t lba;	 /* absolute */
	uint32_t blocks; /* 0: idle */
	uint32_t gen;	 /* generation a WRITE stamps */
	bool write;
	int epoch; /* the session's recoveries when it was issued */
};

struct soak;

struct soak_sess {
	struct ini_session s;
	struct soak *k;
	int idx;      /* 0-based; the session number in logs is idx + 1 */
	bool open;    /* logged in and issuing */
	int seen_recoveries; /* s.recoveries already counted */
	uint64_t reopen_ns; /* after a failure: when to open it again */
	idm_buf *buf; /* qd * max_io bytes, one part per slot */
	uint64_t rng;
	/* its own LBA region: [base, base + nblocks) */
	uint64_t base, nblocks;
	/* generation each block of the region holds; 0: unknown (never
	 * written by this run, or a write that failed for good) */
	uint32_t *gen;
	uint32_t next_gen;
	/* the first pass writes the whole region in order (soak_main.c):
	 * every block then has a known generation, and the RAM LUN's pages
	 * are all in before the target's memory is watched */
	bool prefilling;
	uint64_t prefill_next; /* next block of the region to write */
	struct soak_slot *slots;   /* by command slot index */
	struct ini_cmd *stalled;   /* waiting for the CmdSN window */
};

struct soak {
	const struct soak_opts *so;
	struct ini_opts io; /* the session engine's options */
	idm_ctx *ctx;
	const char *target;
	struct ini_lun_info li;
	uint64_t run_id; /* in every stamped block: data of another run
			  * never passes for ours */
	uint64_t rng;	 /* kills: which session, which way, when */
	double seconds;	 /* of load, measured */
	struct soak_sess *ss;
	int n;
	bool running;
	int reported; /* mismatches described so far */
	struct soak_counts now, total;
};

/* soak_pattern.c: the contents a block holds after a WRITE */
void soak_stamp(void *block, uint32_t block_size, uint64_t run_id,
		uint64_t lba, uint32_t gen, int sess);
/* 0 when `block` is what soak_stamp wrote; else what it seems to be:
 * *found_lba and *found_gen from its header (UINT64_MAX / 0 when the
 * header is not ours), and *first_bad the first differing byte. */
int soak_check(const void *block, uint32_t block_size, uint64_t run_id,
	       uint64_t lba, uint32_t gen, int sess, uint64_t *found_lba,
	       uint32_t *found_gen, uint32_t *first_bad);

/* soak_io.c: the workload */
uint64_t soak_rand(uint64_t *st);
/* Issue the slot's next command: 0, 1 when there is none (the prefill
 * is done), or -errno. */
int soak_issue(struct soak_sess *ss, struct ini_cmd *c);
/* Issue from every free slot of a session that is open. */
int soak_start_slots(struct soak_sess *ss);
/* Send what waited for the CmdSN window. */
void soak_retry_stalled(struct soak_sess *ss);
/* Give every slot back after the session failed or is closing. */
void soak_drop_stalled(struct soak_sess *ss);
void soak_count_max(uint64_t *max, uint64_t v);

/* soak_kill.c: end a session's connection without a Logout */
enum soak_kill_how { SOAK_KILL_ABORT, SOAK_KILL_SHUTDOWN };
enum soak_kill_how soak_kill(struct soak_sess *ss, bool try_shutdown);

#endif
