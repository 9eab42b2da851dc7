/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A libidm initiator and a libidm target talking iSER in one process,
 * built on the public API only: the smallest iSCSI layer that logs in,
 * notices the keys, and runs READ/WRITE commands against a RAM disk with
 * guard bytes around every buffer. Used by the iSER conformance tests;
 * over TCP too, for the "auto" provider fallback.
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
	enum p_status status_mode;
	bool put_ack;
	int data_acks;
	int t_completions;
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
};

void p_keys_default(struct p_keys *k);
int p_init(struct pair *p, const char *ip, uint32_t cap);
/* The same with the target portal on other providers ("tcp", "tcp,iser"). */
int p_init_with(struct pair *p, const char *ip, uint32_t cap,
		const char *providers);
void p_fini(struct pair *p);
int p_login(struct pair *p, const struct p_keys *k, int timeout_ms);
/* One command, waited for: 0 or -1 with p->err. */
int p_io(struct pair *p, bool write, uint32_t len, int timeout_ms);
/* Start one command without waiting for it. */
int p_io_start(struct pair *p, bool write, uint32_t len);
/* Write a pattern, read it back, compare, check guards. */
int p_write_read_verify(struct pair *p, uint32_t len, uint32_t seed);
int p_progress_until(struct pair *p, bool (*cond)(struct pair *p), int ms);
int p_check_guards(struct pair *p);
void p_pattern(uint8_t *b, size_t n, uint32_t seed);
double p_now(void);

#endif
