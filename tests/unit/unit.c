/* SPDX-License-Identifier: BSD-2-Clause */
#include "unit.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char log_buf[16384];
static size_t log_len;

static void log_sink(enum idm_log_level level, const char *msg, void *arg)
{
	(void)level;
	(void)arg;
	int n = snprintf(log_buf + log_len, sizeof(log_buf) - log_len, "%s\n", msg);
	if (n > 0 && (size_t)n < sizeof(log_buf) - log_len)
		log_len += (size_t)n;
}

bool unit_log_has(const char *needle)
{
	return strstr(log_buf, needle) != NULL;
}

const char *unit_log(void)
{
	return log_buf;
}

const char *unit_fake_dir(const char *variant)
{
	static char dir[4096];
	const char *good = getenv("IDM_TEST_FAKE_DIR");

	if (!strcmp(variant, "good") && good && *good)
		return good;
	snprintf(dir, sizeof(dir), "%s/%s", FAKES_DIR, variant);
	return dir;
}

void unit_use_providers(const char *dirs, const char *filter)
{
	char path[4096] = "";
	char *copy = strdup(dirs), *save = NULL, *d;

	ck_assert_ptr_nonnull(copy);
	for (d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		size_t n = strlen(path);
		snprintf(path + n, sizeof(path) - n, "%s%s", n ? ":" : "",
			 d[0] == '/' ? d : unit_fake_dir(d));
	}
	free(copy);
	ck_assert_int_eq(setenv("IDM_PROVIDER_PATH", path, 1), 0);
	if (filter)
		ck_assert_int_eq(setenv("IDM_PROVIDERS", filter, 1), 0);
	else
		unsetenv("IDM_PROVIDERS");
}

idm_ctx *unit_ctx(void)
{
	struct idm_ctx_attr attr = {
		.size = sizeof(attr),
		.log_fn = log_sink,
		.log_level = IDM_LOG_DEBUG,
	};
	idm_ctx *ctx = NULL;

	log_len = 0;
	log_buf[0] = '\0';
	ck_assert_int_eq(idm_ctx_create(&attr, &ctx), 0);
	ck_assert_ptr_nonnull(ctx);
	return ctx;
}

struct fake_stats *unit_fake_stats(void)
{
	char path[4200];
	void *h;
	struct fake_stats *st;

	/* NOLOAD: the module must be the one loaded from that directory */
	snprintf(path, sizeof(path), "%s/libidm-fake.so", unit_fake_dir("good"));
	h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	ck_assert_msg(h != NULL, "fake provider %s not loaded: %s", path, dlerror());
	st = dlsym(h, "fake_stats");
	ck_assert_ptr_nonnull(st);
	dlclose(h); /* drops only the reference NOLOAD took */
	return st;
}

bool unit_progress_until(idm_ctx *ctx, const volatile int *flag)
{
	for (int i = 0; i < 200 && !*flag; i++)
		ck_assert_int_ge(idm_ctx_progress(ctx, 10), 0);
	return *flag != 0;
}

struct unit_events unit_ev;

static void cb_connected(idm_conn *conn, int status, void *arg)
{
	(void)conn;
	(void)arg;
	unit_ev.connected_status = status;
	/* a test may poll it from another thread (the progress thread's) */
	__atomic_add_fetch(&unit_ev.connected, 1, __ATOMIC_RELEASE);
}

static void cb_control(idm_conn *conn, idm_pdu *pdu, void *arg)
{
	(void)conn;
	(void)arg;
	unit_ev.control++;
	unit_ev.last_opcode = idm_pdu_opcode(pdu);
	unit_ev.last_task = idm_pdu_task(pdu);
}

static void cb_completion(idm_task *task, enum idm_data_dir dir, uint32_t offset,
			  uint32_t length, uint32_t sn, int status, void *arg)
{
	(void)task;
	(void)sn;
	(void)arg;
	unit_ev.completions++;
	unit_ev.last_dir = dir;
	unit_ev.last_status = status;
	unit_ev.last_offset = offset;
	unit_ev.last_length = length;
}

