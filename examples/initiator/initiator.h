/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm-initiator: an iSCSI initiator built on libidm's public API.
 * libidm moves PDUs and data; everything here is the session logic that
 * RFC 5047 leaves to the caller: login, CmdSN/StatSN, SCSI commands.
 *
 * One thread drives every session through idm_ctx_progress(); nothing in
 * here blocks except the wait loops in session.c, which run progress.
 */
#ifndef IDM_INITIATOR_H
#define IDM_INITIATOR_H

#include <libidm/idm.h>
#include <libidm/iscsi.h>

#include "ex_params.h"
#include "ex_url.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define INI_MAX_NAME 224	 /* iSCSI names are at most 223 bytes */
#define INI_TEXT_MAX (64 * 1024) /* most login/text data we accept */
#define INI_CTL_BUF  65536	 /* INQUIRY / REPORT LUNS / READ CAP buffer */
#define INI_VERIFY_IO_MAX 16	 /* sizes in one --verify-io list */
/* Default receive limits. Ours: 256 KiB. What we offer an iSER target:
 * 8 KiB, because LIO's ib_isert answers TargetRecvDataSegmentLength with
 * any offer but receives at most 8 KiB of data per Send
 * (ISER_RECV_DATA_SEG_LEN) and drops the connection on more. */
#define INI_DSL_DEFAULT	      262144
#define INI_ISER_TRDSL_DEFAULT 8192

/* ITT bit 31: set on our control requests (session.c), clear on SCSI
 * commands (scsi.c), so a response names which kind it answers. */
#define INI_ITT_CONTROL 0x80000000u

/* ------------------------------------------------------------------ */
/* Command line                                                        */
/* ------------------------------------------------------------------ */

/* A tri-state for keys the user may force: default, no, yes. */
enum ini_tri { INI_DEFAULT = -1, INI_NO = 0, INI_YES = 1 };

struct ini_opts {
	struct ex_url portal; /* target "" : discover; lun -1 : first */
	const char *provider; /* --provider; NULL: the one serving the URL's scheme */
	const char *initiator_name;
	int log_level;
	int timeout_s; /* login/command timeout */
	/* liveness and recovery, named after open-iscsi's node settings */
	int noop_interval_s;	   /* NOP-Out ping after this idle; 0: off */
	int noop_timeout_s;	   /* ... answered within this, or dead */
	int replacement_timeout_s; /* reconnect for this long; 0: no */

	/* CHAP (login.c): what we give (discovery sessions: disc_* if
	 * set), what the target must answer (mutual), the algorithms we
	 * offer in order; secrets from --credentials FILE */
	const char *credentials;
	const char *chap_user, *chap_secret;
	const char *mutual_user, *mutual_secret;
	const char *disc_user, *disc_secret;
	int chap_algs[4];
	int nchap_algs;

	/* data-path keys the user may force */
	int immediate_data; /* enum ini_tri */
	int initial_r2t;
	int header_digest; /* INI_YES: CRC32C only, NO: None only */
	int data_digest;
	uint32_t first_burst;
	uint32_t max_burst;
	uint32_t max_recv_dsl; /* 0: default (ini_opts_local_dsl) */
	uint32_t max_outstanding_r2t;
	/* iSER only (RFC 7145 section 6); 0 / INI_DEFAULT: not given */
	uint32_t initiator_rdsl; /* InitiatorRecvDataSegmentLength */
	uint32_t target_rdsl;	 /* TargetRecvDataSegmentLength */
	int tagged_solicited;	 /* TaggedBufferForSolicitedDataOnly */
	int iser_hello;		 /* iSERHelloRequired */

	/* what to do */
	bool no_discovery;    /* skip the SendTargets session */
	bool quiet;	      /* skip the target/LUN listing */
	uint64_t verify_size; /* bytes to write and read back; 0: none */
	uint32_t verify_io;   /* largest I/O size of the verify pass */
	uint32_t verify_ios[INI_VERIFY_IO_MAX]; /* I/O sizes, used in turn */
	int nverify_io;
	uint64_t seed;	      /* pattern seed; 0: from the clock */
	uint8_t isid[6];      /* --isid: the first session's ISID ... */
	bool isid_set;	      /* ... given (else random per session) */
	bool use16;	      /* READ/WRITE(16) even for small LBAs */

