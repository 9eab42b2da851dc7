/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm-target's iSCSI layer as a whole (examples/target: login, text,
 * session, task management, SCSI) fed the PDU stream of a hostile
 * initiator, over the in-process libidm of fake_idm.c. The provider's own
 * receive path is not in the loop (fuzz the TCP provider through a
 * socket for that); every PDU arrives well framed, as libidm delivers
 * it, and the target's parsing of its contents is what is tested.
 *
 * Input: one configuration byte, then records
 *   sel(1) BHS(48) data(the BHS's DataSegmentLength, or what is left)
 * configuration bit 0: the connections are iSER; bit 1: CHAP required
 * (--chap); bit 2: the provider does digests; bit 3: an alias; bit 4:
 * --key overrides; bit 5: protected (no allow-all: the peer, 192.0.2.1,
 * may log in with CHAP only, and discovers nothing without it); bit 6:
 * bits 6-7, one of: 1 (0x40) the rest of CHAP: initiator-chap for
 * iqn.2026-11.org.libidm:ini, mutual-chap, discovery-chap,
 * chap-algorithms sha3-256,sha256,sha1 (MD5 refused) and
 * --max-auth-failures 2; 2 (0x80) initiator ACL rules (access.c):
 * iqn.2026-11.org.libidm:ini from 192.0.2.0/24 sees LUN 1 only,
 * iqn.2026-11.org.libidm:other anything, any other name is refused;
 * 3 (0xc0) those rules, and each time passes they change as a SIGHUP
 * would change them, between those and rules that refuse every session
 * (which is then asked to log out). CHAP's challenges are 00 01 02 ...
 * with CHAP_I 1 in this build (ex_chap.c), so a seed can answer them. sel
 * bit 0: connection 0 or 1 (a second connection tries session and
 * connection reinstatement); bit 1: the initiator
 * resets that connection first (Connection_Terminate_Notify); bit 2:
 * time passes (timers run). A connection the target closed is replaced
 * by a new one at its next PDU. Data-Out PDUs are the provider's: their
 * data is what the following Get_Data transfers place.
 */
#include "fuzz.h"

#include "fake_idm.h"
#include "authlimit.h"
#include "budget.h"
#include "access.h"
#include "ex_log.h"
#include "target.h"

#include <stdlib.h>
#include <string.h>

#define REC_HDR (1 + IDM_ISCSI_BHS_LEN)
#define MAX_PDUS 64
#define MAX_DATA 65536u

struct target g_tgt;
/* the target's one event loop (examples/target/loop.c) */
static struct loop loop0;

static const char *overrides[] = {
	"ImmediateData=No", "InitialR2T=Yes", "MaxBurstLength=4096",
	"FirstBurstLength=512", "HeaderDigest=None", "ErrorRecoveryLevel=0",
};

/* The ACL rules of config modes 2 and 3, or (refuse) rules no session
 * matches. */
static void acl_rules(bool refuse)
{
	struct access_acl *a = access_acl_new();
	char why[256];

	if (!a || access_acl_add(a, refuse ? "* 198.51.100.0/24" :
				 "iqn.2026-11.org.libidm:ini 192.0.2.0/24 luns=1",
				 why, sizeof(why)) < 0 ||
	    (!refuse && access_acl_add(a, "iqn.2026-11.org.libidm:other *", why,
				       sizeof(why)) < 0))
		abort();
	access_acl_install(a);
}

static void setup(uint8_t cfg)
{
	static bool logs;
	unsigned mode = cfg >> 6; /* bits 6-7: see the top of this file */

	if (!logs) {
		/* IDM_FUZZ_LOG=3 shows what the target says; quiet by default */
		const char *l = getenv("IDM_FUZZ_LOG");
		ex_log_init("fuzz_target", l ? atoi(l) : -1);
		/* the login budgets (budget.c) with their defaults */
		if (budget_init(0) < 0)
			abort();
		logs = true;
	}
	memset(&g_tgt, 0, sizeof(g_tgt));
	g_loop = &loop0;
	g_tgt.name = "iqn.2026-11.org.libidm:fuzz";
	g_tgt.allow_all = !(cfg & 32) && mode < 2; /* main.c: not with ACLs */
	if (mode >= 2)
		acl_rules(false);
	if (cfg & 2) {
		g_tgt.chap_user = "user";
		g_tgt.chap_secret = "secret-secret";
	}
	if (mode == 1) {
		g_tgt.chap_initiators[0] = (struct tgt_chap_cred){
			"iqn.2026-11.org.libidm:ini", "ini", "ini-secret-0123" };
		g_tgt.nchap_initiators = 1;
		g_tgt.mutual_user = "tgt";
		g_tgt.mutual_secret = "tgt-secret-4567";
		g_tgt.disc_user = "disc";
		g_tgt.disc_secret = "disc-secret-89ab";
		g_tgt.chap_algs[0] = 8;
		g_tgt.chap_algs[1] = 7;
		g_tgt.chap_algs[2] = 6;
		g_tgt.nchap_algs = 3;
	}
	/* the failures of one input do not refuse the next */
	authlimit_reset();
	g_authlimit_max = mode == 1 ? 2 : 0;
	g_tgt.caps = (cfg & 4) ? IDM_CAP_DIGESTS : 0;
	if (cfg & 8)
		g_tgt.alias = "fuzz target";
	if (cfg & 16) {
		for (size_t i = 0; i < sizeof(overrides) / sizeof(overrides[0]); i++)
			g_tgt.key_overrides[i] = overrides[i];
		g_tgt.nkey_overrides = (int)(sizeof(overrides) / sizeof(overrides[0]));
	}
	/* LUN 0: 512-byte blocks, LUN 1: 4096-byte blocks, write protected */
	if (lun_open("ram:64K", 0, 512, &g_tgt.luns[0]) < 0 ||
	    lun_open("ram:64K,ro", 1, 4096, &g_tgt.luns[1]) < 0)
		abort();
	g_tgt.nluns = 2;
	for (int i = 0; i < g_tgt.nluns; i++)
		if (lun_attach_ctx(g_tgt.luns[i], NULL) < 0)
			abort();
}

static void teardown(void)
{
	conn_destroy_all();
	while (g_loop->sessions)
		session_destroy(g_loop->sessions);
	pool_destroy();
	fake_reset();
	for (int i = 0; i < g_tgt.nluns; i++)
		lun_close(g_tgt.luns[i]);
	g_tgt.nluns = 0;
	access_acl_install(NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *provider;
	idm_conn *conn[2] = { NULL, NULL };
	bool reload, refuse = false;

	if (size < 1)
		return 0;
	setup(data[0]);
	reload = (data[0] & 0xc0) == 0xc0;
	provider = (data[0] & 1) ? "iser" : "tcp";
	data++;
	size--;
	for (int i = 0; i < MAX_PDUS && size >= REC_HDR; i++) {
		uint8_t sel = data[0];
		const uint8_t *bhs = data + 1;
		size_t len = idm_iscsi_bhs_data_len(bhs);
		idm_conn **c = &conn[sel & 1];

		if (len > MAX_DATA)
			len = MAX_DATA;
		if (len > size - REC_HDR)
			len = size - REC_HDR;
		if (*c && !fake_conn_alive(*c))
			*c = NULL;
		if (*c && (sel & 2)) {
			fake_terminate_notify(*c);
			*c = NULL;
		}
		if (!*c)
			*c = fake_conn_new(provider, conn_accept);
		if (*c) {
			if (idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_DATA_OUT)
				fake_set_data_out(bhs + IDM_ISCSI_BHS_LEN, len);
			else
				fake_deliver(*c, bhs, bhs + IDM_ISCSI_BHS_LEN, len);
			fake_complete();
		}
		if (sel & 4) {
			if (reload)
				acl_rules((refuse = !refuse));
			session_timers();
			tmf_check_all();
		}
		conn_reap();
		data += REC_HDR + len;
		size -= REC_HDR + len;
	}
	teardown();
	return 0;
}
