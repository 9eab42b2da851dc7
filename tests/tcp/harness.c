/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Harness core: the context, the portal and the "disk", the initiator's
 * login and callbacks, and progress with deadlines. The target's side is
 * in harness_target.c, the I/O workload in harness_io.c, the login keys in
 * harness_keys.c, the raw evil peers in raw_peer.c.
 */
#include "harness.h"
#include "harness_priv.h"
#include <libidm/keys.h>

#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

uint32_t h_sum32(const uint8_t *b, size_t n)
{
	uint32_t s = 2166136261u;

	for (size_t i = 0; i < n; i++)
		s = (s ^ b[i]) * 16777619u;
	return s;
}

void h_log(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "  [%s] ", h_provider());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void h_unexpected(struct h_side *s, const char *fmt, ...)
{
	va_list ap;

	if (s->unexpected++)
		return;
	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
}

void h_params_default(struct h_params *p)
{
	memset(p, 0, sizeof(*p));
	p->immediate_data = IDM_ISCSI_DEFAULT_IMMEDIATE_DATA;
	p->initial_r2t = IDM_ISCSI_DEFAULT_INITIAL_R2T;
	p->first_burst = IDM_ISCSI_DEFAULT_FIRST_BURST_LENGTH;
	p->max_burst = IDM_ISCSI_DEFAULT_MAX_BURST_LENGTH;
	p->ini_mrdsl = IDM_ISCSI_DEFAULT_MAX_RECV_DATA_SEGMENT_LENGTH;
	p->tgt_mrdsl = IDM_ISCSI_DEFAULT_MAX_RECV_DATA_SEGMENT_LENGTH;
	p->max_r2t = IDM_ISCSI_DEFAULT_MAX_OUTSTANDING_R2T;
}

const char *h_params_str(const struct h_params *p, char *buf, size_t len)
{
	snprintf(buf, len,
		 "Imm=%d IR2T=%d FBL=%u MBL=%u iMRDSL=%u tMRDSL=%u MaxR2T=%u HD=%d DD=%d",
		 p->immediate_data, p->initial_r2t, p->first_burst,
		 p->max_burst, p->ini_mrdsl, p->tgt_mrdsl, p->max_r2t,
		 p->header_digest, p->data_digest);
	return buf;
}

void h_set_err(struct h *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->err, sizeof(h->err), fmt, ap);
	va_end(ap);
}

void h_side_alive(struct h_side *s)
{
	/* A callback of a connection after its terminate (ours or the
	 * notify) breaks the API contract: count it, the tests assert 0. */
	if (s->terminate_count || s->terminated_by_us)
		s->cb_after_terminate++;
}

void h_side_terminated(struct h_side *s, idm_conn *conn, int reason)
{
	const char *e;

	h_side_alive(s);
	s->terminate_count++;
	s->terminate_reason = reason;
	e = idm_conn_error(conn);
	snprintf(s->error, sizeof(s->error), "%s", e ? e : "(null)");
}

/* ------------------------------------------------------------------ */
/* Initiator                                                           */
/* ------------------------------------------------------------------ */

void h_ini_send_login(struct h *h, idm_conn *conn)
{
	uint8_t bhs[48] = { 0 };
	char keys[1024];
	size_t klen = h_login_keys(&h->p, true, keys, sizeof(keys));
	int rc;

	bhs[0] = IDM_ISCSI_OP_LOGIN_REQ | IDM_ISCSI_OP_IMMEDIATE;
	bhs[1] = IDM_ISCSI_LOGIN_TRANSIT | (IDM_ISCSI_STAGE_OPERATIONAL << 2) |
		 IDM_ISCSI_STAGE_FULL_FEATURE;
	bhs[8] = 0x80; /* ISID: random type */
	bhs[9] = 0x12;
	bhs[10] = 0x34;
	bhs[11] = 0x56;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, 0x4c000000u);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_CMDSN, h->cmdsn);
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_EXP_STATSN, 0);
	rc = idm_send_control(conn, bhs, NULL, 0, keys, klen, NULL, 0);
	if (rc < 0) {
		h_set_err(h, "initiator: login send: %s", idm_strerror(rc));
		h->login_failed = true;
	}
}