	bool bench;
	uint32_t bs;	 /* bytes per I/O */
	uint32_t qd;	 /* queue depth per session */
	int read_pct;	 /* 0..100 */
	double duration; /* seconds */
	int sessions;
	bool seq;      /* sequential instead of random LBAs */
	uint64_t span; /* bytes of the LUN the bench touches */
	bool json;
};

int ini_opts_parse(struct ini_opts *o, int argc, char **argv);
/* The receive limits we offer: MaxRecvDataSegmentLength on TCP (and in
 * discovery), InitiatorRecvDataSegmentLength on iSER; and the
 * TargetRecvDataSegmentLength we offer on iSER. */
uint32_t ini_opts_local_dsl(const struct ini_opts *o, bool iser);
uint32_t ini_opts_target_dsl(const struct ini_opts *o);
/* Read o->credentials (after logging is set up). 0, or -1 (said why). */
int ini_credentials_load(struct ini_opts *o);
void ini_usage(FILE *f, const char *prog);

/* ------------------------------------------------------------------ */
/* Sessions                                                            */
/* ------------------------------------------------------------------ */


/* A key we offered during login, and whether the target answered it. */
struct ini_offer {
	char key[64];
	char val[96];
	bool answered;
};

enum ini_state {
	INI_S_CONNECTING = 0,
	INI_S_LOGIN,
	INI_S_FFP,
	INI_S_RECOVERING, /* connection lost, reconnecting (recovery.c) */
	INI_S_LOGGED_OUT,
	INI_S_FAILED,
};

struct ini_session;
struct ini_cmd;
typedef void (*ini_cmd_done_fn)(struct ini_cmd *cmd);

/* One SCSI command slot; a session has a fixed array of them. */
struct ini_cmd {
	struct ini_session *s;
	idm_task *task;
	uint32_t itt;
	uint16_t idx;
	bool busy;
	bool submitted; /* sent, no completion yet */
	bool retry;	/* lost with its connection: resubmit on recovery */
	bool done;
	/* request */
	uint8_t cdb[16];
	uint64_t lun;
	enum idm_data_dir dir; /* 0: no data */
	idm_buf *buf;
	size_t buf_off;
	uint32_t len;
	/* result */
	int result; /* 0, or -errno when the command failed */
	uint8_t response, status, rsp_flags;
	uint32_t residual;
	uint8_t sense[32];
	uint32_t sense_len;
	uint32_t data_received;
	/* completion */
	ini_cmd_done_fn done_fn;
	void *arg;
	uint64_t t_start_ns; /* first submission: latency */
	uint64_t t_sent_ns;  /* this submission: the command timeout */
	struct ini_cmd *next_free;
};

/* One outstanding non-SCSI request (login, text, logout, NOP-Out ping). */
struct ini_ctl {
	uint32_t itt;	/* IDM_ISCSI_RESERVED_TAG: none */
	uint8_t expect; /* response opcode */
	bool done;
	int result;
	uint8_t rsp[IDM_BHS_LEN];
};

struct ini_session {
	const struct ini_opts *o;
	idm_ctx *ctx;
	idm_conn *conn;
	enum ini_state state;
	int fail;	/* -errno once failed */
	bool conn_gone; /* Connection_Terminate_Notify seen */
	char why[640];
	bool discovery;
	char target[INI_MAX_NAME];
	int index; /* for logs: session number */

	/* identity */
	uint8_t isid[6];
	uint16_t tsih;
	uint16_t cid;
	uint32_t itt_next; /* non-SCSI ITTs */

	/* sequencing (RFC 7143 section 4.2.2) */
	uint32_t cmdsn, exp_cmdsn, max_cmdsn;
	uint32_t exp_statsn;

	/* login */
	int login_csg; /* current stage */
	int login_nsg; /* stage we asked for */
	bool login_done;
	bool login_have_statsn; /* a Login Response gave us StatSN */
	int login_rounds;
	/* CHAP: 0 none, 1 CHAP_A sent, 2 response sent, 3 done */
	int chap_state;
	int chap_alg;
	uint8_t chap_id;                     /* ours, for mutual CHAP */
	uint8_t chap_chal[32];               /* ours, digest length */
	struct ini_offer offers[24]; /* what we offered in this stage */
	int noffers;
	char answers[1024]; /* answers to target offers, to send next */
	size_t answers_len;
	struct ex_params params;