static void cb_ack(idm_task *task, uint32_t datasn, void *arg)
{
	(void)task;
	(void)datasn;
	(void)arg;
	unit_ev.acks++;
}

static void cb_terminate(idm_conn *conn, int reason, void *arg)
{
	(void)conn;
	(void)arg;
	unit_ev.terminate++;
	unit_ev.terminate_reason = reason;
}

const struct idm_conn_cbs unit_cbs = {
	.size = sizeof(struct idm_conn_cbs),
	.connected = cb_connected,
	.control_notify = cb_control,
	.data_completion_notify = cb_completion,
	.data_ack_notify = cb_ack,
	.connection_terminate_notify = cb_terminate,
};

static int cb_accept(idm_portal *portal, idm_conn *conn, void *arg)
{
	(void)portal;
	(void)arg;
	unit_ev.accepted++;
	unit_ev.accepted_conn = conn;
	return idm_conn_set_cbs(conn, &unit_cbs, NULL);
}

void unit_bhs(uint8_t bhs[IDM_ISCSI_BHS_LEN], uint8_t opcode, uint32_t itt)
{
	memset(bhs, 0, IDM_ISCSI_BHS_LEN);
	bhs[0] = opcode;
	idm_iscsi_put32(bhs + IDM_ISCSI_BHS_ITT, itt);
}

struct idm_conn_attr unit_conn_attr(const char *provider)
{
	struct idm_conn_attr attr = {
		.size = sizeof(attr),
		.provider = provider,
		.cbs = &unit_cbs,
	};

	return attr;
}

struct idm_portal_attr unit_portal_attr(const char *providers,
					idm_accept_fn accept)
{
	struct idm_portal_attr attr = {
		.size = sizeof(attr),
		.providers = providers,
		.accept = accept,
	};

	return attr;
}

idm_conn *unit_initiator(idm_ctx *ctx, bool ffp)
{
	struct idm_conn_attr attr = unit_conn_attr("fake");
	idm_conn *conn = NULL;

	memset(&unit_ev, 0, sizeof(unit_ev));
	ck_assert_int_eq(idm_conn_connect(ctx, "127.0.0.1", "3260", &attr, &conn), 0);
	ck_assert_ptr_nonnull(conn);
	/* never from inside the call */
	ck_assert_int_eq(unit_ev.connected, 0);
	ck_assert(unit_progress_until(ctx, &unit_ev.connected));
	ck_assert_int_eq(unit_ev.connected_status, 0);
	ck_assert_int_eq(idm_conn_role(conn), IDM_ROLE_INITIATOR);
	if (ffp)
		ck_assert_int_eq(idm_enable_datamover(conn, NULL, NULL, 0), 0);
	return conn;
}

idm_conn *unit_target(idm_ctx *ctx, idm_portal **portal, bool ffp)
{
	struct idm_portal_attr attr = unit_portal_attr("fake", cb_accept);
	idm_conn *conn;

	memset(&unit_ev, 0, sizeof(unit_ev));
	ck_assert_int_eq(idm_portal_create(ctx, "127.0.0.1", "0", &attr, portal), 0);
	ck_assert_int_eq(unit_ev.accepted, 0);
	ck_assert(unit_progress_until(ctx, &unit_ev.accepted));
	conn = unit_ev.accepted_conn;
	ck_assert_ptr_nonnull(conn);
	ck_assert_int_eq(idm_conn_role(conn), IDM_ROLE_TARGET);
	if (ffp) {
		uint8_t rsp[IDM_ISCSI_BHS_LEN];
		unit_bhs(rsp, IDM_ISCSI_OP_LOGIN_RSP, 1);
		ck_assert_int_eq(idm_enable_datamover(conn, rsp, NULL, 0), 0);
	}
	return conn;
}