static void i_connected_body(idm_conn *conn, int status, void *arg)
{
	struct h *h = arg;

	h_side_alive(&h->i);
	h->connected = true;
	h->connect_status = status;
	if (status == 0)
		h_ini_send_login(h, conn);
}

static void i_login_rsp(struct h *h, idm_conn *conn, idm_pdu *pdu)
{
	const uint8_t *bhs = idm_pdu_bhs(pdu);
	size_t dlen = 0;
	const uint8_t *d = idm_pdu_data(pdu, &dlen);
	uint32_t tgt_mrdsl = 0;
	char nk[512];
	size_t nlen;
	int rc;

	h->exp_statsn = idm_iscsi_get32(bhs + IDM_ISCSI_BHS_CMDSN) + 1;
	if (bhs[36] != 0 || !(bhs[1] & IDM_ISCSI_LOGIN_TRANSIT) ||
	    (bhs[1] & IDM_ISCSI_LOGIN_NSG_MASK) != IDM_ISCSI_STAGE_FULL_FEATURE ||
	    h_parse_keys(d, dlen, &h->ineg, &tgt_mrdsl) < 0) {
		h_set_err(h, "initiator: login refused (class %u detail %u)",
			bhs[36], bhs[37]);
		h->login_failed = true;
		return;
	}
	h->ineg.ini_mrdsl = h->p.ini_mrdsl;
	h->ineg.tgt_mrdsl = tgt_mrdsl;
	nlen = h_notice_keys(&h->ineg, nk, sizeof(nk));
	rc = idm_notice_key_values(conn, nk, nlen);
	if (rc == 0)
		rc = idm_enable_datamover(conn, NULL, NULL, 0);
	if (rc < 0) {
		h_set_err(h, "initiator: enabling the data mover: %s",
			idm_strerror(rc));
		h->login_failed = true;
		return;
	}
	h->i.ffp = true;
}

static void i_control_body(idm_conn *conn, idm_pdu *pdu, void *arg)
{
	struct h *h = arg;

	h_side_alive(&h->i);
	h->i.control_count++;
	h->i.last_opcode = idm_pdu_opcode(pdu);
	switch (idm_pdu_opcode(pdu)) {
	case IDM_ISCSI_OP_LOGIN_RSP:
		i_login_rsp(h, conn, pdu);
		break;
	case IDM_ISCSI_OP_SCSI_RSP:
	case IDM_ISCSI_OP_DATA_IN:
		h_io_response(h, pdu);
		break;
	case IDM_ISCSI_OP_NOP_IN: {
		size_t n = 0;
		const uint8_t *d = idm_pdu_data(pdu, &n);

		h->exp_statsn = idm_iscsi_get32(idm_pdu_bhs(pdu) + IDM_ISCSI_BHS_CMDSN) + 1;
		h->i.nop_in_len = d ? n : 0;
		h->i.nop_in_sum = d ? h_sum32(d, n) : 0;
		h->i.nop_in_count++;
		break;
	}
	default:
		h_unexpected(&h->i, "PDU opcode 0x%02x", idm_pdu_opcode(pdu));
		break;
	}
}

static void i_completion_body(idm_task *task, enum idm_data_dir dir,
			      uint32_t offset, uint32_t length, uint32_t sn,
			      int status, void *arg)
{
	struct h *h = arg;

	/* data_completion_notify is a target notification */
	h_side_alive(&h->i);
	h->i.completion_count++;
	h_unexpected(&h->i, "data_completion_notify at the initiator");
}