	/* text accumulated over C=1 PDUs (login and text responses) */
	char *text;
	size_t text_len;
	bool text_overflow;

	struct ini_ctl ctl;

	/* SCSI command slots */
	struct ini_cmd *cmds;
	uint32_t ncmds;
	uint32_t itt_gen;
	struct ini_cmd *free_cmds;
	uint32_t inflight;

	/* a small registered buffer for control commands */
	idm_buf *ctl_buf;

	/* liveness and recovery (recovery.c) */
	uint64_t last_rx_ns;   /* any PDU from the target */
	uint32_t ping_itt;     /* our NOP-Out ping; IDM_ISCSI_RESERVED_TAG: none */
	uint64_t ping_sent_ns;
	uint64_t last_scan_ns; /* command timeouts are checked every 100 ms */
	uint64_t lost_ns;      /* when the connection was declared lost */
	bool in_poll;	       /* ini_session_poll is not reentrant */
	bool reconnecting;     /* inside a recovery attempt */
	int attempt_timeout_s; /* connect/login bound of an attempt; 0: -t */
	bool logout_sent;
	int recoveries;
	uint32_t nretry;       /* commands waiting for resubmission */
	char async_why[160];   /* what an Asynchronous Message announced */
};

/* main.c: set by SIGINT/SIGTERM; loops stop, the benchmark reports */
#include <signal.h>
extern volatile sig_atomic_t ini_interrupted;

/* session.c */
int ini_session_init(struct ini_session *s, const struct ini_opts *o,
		     idm_ctx *ctx, int index, uint32_t ncmds);
void ini_session_fini(struct ini_session *s);
int ini_session_connect(struct ini_session *s);
int ini_session_login(struct ini_session *s, bool discovery,
		      const char *target);
int ini_session_logout(struct ini_session *s);
int ini_session_send_targets(struct ini_session *s, char **text, size_t *len);
void ini_session_set_failed(struct ini_session *s, int err, const char *fmt,
			    ...) __attribute__((format(printf, 3, 4)));
/* The first fatal failure of any session, for the program's last line. */
extern char ini_fail_cause[640];
/* Run progress until *flag is true, the session fails, or timeout_ms. */
int ini_session_wait(struct ini_session *s, const bool *flag, int timeout_ms);
/* Run one SCSI command to its end: 0, or -errno (c->result). */
int ini_scsi_sync(struct ini_session *s, struct ini_cmd *c);
uint32_t ini_session_next_itt(struct ini_session *s);
void ini_session_update_sn(struct ini_session *s, const uint8_t *bhs,
			   bool has_statsn);
int ini_send_pdu(struct ini_session *s, const uint8_t *bhs, const void *data,
		 size_t len, idm_task *task);
int ini_text_append(struct ini_session *s, const uint8_t *data, size_t len);
uint64_t ini_now_ns(void);

/* recovery.c: NOP-Out pings, command timeouts, session recovery */
/* A transport failure: start recovery when allowed, else fail. */
void ini_session_conn_lost(struct ini_session *s, int err, const char *fmt,
			   ...) __attribute__((format(printf, 3, 4)));
/* Liveness checks and, when the connection was lost, recovery (blocks
 * until reconnected or given up). Call often, never from a callback. */
void ini_session_poll(struct ini_session *s);
bool ini_on_ping_rsp(struct ini_session *s, const uint8_t *bhs);

/* requests.c: target PDUs other than login and SCSI, from on_control */
void ini_on_nop_in(struct ini_session *s, const uint8_t *bhs,
		   const uint8_t *data, size_t len);
void ini_on_text_rsp(struct ini_session *s, const uint8_t *bhs,
		     const uint8_t *data, size_t len);
void ini_on_logout_rsp(struct ini_session *s, const uint8_t *bhs);
void ini_on_async(struct ini_session *s, const uint8_t *bhs);
void ini_on_reject(struct ini_session *s, const uint8_t *bhs,
		   const uint8_t *data, size_t len);

/* login.c */
int ini_login_start(struct ini_session *s);
void ini_login_rsp(struct ini_session *s, const uint8_t *bhs,
		   const uint8_t *data, size_t len);

