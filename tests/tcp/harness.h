/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Test harness for the TCP loopback tests: a minimal iSCSI initiator and
 * target built on the public libidm API only, in one process, over
 * 127.0.0.1, driven by idm_ctx_progress() with deadlines.
 *
 * The target serves a RAM "disk" split in slots; each slot is surrounded
 * by guard bytes so a provider writing outside the range it was given is
 * caught. The initiator's buffers carry guard bytes the same way.
 *
 * The SCSI layer is deliberately tiny: CDB byte 0 is 0x28 (read) or 0x2a
 * (write) and CDB bytes 2..9 carry the byte offset into the disk; the
 * transfer length is the Expected Data Transfer Length.
 *
 * raw_peer.h: a raw iSCSI peer on a plain socket, to play an evil
 * initiator or target against one side of this harness.
 */
#ifndef TESTS_TCP_HARNESS_H
#define TESTS_TCP_HARNESS_H

#include <libidm/idm.h>
#include <libidm/iscsi.h>

#include <check.h>
#include "check_suite.h"
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define H_GUARD 256          /* guard bytes before and after each range */
#define H_GUARD_BYTE 0xa5
#define H_MAX_SLOTS 16       /* commands in flight at once */
#define H_MAX_TTASKS 64      /* target tasks tracked at once */

#define H_CDB_READ 0x28
#define H_CDB_WRITE 0x2a
#define H_TARGET_NAME "iqn.2026-11.test.libidm:target"
#define H_INITIATOR_NAME "iqn.2026-11.test.libidm:initiator"

/* The operational keys of one login, as both sides end up with them. */
struct h_params {
	bool immediate_data;
	bool initial_r2t;
	uint32_t first_burst;
	uint32_t max_burst;
	uint32_t ini_mrdsl; /* MaxRecvDataSegmentLength the initiator declares */
	uint32_t tgt_mrdsl; /* ... and the target */
	uint32_t max_r2t;
	uint32_t erl;        /* ErrorRecoveryLevel */
	bool header_digest;
	bool data_digest;
};

void h_params_default(struct h_params *p);
/* One-line description for the test log. */
const char *h_params_str(const struct h_params *p, char *buf, size_t len);

/* What one side saw of a connection. */
struct h_side {
	idm_conn *conn;
	int terminate_count;       /* connection_terminate_notify calls */
	int terminate_reason;
	char error[256];           /* idm_conn_error() copied at notify time */
	bool terminated_by_us;     /* idm_connection_terminate() called */
	int cb_after_terminate;    /* callbacks after termination (a bug) */
	int control_count;
	int completion_count;
	int completion_errors;
	int unexpected;            /* events the harness did not expect */
	char why[256];             /* ... and the first one of them */
	bool ffp;                  /* Enable_Datamover done */
	uint32_t last_opcode;      /* last control_notify opcode */
	int ack_count;             /* data_ack_notify calls (target) */
	uint32_t ack_datasn;       /* ... and the last DataSN reported */
	size_t ahs_len;            /* AHS of the last NOP-Out (target) */
	int nop_in_count;          /* NOP-Ins received (initiator) */
	size_t nop_in_len;         /* ... data bytes of the last one */
	uint32_t nop_in_sum;       /* ... and their checksum (h_sum32) */
	uint8_t ahs[64];
	int rejects;               /* Rejects the target sent (doc/api.md 7.1) */
	uint8_t reject_reason;     /* ... and the reason of the last one */
};

/* Target-side state of one SCSI command. */
struct h_ttask {
	bool used;
	idm_task *task;
	bool write;
	uint32_t itt;
	uint32_t len;
	uint64_t off;
	int pending;      /* data_completion_notify still expected */
	bool status_in_data;
	int status;       /* first failed completion status */
	uint32_t split_at;   /* split Get_Data: start of the second range */
	uint8_t r2t[48];     /* ... and its R2T template */
};

struct h_sgmap;

