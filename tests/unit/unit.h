/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers shared by the unit tests: a context whose log lines are kept for
 * inspection, the fake providers' locations, and connections on the fake
 * provider in a known state.
 */
#ifndef LIBIDM_TEST_UNIT_H
#define LIBIDM_TEST_UNIT_H

#include <libidm/idm.h>
#include <libidm/iscsi.h>
#include <libidm/provider.h> /* IDM_PROV_ABI, IDM_PROV_ENTRY_NAME */

#include <check.h>
#include <errno.h>
#include <stdbool.h>

#include "check_suite.h"
#include "fake_provider.h"

/* FAKES_DIR (set by meson) holds one directory per fake variant. */
#ifndef FAKES_DIR
#error "FAKES_DIR must be set"
#endif

/* The directory of a fake variant: FAKES_DIR/<variant>, except that
 * IDM_TEST_FAKE_DIR, when set, holds the "good" one: the same source built
 * out of tree against the installed SDK (test abi-outside-provider runs
 * the provider-contract tests on it). */
const char *unit_fake_dir(const char *variant);

/* Point IDM_PROVIDER_PATH at the fake variants named in `dirs` (a
 * colon-separated list of names under FAKES_DIR, or absolute paths) and
 * set IDM_PROVIDERS to `filter` (NULL: unset). */
void unit_use_providers(const char *dirs, const char *filter);

/* A context logging at debug level into a buffer (see unit_log_has()). */
idm_ctx *unit_ctx(void);
bool unit_log_has(const char *needle);
const char *unit_log(void);

/* The good fake's counters (it must be loaded already). */
struct fake_stats *unit_fake_stats(void);

/* Run idm_ctx_progress() until *flag is set or ~2 s passed. */
bool unit_progress_until(idm_ctx *ctx, const volatile int *flag);

/* Callbacks recorded by the connections made below. */
struct unit_events {
	int connected, connected_status;
	int control, last_opcode;
	idm_task *last_task;
	int completions, last_dir, last_status;
	uint32_t last_offset, last_length;
	int acks;
	int terminate, terminate_reason;
	int accepted;
	idm_conn *accepted_conn;
};
extern struct unit_events unit_ev;
extern const struct idm_conn_cbs unit_cbs;

/* Attributes of a connection on `provider` that reports to unit_cbs, and
 * of a portal on `providers` that accepts through `accept`; the rest
 * zero, as a test's own designated initializer would leave it. */
struct idm_conn_attr unit_conn_attr(const char *provider);
struct idm_portal_attr unit_portal_attr(const char *providers,
					idm_accept_fn accept);

/* Initiator connection on the fake provider, in login phase (or, with
 * ffp, after Enable_Datamover). */
idm_conn *unit_initiator(idm_ctx *ctx, bool ffp);
/* Target connection accepted through a fake portal, same states. */
idm_conn *unit_target(idm_ctx *ctx, idm_portal **portal, bool ffp);

/* A BHS with just the opcode and ITT set. */
void unit_bhs(uint8_t bhs[IDM_ISCSI_BHS_LEN], uint8_t opcode, uint32_t itt);

#endif