static void i_terminated_body(idm_conn *conn, int reason, void *arg)
{
	struct h *h = arg;

	h_side_terminated(&h->i, conn, reason);
	for (size_t s = 0; s < h->n_slots; s++)
		if (h->slots[s].busy && h->slots[s].task) {
			idm_deallocate_task_resources(h->slots[s].task);
			h->slots[s].task = NULL;
			h->slots[s].busy = false;
		}
	if (h->destroy_in_notify) {
		idm_conn_destroy(conn);
		h->i.conn = NULL;
	}
	for (size_t s = 0; h->free_on_terminate && s < h->n_slots; s++) {
		/* as on the target: the buffers are ours, free them now */
		if (h->slots[s].buf)
			idm_buf_destroy(h->slots[s].buf);
		h->slots[s].buf = NULL;
		free(h->slots[s].mem);
		h->slots[s].mem = NULL;
	}
}

/* Serialised with the test's thread when the progress thread runs. */
static void i_connected(idm_conn *conn, int status, void *arg)
{
	h_lock(arg);
	i_connected_body(conn, status, arg);
	h_unlock(arg);
}

static void i_control(idm_conn *conn, idm_pdu *pdu, void *arg)
{
	h_lock(arg);
	i_control_body(conn, pdu, arg);
	h_unlock(arg);
}

static void i_completion(idm_task *task, enum idm_data_dir dir,
			 uint32_t offset, uint32_t length, uint32_t sn,
			 int status, void *arg)
{
	h_lock(arg);
	i_completion_body(task, dir, offset, length, sn, status, arg);
	h_unlock(arg);
}

static void i_terminated(idm_conn *conn, int reason, void *arg)
{
	h_lock(arg);
	i_terminated_body(conn, reason, arg);
	h_unlock(arg);
}

const struct idm_conn_cbs h_i_cbs = {
	.size = sizeof(struct idm_conn_cbs),
	.connected = i_connected,
	.control_notify = i_control,
	.data_completion_notify = i_completion,
	.connection_terminate_notify = i_terminated,
};

/* ------------------------------------------------------------------ */
/* Setup                                                               */
/* ------------------------------------------------------------------ */

uint8_t *h_disk_slot(struct h *h, size_t i)
{
	return h->disk + h_disk_slot_off(h, i);
}

size_t h_disk_slot_off(struct h *h, size_t i)
{
	return i * (h->slot_cap + H_GUARD) + H_GUARD;
}

int h_disk_share(struct h *h, struct h *owner, size_t first_slot)
{
	size_t base = h_disk_slot_off(owner, first_slot) - H_GUARD;

	if (h->slot_cap != owner->slot_cap || h->disk_borrowed || h->disk_sg ||
	    first_slot + h->n_disk_slots > owner->n_disk_slots)
		return -EINVAL;
	idm_buf_destroy(h->disk_buf);
	free(h->disk);
	h->disk = owner->disk + base;
	h->disk_buf = owner->disk_buf;
	h->disk_base = base;
	h->disk_borrowed = true;
	return 0;
}

void h_disk_slot_clear(struct h *h, size_t i)
{
	memset(h_disk_slot(h, i), H_GUARD_BYTE, h->slot_cap);
}

bool (*h_log_hook)(int level, const char *msg);

static void log_cb(enum idm_log_level level, const char *msg, void *arg)
{
	(void)arg;
	if (h_log_hook && h_log_hook((int)level, msg))
		return;
	/* libidm's own reasons appear next to the test's lines */
	fprintf(stderr, "    libidm[%d]: %s\n", (int)level, msg);
}

void h_lock(struct h *h)
{
	if (h->threaded)
		pthread_mutex_lock(&h->mu);
}

void h_unlock(struct h *h)
{
	if (h->threaded)
		pthread_mutex_unlock(&h->mu);
}

int h_start_thread(struct h *h)
{
	int rc;

	h->threaded = true;
	rc = idm_ctx_start_progress_thread(h->ctx);
	if (rc < 0) {
		h->threaded = false;
		h_set_err(h, "idm_ctx_start_progress_thread: %s", idm_strerror(rc));
	}
	return rc;
}