/* Initiator-side command slot, reused across commands. */
struct h_slot {
	uint8_t *mem;     /* H_GUARD + cap + H_GUARD bytes */
	idm_buf *buf;
	struct h_sgmap *sg; /* buf's segments (h_sg_enable), else NULL */
	uint32_t cap;
	/* current command */
	bool busy;
	bool done;
	bool write;
	uint32_t len;
	uint32_t itt;
	uint32_t seed;
	idm_task *task;
	uint8_t scsi_status;
	uint8_t response;
	uint32_t received;
	bool via_datain;  /* status came in the last Data-In */
};

/* Target behaviour knobs. */
enum h_status_mode {
	H_STATUS_ALTERNATE = 0, /* every other read: status in last Data-In */
	H_STATUS_SEPARATE,      /* always a SCSI Response */
	H_STATUS_IN_DATA,       /* always status in the last Data-In */
};

struct h;
/* Optional hook: the target got a SCSI Command; return true if the hook
 * handled it (the harness then does nothing). */
typedef bool (*h_cmd_hook)(struct h *h, idm_task *task, const uint8_t *bhs);

struct h {
	idm_ctx *ctx;
	struct h_params p;          /* what the initiator offers / target serves */
	struct h_params tneg;       /* what the target negotiated */
	struct h_params ineg;       /* what the initiator negotiated */
	char err[512];              /* why the last harness call failed */
	int fds_at_init;
	bool threaded;              /* libidm's progress thread runs */
	pthread_mutex_t mu;         /* callbacks vs test thread, if threaded */

	/* target */
	idm_portal *portal;
	int port;
	struct h_side t;
	uint32_t t_statsn;
	uint32_t t_expcmdsn;
	uint32_t t_ini_mrdsl;       /* what the initiator declared at login */
	uint8_t *disk;              /* slots of slot_cap, with guards */
	size_t disk_len;
	idm_buf *disk_buf;
	size_t disk_base;           /* the disk's offset in disk_buf */
	bool disk_borrowed;         /* disk_buf is another harness's */
	struct h_sgmap *disk_sg;    /* disk_buf's segments (h_sg_enable) */
	uint32_t slot_cap;
	size_t n_disk_slots;
	enum h_status_mode status_mode;
	bool split_put;             /* Put_Data in two calls */
	bool split_get;             /* Get_Data in two calls, the second from
				       the first one's completion */
	unsigned t_cmds;
	struct h_ttask tt[H_MAX_TTASKS];
	bool use_poll;              /* h_run_io sleeps in poll(idm_ctx_get_fd) */
	bool free_on_terminate;     /* free the disk / initiator buffers from
				       connection_terminate_notify */
	bool destroy_in_notify;     /* idm_conn_destroy() from that notify */
	bool terminate_on_nop;      /* target: Connection_Terminate from the
				       control_notify of a NOP-Out */
	bool destroy_on_nop;        /* target: idm_conn_destroy() from the
				       control_notify of a NOP-Out */
	h_cmd_hook cmd_hook;
	/* called after the harness's Get_Data from a SCSI Command's
	 * control_notify succeeded (return value ignored) */
	h_cmd_hook after_get_hook;
	/* called first in every target data_completion_notify (e.g. to
	 * check what the provider logged before it) */
	void (*completion_hook)(struct h *h, idm_task *task,
				enum idm_data_dir dir);
	/* a WRITE's Get_Data is not asked for from its control_notify but by
	 * h_tgt_get_later() (its data waits in libidm's staging copy) */
	bool get_later;
	struct h_ttask *later;
	void *hook_arg;
	idm_pdu *cmd_pdu;           /* the SCSI Command, during the hooks */

	/* initiator */
	struct h_side i;
	bool connected;
	int connect_status;
	bool login_failed;
	uint32_t cmdsn;
	uint32_t exp_statsn;
	uint32_t next_itt;
	struct h_slot slots[H_MAX_SLOTS];
	size_t n_slots;
	uint32_t rnd;
};

/* Create the context, the target portal on 127.0.0.1:0, the disk with
 * n_slots slots of slot_cap bytes, and n_slots initiator slots. */
