/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The libidm calls idm-target makes, faked in process for fuzz_target
 * (fake_idm.h). Completions of Put_Data/Get_Data are queued and run by
 * fake_complete() after the PDU that started them, as the real event
 * loop would run them on a later progress call, never from inside the
 * call that started them.
 */
#include "fake_idm.h"

#include <libidm/iscsi.h>
#include <libidm/provider.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct idm_buf {
	uint8_t *addr;
	size_t len;
	bool owned;
};

struct idm_task {
	struct idm_task *next; /* every live task */
	idm_conn *conn;
	void *arg;
	/* one Put_Data or Get_Data at a time, as in libidm */
	enum idm_data_dir busy;
	uint32_t offset, length;
};

struct idm_conn {
	struct idm_conn *next;
	const char *provider;
	struct idm_conn_cbs cbs;
	void *arg;
	bool ffp;        /* Enable_Datamover done */
	bool terminated; /* Connection_Terminate (no more callbacks) */
	struct idm_conn_params params;
};

static idm_conn *conns;
static idm_task *tasks;
static const uint8_t *dout;
static size_t dout_len;

/* Read the range as a provider would: ASan reports one that is not all
 * there. Every 16th byte and the last one are enough, since ASan's
 * redzones around each allocation are at least 16 bytes: a transfer of
 * megabytes costs no more than it must. */
static void touch(const void *p, size_t len)
{
	const volatile uint8_t *b = p;
	uint8_t x = 0;

	for (size_t i = 0; i < len; i += 16)
		x ^= b[i];
	if (len)
		x ^= b[len - 1];
	(void)x;
}

static void bug(const char *what)
{
	fprintf(stderr, "fake libidm: the target %s\n", what);
	abort();
}

/* ---------------------------------------------------------------- driver */

idm_conn *fake_conn_new(const char *provider, idm_accept_fn accept)
{
	idm_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->provider = provider;
	idm_prov_params_default(&c->params);
	c->next = conns;
	conns = c;
	if (accept(NULL, c, NULL) < 0) {
		idm_conn_destroy(c);
		return NULL;
	}
	return c;
}

bool fake_conn_alive(const idm_conn *c)
{
	for (idm_conn *x = conns; x; x = x->next)
		if (x == c)
			return true;
	return false;
}

void fake_deliver(idm_conn *c, const uint8_t *bhs, const uint8_t *data, size_t len)
{
	/* struct idm_pdu is the provider SDK's (<libidm/provider.h>) */
	struct idm_pdu pdu = { .bhs = bhs, .data = data, .data_len = len };

	if (c->terminated || !c->cbs.control_notify)
		return;
	if (c->ffp && idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_SCSI_CMD) {
		idm_task *t = calloc(1, sizeof(*t));
		if (!t)
			return;
		t->conn = c;
		t->next = tasks;
		tasks = t;
		pdu.task = t;
	}
	c->cbs.control_notify(c, &pdu, c->arg);
}

void fake_set_data_out(const uint8_t *data, size_t len)
{
	dout = data;
	dout_len = len;
}

void fake_complete(void)
{
	/* a completion may start another transfer (unsolicited data drained,
	 * then the status): run until none is left, within reason */
	for (int round = 0; round < 64; round++) {
		bool any = false;
		for (idm_task *t = tasks; t; t = t->next) {
			enum idm_data_dir dir = t->busy;
			idm_conn *c = t->conn;
			if (!dir || c->terminated)
				continue;
			t->busy = 0;
			any = true;
			c->cbs.data_completion_notify(t, dir, t->offset, t->length, 0, 0, c->arg);
			break; /* the list may have changed */
		}
		if (!any)
			return;
	}
}

void fake_terminate_notify(idm_conn *c)
{
	if (c->terminated)
		return;
	c->terminated = true;
	c->cbs.connection_terminate_notify(c, -ECONNRESET, c->arg);
}

