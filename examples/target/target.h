/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm-target: the iSCSI session layer of an example target built on
 * libidm. libidm moves PDUs and data; everything iSCSI-session-specific
 * (login, CmdSN, SCSI, task management) lives here.
 *
 * Threading (--threads N, loop.c): N event loops, each a thread with its
 * own idm_ctx, portals, buffer pool, connections and sessions (struct
 * loop, reached through the thread-local g_loop). A connection's and a
 * session's callbacks all run on the loop that owns them, so the I/O path
 * takes no lock. What the loops share: the configuration and LUNs
 * (read-only once they run), the session registry (login time only,
 * session.c), the login budgets (budget.c) and reservations (scsi_pr.c).
 */
#ifndef IDM_TARGET_H
#define IDM_TARGET_H

#include <libidm/idm.h>
#include <libidm/iscsi.h>
#include <stdbool.h>
#include <stdint.h>
#include <errno.h>
#include <time.h>

#include "ex_params.h"
#include "lun.h"
#include "lun_cq.h"
#include "scsi.h"

#define TGT_MAX_LUNS 64
#define TGT_LUN_IDS 16384          /* LUN numbers 0 .. 16383 */
#define TGT_CMD_WINDOW 128         /* MaxCmdSN - ExpCmdSN + 1 */
#define TGT_MAX_IO (16u << 20)     /* largest data transfer of one command */
#define TGT_MRDSL 262144u          /* MaxRecvDataSegmentLength we declare */
#define TGT_TEXT_MAX 65536u        /* largest login/text key buffer */

#define TGT_MAX_CHAP_INITIATORS 64 /* initiator-chap lines */
#define TGT_CHAP_ALGS_DEFAULT "sha3-256,sha256,sha1,md5" /* LIO's order */

struct pbuf;
struct tconn;
struct session;

struct loop;

/* Process-wide configuration and state. */
struct target {
	const char *name;      /* iSCSI target name */
	const char *alias;
	struct lun *luns[TGT_MAX_LUNS];
	int nluns;
	uint64_t caps;         /* union of the providers' IDM_CAP_* */
	const char *chap_user;   /* --chap USER:SECRET: CHAP required */
	const char *chap_secret;
	/* the rest of CHAP (credentials.c; login.c): initiator-chap
	 * entries, the credentials the target answers mutual CHAP with,
	 * those of discovery sessions, the algorithms in preference order
	 * (none given: TGT_CHAP_ALGS_DEFAULT) */
	struct tgt_chap_cred {
		const char *iname, *user, *secret;
	} chap_initiators[TGT_MAX_CHAP_INITIATORS];
	int nchap_initiators;
	const char *mutual_user, *mutual_secret;
	const char *disc_user, *disc_secret;
	int chap_algs[4];
	int nchap_algs;
	bool allow_all;          /* allow-all: any address may log in (access.c) */
	/* --shared-recv: iSER receive buffers shared per device, which take
	 * data segments of at most IDM_SHARED_RECV_DSL (login.c) */
	bool shared_recv;
	const char *key_overrides[32]; /* --key Name=Value: our login offers */
	int nkey_overrides;
};

extern struct target g_tgt;

/* Every login authenticates: some CHAP credentials were given. */
static inline bool tgt_chap_required(void)
{
	return g_tgt.chap_user || g_tgt.nchap_initiators;
}

/* pool.c's free lists, one set per loop */
#define POOL_CLS_MIN 12 /* 4 KiB */
#define POOL_CLS_MAX 25 /* 32 MiB: TGT_MAX_IO plus room for drained data */
#define POOL_NCLS (POOL_CLS_MAX - POOL_CLS_MIN + 1)

struct handoff;

/* One event loop: a thread, its context and everything that lives on it. */
struct loop {
	int index;                 /* 0 .. nloops - 1, in stats and logs */
	idm_ctx *ctx;
	struct session *sessions;  /* the sessions this loop owns */
	struct tconn *conns;       /* every connection, for the reaper */
	struct tconn *lhead, *ltail; /* in login, oldest first (budget.c) */
	/* pool.c */
	struct pbuf *free_bufs[POOL_NCLS];
	struct pbuf *all_bufs;
	struct ttask *free_tasks;
	struct ttask *all_tasks_chunks;
	/* connections handed to this loop by another (login.c, loop.c) */
	struct handoff *inbox;     /* under inbox_lock */
	int inbox_pending;         /* atomic: inbox is not empty */
	struct handoff *outbox;    /* this loop's, moved after its pass */
	/* LUN calls completed on other threads (RBD), drained after each
	 * progress pass (loop_tick) */
	struct lun_cq cq;
	bool cq_ready;
};