/* scsi.c */
/* SCSI operation codes this initiator issues (SPC-4, SBC-3) */
enum ini_scsi_op {
	INI_OP_TEST_UNIT_READY = 0x00,
	INI_OP_INQUIRY = 0x12,
	INI_OP_READ10 = 0x28,
	INI_OP_WRITE10 = 0x2a,
	INI_OP_READ16 = 0x88,
	INI_OP_WRITE16 = 0x8a,
	INI_OP_SERVICE_ACTION_IN16 = 0x9e, /* READ CAPACITY(16) */
	INI_OP_REPORT_LUNS = 0xa0,
};
#define INI_STATUS_CHECK_CONDITION 0x02
#define INI_SENSE_UNIT_ATTENTION   0x6
/* The sense key of a CHECK CONDITION's sense data (fixed or descriptor
 * format, SPC-4 4.5); -1 when the sense data is in neither. */
int ini_cmd_sense_key(const struct ini_cmd *c);
const char *ini_cdb_name(uint8_t op);
struct ini_cmd *ini_cmd_get(struct ini_session *s);
void ini_cmd_put(struct ini_cmd *c);
bool ini_cmd_window_open(const struct ini_session *s);
int ini_cmd_submit(struct ini_cmd *c);
void ini_scsi_rsp(struct ini_session *s, idm_pdu *pdu, const uint8_t *bhs);
void ini_cmd_fail_all(struct ini_session *s, int err);
/* A Reject named the SCSI Command of itt: fail that command alone.
 * false when itt names no command in flight. */
bool ini_scsi_rejected(struct ini_session *s, uint32_t itt);
void ini_cdb_rw(struct ini_cmd *c, bool write, uint64_t lba, uint32_t blocks,
		bool use16);
/* The LBA of a READ or WRITE CDB built by ini_cdb_rw. */
uint64_t ini_cdb_lba(const struct ini_cmd *c);
void ini_cdb_inquiry(struct ini_cmd *c, uint16_t alloc);
void ini_cdb_report_luns(struct ini_cmd *c, uint32_t alloc);
void ini_cdb_read_capacity16(struct ini_cmd *c, uint32_t alloc);
void ini_cdb_test_unit_ready(struct ini_cmd *c);
const char *ini_cmd_strerror(const struct ini_cmd *c, char *buf, size_t len);
uint64_t ini_lun_encode(int lun);

/* info.c: discovery listing, REPORT LUNS, INQUIRY, READ CAPACITY */
struct ini_lun_info {
	int lun;
	uint64_t blocks;
	uint32_t block_size;
};
int ini_discover(const struct ini_opts *o, idm_ctx *ctx, char *target,
		 size_t target_len);
int ini_probe_lun(struct ini_session *s, int *lun, struct ini_lun_info *li);
int ini_clear_ua(struct ini_session *s, int lun);

/* verify.c */
int ini_verify(struct ini_session *s, const struct ini_lun_info *li);

/* stats.c: latency histogram and the result tables */
#define INI_HIST_SUB	 32 /* buckets per power of two: about 3% resolution */
#define INI_HIST_BUCKETS (64 * INI_HIST_SUB)
struct ini_hist {
	uint64_t count, sum_ns, min_ns, max_ns;
	uint64_t b[INI_HIST_BUCKETS];
};
void ini_hist_init(struct ini_hist *h);
void ini_hist_add(struct ini_hist *h, uint64_t ns);
uint64_t ini_hist_pct(const struct ini_hist *h, double pct);

struct ini_bench_result {
	const char *provider;
	const char *target;
	int lun;
	int sessions;
	uint32_t qd, bs;
	int read_pct;
	bool seq;
	double seconds;
	uint64_t ios, reads, writes, bytes, errors;
	double bw_peak;		/* bytes/s over the best 100 ms window */
	struct ini_hist lat;	/* every command */
	struct ini_hist lat_rd; /* reads only, and writes only: shown */
	struct ini_hist lat_wr; /* separately when the run mixes them */
	/* every session's idm_conn_get_stats() at the end of the run */
	struct idm_conn_stats *conn_stats;
	int n_conn_stats;
};
void ini_report_table(const struct ini_bench_result *r);
void ini_report_json(const struct ini_bench_result *r);

/* bench.c */
int ini_bench(const struct ini_opts *o, idm_ctx *ctx, const char *target,
	      const struct ini_lun_info *li);

#endif