/* Open file descriptors of the process, to catch leaked sockets. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/*
 * The same tests run over any provider: IDM_TEST_PROVIDER (default "tcp")
 * and IDM_TEST_HOST (default 127.0.0.1; for RDMA providers the address of
 * the RDMA netdev, IDM_RDMA_IP, since soft-RoCE does not work on loopback).
 */
const char *h_provider(void)
{
	const char *p = getenv("IDM_TEST_PROVIDER");
	return p && *p ? p : "tcp";
}

/* The caps of the provider under test, asked of the provider itself,
 * once: libidm records them also for a provider it opened but left out
 * (iSER on a host without a device). A provider not found has none: the
 * tests then fail and say it is missing. */
static uint64_t h_provider_caps(void)
{
	static bool asked;
	static uint64_t caps;

	if (!asked) {
		struct idm_ctx_attr ca = { .size = sizeof(ca), .log_level = -1 };
		idm_ctx *ctx = NULL;

		asked = true;
		if (idm_ctx_create(&ca, &ctx) == 0) {
			struct idm_provider_status st = { .size = sizeof(st) };

			for (size_t i = 0; idm_get_provider_status(ctx, i, &st) == 0;
			     i++) {
				if (strcmp(st.name, h_provider()) ||
				    st.state == IDM_PROVIDER_SHADOWED ||
				    st.state == IDM_PROVIDER_FILTERED)
					continue;
				caps = st.caps;
				break;
			}
			idm_ctx_destroy(ctx);
		}
	}
	return caps;
}

/* Does the provider under test need an RDMA device? */
bool h_provider_rdma(void)
{
	return (h_provider_caps() & IDM_CAP_RDMA) != 0;
}

/* Does it carry CRC32C digests? (iSER does not: RDMA has its own CRC and
 * the digests are None there whatever the keys say, RFC 7145 6.3.) */
bool h_provider_digests(void)
{
	return (h_provider_caps() & IDM_CAP_DIGESTS) != 0;
}

const char *h_host(void)
{
	const char *h = getenv("IDM_TEST_HOST");

	if (h && *h)
		return h;
	if (h_provider_rdma()) {
		h = getenv("IDM_RDMA_IP");
		if (h && *h)
			return h;
	}
	return "127.0.0.1";
}

int h_init(struct h *h, uint32_t slot_cap, size_t n_slots)
{
	return h_init_in(h, slot_cap, n_slots, NULL);
}