extern _Thread_local struct loop *g_loop;


enum task_kind { TK_SCSI, TK_NOP, TK_TEXT, TK_LOGOUT, TK_TMF };

enum task_state {
	TS_QUEUED,   /* waiting for its CmdSN */
	TS_DATAOUT,  /* Get_Data outstanding */
	TS_DATAIN,   /* Put_Data outstanding */
	TS_BACKEND,  /* waiting for its LUN (scsi_exec pending): neither an
	                abort nor the connection's end may free it, its
	                completion does (scsi_io.c) */
	TS_DONE,
};

/* One received command (or other CmdSN-ordered request). */
struct ttask {
	struct ttask *next;        /* queue or free list */
	struct ttask *cnext;       /* conn's list of active SCSI tasks */
	enum task_kind kind;
	enum task_state state;
	struct tconn *c;
	idm_task *it;              /* TK_SCSI only */
	uint8_t bhs[IDM_ISCSI_BHS_LEN];
	uint8_t *data;             /* copy of a non-SCSI request's data */
	uint32_t data_len;
	uint32_t itt, cmdsn, edtl;
	uint64_t lun_id;
	bool aborted;
	/* SCSI */
	struct scsi_cmd sc;
	struct pbuf *buf;
	uint32_t want_out;         /* Data-Out bytes the command uses */
	bool drain;                /* fetching unsolicited data of a failed command */
};

/* A pending multi-task TMF waiting per Implementer's Guide 4.1.2. */
struct pending_tmf {
	bool active;
	uint8_t bhs[IDM_ISCSI_BHS_LEN];
	struct tconn *c;
	uint32_t cmdsn;
	struct timespec deadline;
};

struct session {
	struct session *next;
	uint8_t isid[6];
	uint16_t tsih;
	bool discovery;
	char iname[224];
	char iport[256];           /* initiator port: "iname,i,0xISID" */
	struct tconn *conn;        /* MaxConnections=1 */
	uint32_t exp_cmdsn;
	struct ttask *queue;       /* out-of-order commands, sorted by CmdSN */
	struct ex_params p;
	struct pending_tmf tmf;
	bool zombie;               /* reinstated: waiting for its conn to go */
	struct loop *loop;         /* owner: every use of the session is there */
	struct session *rnext;     /* in the registry (session.c) */
	/* initiator ACLs (access.c, session.c): the LUNs it sees, decided
	 * at login and again when the rules change */
	bool lun_all;              /* every LUN; else those in lunmask */
	uint64_t lunmask[TGT_LUN_IDS / 64]; /* bit N: LUN N visible */
	unsigned acl_gen;          /* access_generation() it was decided at */
	bool acl_recheck;          /* decide again on the next pass */
	bool logout_asked;         /* lost access: Async Message sent */
	/* the capacity generation of each LUN it used (scsi_io.c), for
	 * CAPACITY DATA HAS CHANGED */
	struct cap_seen {
		const struct lun *l;
		unsigned gen;
	} cap_seen[TGT_MAX_LUNS];
	int ncap_seen;
	struct timespec logout_deadline; /* then closed at this time */
};

enum conn_state { CS_LOGIN, CS_FFP, CS_CLOSING, CS_DEAD };

#define TCONN_ADDR_MAX 64 /* the peer's address, without the port */

struct tconn {
	struct tconn *next;
	idm_conn *ic;
	struct session *sess;      /* NULL during login */
	enum conn_state state;
	bool iser;
	uint32_t statsn;
	uint32_t login_cmdsn;      /* ExpCmdSN to report before a session exists */
	uint16_t cid;
	struct timespec deadline;  /* CS_CLOSING: terminate at this time */
	struct ttask *tasks;       /* active SCSI tasks */
	struct login_state *login; /* during login only */
	/* login budgets (budget.c) */
	char addr[TCONN_ADDR_MAX];
	bool counted;              /* in the connection count */
	bool in_login;             /* in the login counts and list */
	struct timespec login_deadline;
	struct tconn *lnext, *lprev; /* in login, oldest first */
	/* Text request/response continuation (RFC 7143 section 11.10) */
	char *text_in;
	uint32_t text_in_len;
	char *text_out;
	uint32_t text_out_len, text_out_off, text_ttt;
	struct handoff *handoff;   /* on its way to another loop */
};