static void free_task(idm_task *t)
{
	for (idm_task **pp = &tasks; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	free(t);
}

void fake_reset(void)
{
	while (conns)
		idm_conn_destroy(conns);
	while (tasks)
		free_task(tasks);
	dout = NULL;
	dout_len = 0;
}

/* ---------------------------------------------------------------- libidm */

const char *idm_version(void)
{
	return "fuzz";
}

const char *idm_strerror(int err)
{
	return strerror(err < 0 ? -err : err);
}

int idm_conn_set_cbs(idm_conn *c, const struct idm_conn_cbs *cbs, void *arg)
{
	if (!c || !cbs || cbs->size < sizeof(*cbs))
		return -EINVAL;
	c->cbs = *cbs;
	c->arg = arg;
	return 0;
}

void idm_conn_destroy(idm_conn *c)
{
	for (idm_conn **pp = &conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	/* libidm frees the tasks of a destroyed connection */
	for (idm_task *t = tasks, *next; t; t = next) {
		next = t->next;
		if (t->conn == c)
			free_task(t);
	}
	free(c);
}

const char *idm_conn_provider(const idm_conn *c)
{
	return c->provider;
}

const char *idm_conn_error(const idm_conn *c)
{
	(void)c;
	return "";
}

const char *idm_conn_peer_name(const idm_conn *c)
{
	(void)c;
	return "192.0.2.1:50000";
}

const char *idm_conn_local_name(const idm_conn *c)
{
	/* the iSER one is IPv6: text.c brackets it for TargetAddress */
	return strcmp(c->provider, "iser") ? "192.0.2.2:3260" : "2001:db8::2:3260";
}

/* The addresses the two functions above print, as socket addresses
 * (access.c checks the peer's: 192.0.2.1 is not loopback). */
int idm_conn_sockaddr(const idm_conn *c, enum idm_addr_end end,
		      struct sockaddr_storage *addr, socklen_t *len)
{
	bool v6 = end == IDM_ADDR_LOCAL && !strcmp(c->provider, "iser");

	memset(addr, 0, sizeof(*addr));
	if (v6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)addr;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(3260);
		inet_pton(AF_INET6, "2001:db8::2", &in6->sin6_addr);
		*len = sizeof(*in6);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)addr;

		in->sin_family = AF_INET;
		in->sin_port = htons(end == IDM_ADDR_PEER ? 50000 : 3260);
		inet_pton(AF_INET, end == IDM_ADDR_PEER ? "192.0.2.1" : "192.0.2.2",
			  &in->sin_addr);
		*len = sizeof(*in);
	}
	return 0;
}

int idm_buf_create(idm_ctx *ctx, void *addr, size_t len, idm_buf **out)
{
	idm_buf *b = calloc(1, sizeof(*b));

	(void)ctx;
	if (!b)
		return -ENOMEM;
	b->addr = addr;
	b->len = len;
	*out = b;
	return 0;
}

int idm_buf_alloc(idm_ctx *ctx, size_t len, idm_buf **out)
{
	idm_buf *b = calloc(1, sizeof(*b));

	(void)ctx;
	/* exactly len bytes: ASan sees a transfer past it */
	if (!b || !(b->addr = malloc(len ? len : 1))) {
		free(b);
		return -ENOMEM;
	}
	b->len = len;
	b->owned = true;
	*out = b;
	return 0;
}

void idm_buf_destroy(idm_buf *b)
{
	if (!b)
		return;
	if (b->owned)
		free(b->addr);
	free(b);
}

void *idm_buf_addr(const idm_buf *b)
{
	return b->addr;
}

void idm_task_set_arg(idm_task *t, void *arg)
{
	t->arg = arg;
}

void *idm_task_get_arg(const idm_task *t)
{
	return t->arg;
}

const uint8_t *idm_pdu_bhs(const idm_pdu *p)
{
	return p->bhs;
}

const uint8_t *idm_pdu_data(const idm_pdu *p, size_t *len)
{
	/* as libidm: no data is NULL and 0 */
	*len = p->data ? p->data_len : 0;
	return p->data_len ? p->data : NULL;
}

idm_task *idm_pdu_task(const idm_pdu *p)
{
	return p->task;
}

static int send_pdu(idm_conn *c, const uint8_t *bhs, const void *data, size_t len)
{
	uint8_t op = idm_iscsi_bhs_opcode(bhs);

	if (c->terminated)
		return -ENOTCONN;
	/* what a target may send (RFC 7143 11.1), Data-In and R2T excepted:
	 * those are Put_Data's and Get_Data's */
	if (op != IDM_ISCSI_OP_NOP_IN && op != IDM_ISCSI_OP_SCSI_RSP && op != IDM_ISCSI_OP_TASK_MGMT_RSP &&
	    op != IDM_ISCSI_OP_LOGIN_RSP && op != IDM_ISCSI_OP_TEXT_RSP && op != IDM_ISCSI_OP_LOGOUT_RSP &&
	    op != IDM_ISCSI_OP_REJECT && op != IDM_ISCSI_OP_ASYNC_MSG)
		bug("sent a PDU with an initiator's opcode");
	if (len && !data)
		bug("sent a data segment without data");
	if (len > 0xffffff)
		bug("sent a data segment over 2^24 - 1 bytes");
	/* what the initiator said it receives (MaxRecvDataSegmentLength) */
	if (c->ffp && len > c->params.initiator_recv_dsl)
		bug("sent more data than the initiator's MaxRecvDataSegmentLength");
	touch(bhs, IDM_ISCSI_BHS_LEN);
	touch(data, len);
	return 0;
}