int h_init_in(struct h *h, uint32_t slot_cap, size_t n_slots, idm_domain *dom)
{
	struct idm_ctx_attr ca = {
		.size = sizeof(ca),
		.log_fn = log_cb,
		.log_level = -1,
		.domain = dom,
	};
	struct idm_portal_attr pa = {
		.size = sizeof(pa),
		.providers = h_provider(),
		.accept = h_target_accept,
	};
	int rc;

	memset(h, 0, sizeof(*h));
	pthread_mutex_init(&h->mu, NULL);
	h->fds_at_init = open_fds();
	h_params_default(&h->p);
	h->cmdsn = 1;
	h->next_itt = 0x100;
	h->rnd = 0x2545f491u;
	if (n_slots > H_MAX_SLOTS)
		n_slots = H_MAX_SLOTS;
	pa.arg = h;
	rc = idm_ctx_create(&ca, &h->ctx);
	if (rc < 0) {
		h_set_err(h, "idm_ctx_create: %s", idm_strerror(rc));
		return rc;
	}
	rc = idm_portal_create(h->ctx, h_host(), "0", &pa, &h->portal);
	if (rc < 0) {
		h_set_err(h, "idm_portal_create(%s, %s:0): %s", h_provider(),
			  h_host(), idm_strerror(rc));
		return rc;
	}
	h->port = idm_portal_port(h->portal);
	h->slot_cap = slot_cap;
	h->n_disk_slots = n_slots;
	h->disk_len = n_slots * (slot_cap + H_GUARD) + H_GUARD;
	h->disk = malloc(h->disk_len);
	if (!h->disk)
		return -ENOMEM;
	memset(h->disk, H_GUARD_BYTE, h->disk_len);
	rc = idm_buf_create(h->ctx, h->disk, h->disk_len, &h->disk_buf);
	if (rc < 0) {
		h_set_err(h, "idm_buf_create: %s", idm_strerror(rc));
		return rc;
	}
	for (size_t s = 0; s < n_slots; s++) {
		struct h_slot *sl = &h->slots[s];

		sl->cap = slot_cap;
		sl->mem = malloc((size_t)slot_cap + 2 * H_GUARD);
		if (!sl->mem)
			return -ENOMEM;
		memset(sl->mem, H_GUARD_BYTE, (size_t)slot_cap + 2 * H_GUARD);
		/* the idm_buf covers the guards too: only the task's range
		 * [H_GUARD, H_GUARD+len) may be written */
		rc = idm_buf_create(h->ctx, sl->mem, (size_t)slot_cap + 2 * H_GUARD,
				    &sl->buf);
		if (rc < 0) {
			h_set_err(h, "idm_buf_create: %s", idm_strerror(rc));
			return rc;
		}
		h->n_slots++;
	}
	return 0;
}