int h_init(struct h *h, uint32_t slot_cap, size_t n_slots);
/* The same, with the context in domain dom (NULL: a domain of its own). */
int h_init_in(struct h *h, uint32_t slot_cap, size_t n_slots, idm_domain *dom);
/* Serve h's disk from slots first_slot... of owner's disk buffer (made
 * through owner's context) instead of a buffer of its own: one buffer
 * used by the connections of two harnesses. Same slot_cap; h_fini h
 * before owner. 0 or -EINVAL. */
int h_disk_share(struct h *h, struct h *owner, size_t first_slot);
/* Destroy everything (connections first), then assert (Check) that no
 * file descriptor opened since h_init is left. Close raw peers first. */
void h_fini(struct h *h);

/* Start connecting the initiator to 127.0.0.1:port; it sends its Login
 * Request (keys of *p) once connected and enters full feature phase on a
 * good final Login Response. */
int h_connect_start(struct h *h, const struct h_params *p, int port,
		    int timeout_ms);
/* Connect the initiator, log in with *p, wait for full feature phase on
 * both sides. */
int h_connect_login(struct h *h, const struct h_params *p, int timeout_ms);

/* Wait until the login h_connect_start() (or an adopted initiator) began
 * ends in full feature phase on both sides; 0 or <0 with h->err set. */
int h_login_wait(struct h *h, int timeout_ms);

/* Sockets the test set up itself (harness_adopt.c), adopted with
 * idm_conn_adopt_fd(): the target side, in the login phase (the harness
 * target logs the initiator in) ... */
int h_adopt_target(struct h *h, int fd);
/* ... the initiator side, which then sends its Login Request with *p ... */
int h_adopt_initiator(struct h *h, const struct h_params *p, int fd);
/* ... and either side after a login done on the raw socket, with
 * idm_conn_adopt_fd_ffp() and the keys of h->tneg (both sides then use
 * them). The caller sets the sequence numbers of that side. */
int h_adopt_ffp(struct h *h, enum idm_role role, int fd);

/* One I/O of the workload. */
struct h_io {
	bool write;
	uint32_t len;
};

/* Run the ios with up to qd in flight; verify every byte and every guard.
 * Returns 0 or -1 with h->err set. */
/* Both sides' idm_conn_get_stats(); what they counted between a snapshot
 * and now mirrors each other (h_run_io() checks it when every command is
 * answered). 0, or -1 with h->err. */
struct h_stats {
	struct idm_conn_stats i, t;
};
int h_stats_snapshot(struct h *h, struct h_stats *st);
int h_check_stats(struct h *h, const struct h_stats *before);
int h_run_io(struct h *h, const struct h_io *ios, size_t n, unsigned qd,
	     int timeout_ms);
/* Check's assertions after an h_run_io() that returned rc: it succeeded,
 * neither side was terminated or called back after termination, and
 * neither saw anything unexpected. */
void h_assert_io_clean(struct h *h, int rc);

/* Scatter-gather (harness_sg.c): after h_init, make the disk and every
 * initiator buffer idm_buf_create_iov() buffers of segments of
 * sizes[0], sizes[1], ... (cycling), scattered in memory with guarded
 * gaps; h_run_io then moves data through them and checks it as before.
 * 0 or <0 with h->err. */
int h_sg_enable(struct h *h, const uint32_t *sizes, size_t nsizes);
/* Segments of the disk buffer (0 without h_sg_enable). */
int h_sg_segments(const struct h *h);
/* internal: copy slot s's bytes view -> segments (or back), check the
 * guards and gaps, free the maps */
void h_sg_sync(struct h *h, size_t s, bool to_segments);
int h_sg_check_guards(struct h *h);
void h_sg_free(struct h *h);

/* The Get_Data of the WRITE held back by h->get_later, now, outside
 * any callback: 0 or idm_get_data()'s error (-ENOENT: none held). */
int h_tgt_get_later(struct h *h);

/* Start libidm's progress thread: callbacks then run on it, serialised
 * with the test's thread by h->mu; h_run_io, h_progress_until and
 * h_progress_for sleep instead of calling idm_ctx_progress(). Not for
 * the raw-peer helpers. */
int h_start_thread(struct h *h);

