/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A libidm initiator and a libidm target talking iSER in one process,
 * built on the public API only: the smallest iSCSI layer that logs in,
 * notices the keys, and runs READ/WRITE commands against a RAM disk with
 * guard bytes around every buffer. Used by the iSER conformance tests;
 * over TCP too, for the "auto" provider fallback. Either half also plays
 * against a raw-verbs peer (test_iser_stag): p_init_ctx() without a
 * portal, p_connect() to the peer's port, or p_listen() for its connect.
 */
#ifndef TESTS_ISER_PAIR_H
#define TESTS_ISER_PAIR_H

#include <libidm/idm.h>
#include <libidm/iscsi.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define P_GUARD 4096
#define P_GUARD_BYTE 0x5a
#define P_CDB_READ 0x28
#define P_CDB_WRITE 0x2a
/* RFC 7145 iSER Hello: noticed by both sides, after the keys, when p->hello */
#define P_HELLO_KEY "iSERHelloRequired=Yes"

struct p_keys {
	bool immediate_data;
	bool initial_r2t;
	uint32_t first_burst;
	uint32_t max_burst;
	uint32_t ini_rdsl; /* InitiatorRecvDataSegmentLength */
	uint32_t tgt_rdsl; /* TargetRecvDataSegmentLength */
	int erl;
};

enum p_status { P_STATUS_RSP = 0, P_STATUS_IN_DATAIN };

struct pair {
	idm_ctx *ctx;
	/* a second context p_progress_until() drives along (a connection
	 * of the pair moved there), NULL: none */
	idm_ctx *also;
	const char *ip;
	struct p_keys k;
	char kv[512];
	size_t kv_len;
	char err[512];
	/* target */
	idm_portal *portal;
	idm_conn *tc;
	uint8_t *disk;   /* guard + cap + guard */
	idm_buf *disk_buf;
	uint32_t cap;
	uint32_t statsn;
	int t_terminated, t_reason;
	bool t_ffp;
	int t_unmatched; /* PDUs handed up with no task (doc/api.md 7.1) */
	enum p_status status_mode;
	bool put_ack;
	int data_acks;
	int t_completions;
	int t_nops;       /* NOP-Outs answered (or refused: t_nop_eagain) */
	int t_nop_eagain; /* NOP-Ins refused with -EAGAIN: send queue full */
	/* initiator */
	idm_conn *ic;
	bool connected;
	int connect_status;
	bool i_ffp;
	int i_terminated, i_reason;
	uint8_t *mem;    /* guard + cap + guard */
	idm_buf *buf;
	uint32_t cmdsn, itt;
	bool done;
	bool io_write;   /* the last command started, for messages */
	uint32_t io_len;
	uint8_t status;
	idm_task *task;
	int cb_after_end;
	/* connect to another process's target instead of our own */
	int remote_port;
	/* set between p_init and p_login: the initiator's provider ("auto"
	 * to test the fallback) and the one both sides must end up on;
	 * NULL means "iser" */
	const char *ini_provider;
	const char *expect_provider;
	/* > 0: the target writes one byte here once a command's RDMA is
	 * under way (another process waits for it to kill this one) */
	int cmd_fd;
	/* both sides notice P_HELLO_KEY: the initiator once the Login
	 * Response came (the caller saw the target's answer), the target
	 * with the request's keys */
	bool hello;
	/* the context is another pair's (same protection domain): p_fini
	 * leaves it */
	bool shared_ctx;
	/* non-NULL: the target moves a command's data to and from t_buf at
	 * t_buf_off instead of the disk, the initiator its data from i_buf
	 * at i_buf_off instead of mem (scatter-gather views, test_iser_sg);
	 * the caller owns and destroys them */
	idm_buf *t_buf, *i_buf;
	size_t t_buf_off, i_buf_off;
	/* idm_task_data_received() of the last command, read when its
	 * response came (before the task was released) */
	uint32_t i_received;
	/* non-NULL: called with a SCSI Response for a task other than
	 * p->task (a test's own commands in flight beside the pair's) */
	void (*i_other_rsp)(struct pair *p, idm_task *t, const uint8_t *bhs);
	void *user;
};

void p_keys_default(struct p_keys *k);
/* Both halves, the target listening on an ephemeral port on "iser". */
int p_init(struct pair *p, const char *ip, uint32_t cap);
/* The same with the target portal on other providers ("tcp", "tcp,iser"). */
int p_init_with(struct pair *p, const char *ip, uint32_t cap,
		const char *providers);
/* A context (shared: another pair's, else a new one) and the guarded
 * buffers; no portal yet. */
int p_init_ctx(struct pair *p, const char *ip, uint32_t cap, idm_ctx *shared);
/* The target half: a portal on `providers` at p->ip, ephemeral port. */
int p_listen(struct pair *p, const char *providers);
/* The keys both halves offer and notice (p->kv), with RDMAExtensions=Yes
 * iff rdma; p_login sets them, a lone target sets them before its peer
 * logs in. */
void p_set_keys(struct pair *p, const struct p_keys *k, bool rdma);
/* Destroy the connections and the portal, keep buffers and context. */
void p_close_conns(struct pair *p);
void p_fini(struct pair *p);
/* Connect the initiator (to p->remote_port, else our portal) and log in:
 * p_connect only starts it, p_login waits for both sides' FFP. */
int p_connect(struct pair *p, const struct p_keys *k);
int p_login(struct pair *p, const struct p_keys *k, int timeout_ms);
/* One command, waited for: 0 or -1 with p->err. */
int p_io(struct pair *p, bool write, uint32_t len, int timeout_ms);
/* Start one command without waiting for it; wait for its good response. */
int p_io_start(struct pair *p, bool write, uint32_t len);
int p_io_wait(struct pair *p, int timeout_ms);
/* Write a pattern, read it back, compare, check guards. */
int p_write_read_verify(struct pair *p, uint32_t len, uint32_t seed);
int p_progress_until(struct pair *p, bool (*cond)(struct pair *p), int ms);
int p_check_guards(struct pair *p);
void p_pattern(uint8_t *b, size_t n, uint32_t seed);
double p_now(void);

#endif