void h_fini(struct h *h)
{
	int fds;

	if (h->threaded && h->ctx) {
		/* no callback may race the teardown below */
		(void)idm_ctx_stop_progress_thread(h->ctx);
		h->threaded = false;
	}
	if (h->i.conn)
		idm_conn_destroy(h->i.conn);
	if (h->t.conn)
		idm_conn_destroy(h->t.conn);
	if (h->portal)
		idm_portal_destroy(h->portal);
	for (size_t s = 0; s < h->n_slots; s++) {
		if (h->slots[s].buf)
			idm_buf_destroy(h->slots[s].buf);
		free(h->slots[s].mem);
	}
	if (h->disk_borrowed) { /* the owner's to free */
		h->disk_buf = NULL;
		h->disk = NULL;
	}
	if (h->disk_buf)
		idm_buf_destroy(h->disk_buf);
	h_sg_free(h);
	free(h->disk);
	if (h->ctx)
		idm_ctx_destroy(h->ctx);
	fds = open_fds();
	pthread_mutex_destroy(&h->mu);
	ck_assert_msg(fds == h->fds_at_init,
		      "%d file descriptors open after h_fini, %d before h_init",
		      fds, h->fds_at_init);
	memset(h, 0, sizeof(*h));
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int h_progress_until(struct h *h, bool (*cond)(struct h *h), int timeout_ms)
{
	long end = now_ms() + timeout_ms;

	for (;;) {
		long left = end - now_ms();
		bool done;
		int rc;

		h_lock(h);
		done = cond(h);
		h_unlock(h);
		if (done)
			break;
		if (left <= 0)
			return -ETIMEDOUT;
		if (h->threaded) {
			usleep(500); /* the progress thread does the work */
			continue;
		}
		rc = idm_ctx_progress(h->ctx, left > 50 ? 50 : (int)left);
		if (rc < 0 && rc != -EINTR) {
			h_set_err(h, "idm_ctx_progress: %s", idm_strerror(rc));
			return rc;
		}
	}
	return 0;
}

void h_progress_for(struct h *h, int ms)
{
	long end = now_ms() + ms;
	long left;

	while ((left = end - now_ms()) > 0) {
		if (h->threaded)
			usleep(1000);
		else
			(void)idm_ctx_progress(h->ctx, left > 50 ? 50 : (int)left);
	}
}

static bool login_done(struct h *h)
{
	return (h->i.ffp && h->t.ffp) || h->login_failed ||
	       (h->connected && h->connect_status) || h->i.terminate_count ||
	       h->t.terminate_count;
}

int h_connect_start(struct h *h, const struct h_params *p, int port,
		    int timeout_ms)
{
	struct idm_conn_attr ca = {
		.size = sizeof(ca),
		.provider = h_provider(),
		.cbs = &h_i_cbs,
		.arg = h,
		.connect_timeout_ms = timeout_ms,
	};
	char ps[16];
	int rc;

	h->p = *p;
	snprintf(ps, sizeof(ps), "%d", port);
	rc = idm_conn_connect(h->ctx, h_host(), ps, &ca, &h->i.conn);
	if (rc < 0)
		h_set_err(h, "idm_conn_connect: %s", idm_strerror(rc));
	return rc;
}

int h_connect_login(struct h *h, const struct h_params *p, int timeout_ms)
{
	int rc = h_connect_start(h, p, h->port, timeout_ms);

	if (rc < 0)
		return rc;
	return h_login_wait(h, timeout_ms);
}

int h_login_wait(struct h *h, int timeout_ms)
{
	int rc = h_progress_until(h, login_done, timeout_ms);

	if (rc < 0) {
		h_set_err(h, "login timed out (connected %d, ini ffp %d, tgt ffp %d)",
			h->connected, h->i.ffp, h->t.ffp);
		return rc;
	}
	if (h->connected && h->connect_status) {
		h_set_err(h, "connect failed: %s", idm_strerror(h->connect_status));
		return h->connect_status;
	}
	if (h->i.terminate_count || h->t.terminate_count) {
		h_set_err(h, "connection failed during login: ini '%s' tgt '%s'",
			h->i.error, h->t.error);
		return -ECONNRESET;
	}
	if (h->login_failed)
		return -EPROTO;
	if (memcmp(&h->ineg, &h->tneg, sizeof(h->ineg))) {
		h_set_err(h, "initiator and target negotiated different values");
		return -EPROTO;
	}
	return 0;
}

static int warm_accept(idm_portal *p, idm_conn *c, void *arg)
{
	(void)p;
	(void)c;
	(void)arg;
	return -ECONNREFUSED;
}

bool h_main_prologue(const char *prog, unsigned alarm_s)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const char *scale = getenv("IDM_TEST_TIME_SCALE");
	int fd;

	/* Emulated RDMA (soft-RoCE under TCG) is far slower than loopback. */
	if (scale && atoi(scale) > 1)
		alarm_s *= (unsigned)atoi(scale);
	alarm(alarm_s);
	if (h_provider_rdma()) {
		if (!getenv("IDM_RDMA_IP") && !getenv("IDM_TEST_HOST")) {
			printf("%s: SKIP: provider %s needs an RDMA device "
			       "(run through tests/rdma-vm/ci.sh)\n",
			       prog, h_provider());
			return false;
		}
		/* rdma-core opens its device files once per process and keeps
		 * them: load the provider (and use the device) once before any
		 * test counts open descriptors. */
		{
			idm_ctx *ctx = NULL;
			idm_portal *pt = NULL;
			struct idm_portal_attr pa = {
				.size = sizeof(pa),
				.providers = h_provider(),
				.accept = warm_accept,
			};

			if (idm_ctx_create(NULL, &ctx) == 0 &&
			    idm_portal_create(ctx, h_host(), "0", &pa, &pt) == 0)
				idm_portal_destroy(pt);
			idm_ctx_destroy(ctx);
		}
		return true;
	}
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "%s: SKIP: cannot bind a TCP socket on 127.0.0.1: %s\n",
			prog, strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	close(fd);
	return true;
}

int h_main(const char *prog, unsigned alarm_s, const char *suite,
	   const char *tcase, unsigned timeout_s, const TTest *const tests[])
{
	if (!h_main_prologue(prog, alarm_s))
		return 77;
	return test_suite_run_case(suite, tcase, timeout_s, tests);
}