/* conn.c: the bottom of the session code, calls nothing above it */
int conn_send(struct tconn *c, uint8_t *bhs, const void *data, size_t len);
void conn_close(struct tconn *c, const char *why);
void conn_close_graceful(struct tconn *c, const char *why);
void conn_forget(struct tconn *c);
void conn_fill_sn(struct tconn *c, uint8_t *bhs, bool advance);
uint32_t sess_max_cmdsn(const struct session *s);
void send_reject(struct tconn *c, const uint8_t *bhs, uint8_t reason);
/* End a task: libidm forgets it, its buffer and descriptor go back. */
void task_done(struct ttask *t);
/* conn_events.c: libidm's callbacks, routed up to login and session */
int conn_accept(idm_portal *portal, idm_conn *ic, void *arg);
void conn_destroy_all(void);
void conn_reap(void);
/* stats.c: SIGUSR1 */
void stats_print_all(void);

/* login.c */
void login_pdu(struct tconn *c, idm_pdu *pdu);
void login_free(struct tconn *c);

/* session.c */
void session_pdu(struct tconn *c, idm_pdu *pdu);
void session_detach(struct tconn *c);
void session_drop_conn(struct session *s, struct tconn *c);
void session_destroy(struct session *s);
struct session *session_find(const char *iname, const uint8_t *isid);
struct session *session_find_tsih(uint16_t tsih);
uint16_t session_register(struct session *s);
void session_lock(void);
void session_unlock(void);
void session_timers(void);
void session_acl_login(struct session *s, struct tconn *c);

/* loop.c: a connection finishing its login on the loop that owns its
 * session (the ISID's or TSIH's). `resume` runs there with the request,
 * flags and text given here: the login code passes its own, so the loop
 * layer does not call back into login.c by name. */
typedef void (*loop_resume_fn)(struct tconn *c, const uint8_t *req, uint8_t flags,
			       const char *data, size_t len);
int loop_handoff(struct tconn *c, struct loop *to, loop_resume_fn resume,
		 const uint8_t *req, uint8_t flags, const char *data, size_t len);
bool loop_handoff_dying(struct tconn *c);
/* The loop a new session of c is served by: this one, or for an iSER
 * connection (all accepted on loop 0) the next loop in turn. */
struct loop *loop_for_new_session(const struct tconn *c);
void loop_run_handoffs(void);
void loop_handoff_flush(void);
/* loop.c: all the loops (main.c makes them) */
extern struct loop *g_loops;
extern int g_nloops;

/* text.c */
void text_request(struct ttask *t);
void text_free(struct tconn *c);

/* scsi_io.c */
void scsi_io_start(struct ttask *t);
void scsi_io_data_done(idm_task *it, enum idm_data_dir dir, uint32_t off,
		       uint32_t len, uint32_t sn, int status, void *arg);
void scsi_io_free(struct ttask *t);

/* tmf.c */
void tmf_request(struct ttask *t);
void tmf_check(struct session *s);
void tmf_check_all(void);
bool tmf_affects(const struct session *s, const struct ttask *t);

/* pool.c */
struct pbuf {
	struct pbuf *next;     /* free list */
	struct pbuf *all_next; /* every buffer, for pool_destroy() */
	idm_buf *ib;
	uint8_t *addr;
	size_t cap;
	int cls;
};
struct pbuf *pbuf_get(size_t len);
void pbuf_put(struct pbuf *b);
struct ttask *ttask_get(void);
void ttask_put(struct ttask *t);
void pool_destroy(void);

/* The LUNs a session's initiator ACL grants, as lun_granted() takes them */
static inline const uint64_t *session_lunmask(const struct session *s)
{
	return s->lun_all ? NULL : s->lunmask;
}

static inline struct lun *find_lun(uint64_t id)
{
	for (int i = 0; i < g_tgt.nluns; i++)
		if ((uint64_t)g_tgt.luns[i]->id == id)
			return g_tgt.luns[i];
	return NULL;
}

/* The LUN `id` as the session sees it: NULL if there is none or the
 * session's ACL hides it (lun_decode() gives 14 bits: inside the mask) */
static inline struct lun *session_lun(const struct session *s, uint64_t id)
{
	return lun_granted(session_lunmask(s), id) ? find_lun(id) : NULL;
}

static inline uint64_t lun_decode(const uint8_t *l)
{
	/* SAM single-level addressing: peripheral (00b) or flat (01b) */
	return ((uint64_t)(l[0] & 0x3f) << 8) | l[1];
}

static inline void lun_encode(uint8_t *l, uint64_t id)
{
	memset(l, 0, 8);
	if (id < 256) {
		l[1] = (uint8_t)id;
	} else {
		l[0] = (uint8_t)(0x40 | ((id >> 8) & 0x3f));
		l[1] = (uint8_t)id;
	}
}

#endif