/* Progress until cond(h) holds or the timeout passes; 0 or -ETIMEDOUT. */
int h_progress_until(struct h *h, bool (*cond)(struct h *h), int timeout_ms);
/* A simple checksum of a buffer (NOP ping data). */
uint32_t h_sum32(const uint8_t *b, size_t n);
/* Progress for ms milliseconds. */
void h_progress_for(struct h *h, int ms);

/* Check the guards of every disk slot and every initiator slot.
 * Returns 0 or -1 with h->err set. */
int h_check_guards(struct h *h);
/* Slot i of the disk and its byte offset in the disk buffer. */
uint8_t *h_disk_slot(struct h *h, size_t i);
size_t h_disk_slot_off(struct h *h, size_t i);
/* Fill [0, cap) of a disk slot with the guard byte. */
void h_disk_slot_clear(struct h *h, size_t i);

/* Initiator: start one command in slot s (buffers prepared by caller
 * through h_slot_prepare). */
void h_slot_prepare(struct h *h, size_t s, bool write, uint32_t len);
int h_slot_start(struct h *h, size_t s, uint64_t disk_off);

/* Initiator control_notify of a SCSI Response or Data-In with status. */
void h_io_response(struct h *h, idm_pdu *pdu);

/* Fill / check a deterministic pseudo-random pattern. */
void h_pattern(uint8_t *p, size_t len, uint32_t seed);
long h_pattern_check(const uint8_t *p, size_t len, uint32_t seed);

/* Build the BHS of a SCSI command the way the harness initiator does. */
/* Build an immediate NOP-Out ping (F, TTT reserved) with ITT and CmdSN,
 * every other field 0. */
void h_build_nop_out(uint8_t bhs[48], uint32_t itt, uint32_t cmdsn);
void h_build_scsi_cmd(uint8_t bhs[48], bool write, uint32_t itt,
		      uint32_t cmdsn, uint32_t expstatsn, uint32_t len,
		      uint64_t disk_off, bool final);

/* iSCSI text: append "key=value\0" at *pos (bounded by cap); find a key. */
void h_kv_add(char *buf, size_t *pos, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
bool h_kv_get(const void *data, size_t len, const char *key, char *out,
	      size_t outlen);
/* The login keys a side offers or answers, and the Notice_Key_Values text
 * built from the negotiated values. Return the text length. */
size_t h_login_keys(const struct h_params *p, bool initiator, char *buf,
		    size_t cap);
size_t h_notice_keys(const struct h_params *p, char *buf, size_t cap);
/* Parse the peer's login keys into *p (RFC 7143 defaults for missing
 * keys); the declared MaxRecvDataSegmentLength goes to *peer_mrdsl. */
int h_parse_keys(const void *data, size_t len, struct h_params *p,
		 uint32_t *peer_mrdsl);

/* Count an unexpected event on one side, keeping the first reason. */
void h_unexpected(struct h_side *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Common start of each test program: a backstop alarm() so nothing can
 * hang even with CK_FORK=no, and a check that 127.0.0.1 works. Returns
 * false (after saying why) when the test must be skipped (exit 77). */
bool h_main_prologue(const char *prog, unsigned alarm_s);
/* The whole main() of a test program with one test case: the prologue
 * above (77 when it says skip), then suite `suite` holding test case
 * `tcase` of the NULL-terminated `tests` with a `timeout_s` timeout, run
 * as test_suite_run() does (Check's CK_* environment applies). */
int h_main(const char *prog, unsigned alarm_s, const char *suite,
	   const char *tcase, unsigned timeout_s, const TTest *const tests[]);
/* Provider and address under test (IDM_TEST_PROVIDER, IDM_TEST_HOST). */
const char *h_provider(void);
const char *h_host(void);
/* the provider under test needs an RDMA device (its IDM_CAP_RDMA) */
bool h_provider_rdma(void);
/* it carries CRC32C digests (its IDM_CAP_DIGESTS; iSER does not) */
bool h_provider_digests(void);

/* Optional: sees every libidm log line of every harness context first
 * (set before h_init; run on the thread that logs); returns true to keep
 * the line off stderr. Set IDM_LOG_LEVEL for more than warnings. */
extern bool (*h_log_hook)(int level, const char *msg);

/* Log line to stderr, prefixed with the test name. */
void h_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