int idm_send_control(idm_conn *c, const uint8_t bhs[IDM_BHS_LEN], const void *ahs,
		     size_t ahs_len, const void *data, size_t data_len, idm_task *task,
		     uint32_t flags)
{
	(void)task;
	(void)flags;
	if (ahs_len)
		touch(ahs, ahs_len);
	return send_pdu(c, bhs, data, data_len);
}

static int transfer(idm_task *t, const uint8_t *bhs, idm_buf *b, size_t off,
		    uint32_t offset, uint32_t len, enum idm_data_dir dir)
{
	if (!t)
		bug("moved data without a task");
	if (t->conn->terminated)
		return -ENOTCONN;
	if (!t->conn->ffp)
		bug("moved data before Enable_Datamover");
	if (t->busy)
		bug("started a second transfer on a busy task");
	if (!b || off > b->len || len > b->len - off)
		bug("moved data outside its buffer");
	touch(bhs, IDM_ISCSI_BHS_LEN);
	if (dir == IDM_DATA_IN) {
		touch(b->addr + off, len);
	} else {
		/* Data-Out lands in the buffer: the peer's bytes, repeated
		 * (whole copies: a transfer may be megabytes) */
		uint8_t *p = b->addr + off;
		size_t left = len;
		if (!dout_len)
			memset(p, 0, left);
		while (dout_len && left) {
			size_t n = left < dout_len ? left : dout_len;
			memcpy(p, dout, n);
			p += n;
			left -= n;
		}
	}
	t->busy = dir;
	t->offset = offset;
	t->length = len;
	return 0;
}

int idm_put_data(idm_task *t, const uint8_t datain[IDM_BHS_LEN], idm_buf *b,
		 size_t buf_off, uint32_t offset, uint32_t length, uint32_t flags)
{
	(void)flags;
	return transfer(t, datain, b, buf_off, offset, length, IDM_DATA_IN);
}

int idm_get_data(idm_task *t, const uint8_t r2t[IDM_BHS_LEN], idm_buf *b,
		 size_t buf_off, uint32_t offset, uint32_t length, uint32_t flags)
{
	(void)flags;
	return transfer(t, r2t, b, buf_off, offset, length, IDM_DATA_OUT);
}

int idm_conn_set_cmd_window(idm_conn *c, uint32_t commands)
{
	(void)commands;
	return c->ffp ? -ENOTCONN : 0;
}

/* one loop here: nothing to wake */
int idm_ctx_wakeup(idm_ctx *ctx)
{
	(void)ctx;
	return 0;
}

/* one loop here: the target never hands a connection to another */
int idm_conn_move(idm_conn *c, idm_ctx *dst)
{
	(void)c;
	(void)dst;
	return -EOPNOTSUPP;
}

int idm_notice_key_values(idm_conn *c, const char *kv, size_t len)
{
	/* the real parser (lib/params.c): what the target negotiated must be
	 * what libidm accepts */
	return idm_prov_params_parse(&c->params, IDM_ROLE_TARGET, kv, len, NULL, 0);
}

int idm_enable_datamover(idm_conn *c, const uint8_t rsp[IDM_BHS_LEN], const void *data,
			 size_t len)
{
	int r;

	if (c->ffp)
		bug("enabled the data mover twice");
	if (idm_iscsi_bhs_data_len(rsp) != len)
		bug("gave a final Login Response whose DataSegmentLength is not its data");
	r = send_pdu(c, rsp, data, len);
	if (r == 0)
		c->ffp = true;
	return r;
}

void idm_connection_terminate(idm_conn *c)
{
	c->terminated = true;
}

void idm_deallocate_task_resources(idm_task *t)
{
	/* libidm forgets the task: its transfer is cancelled. Giving one
	 * back twice is a use after free ASan reports. */
	if (!t)
		return;
	free_task(t);
}
