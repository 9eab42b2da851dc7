/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What idm-initiator prints about the target: the SendTargets answer of a
 * discovery session, the LUNs of REPORT LUNS, and INQUIRY and READ
 * CAPACITY(16) of each. Also picks the target and LUN the later passes use.
 */
#include "initiator.h"

#include "ex_log.h"
#include "ex_text.h"
#include <libidm/keys.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define MAX_SENDTARGETS_KEYS 512
#define MAX_LUNS	     64

/* The SendTargets answer: each target listed (unless quiet), the first
 * one taken when none was named. true when the named one is listed. */
static bool take_targets(const struct ini_opts *o, const struct ex_kv *kv,
			 int n, char *target, size_t target_len)
{
	bool found = false;

	for (int i = 0; i < n; i++) {
		if (!strcmp(kv[i].key, IDM_KEY_TARGET_NAME)) {
			if (!o->quiet)
				printf("Target: %s\n", kv[i].val);
			if (!target[0] && strlen(kv[i].val) < target_len)
				snprintf(target, target_len, "%s", kv[i].val);
			if (!strcmp(kv[i].val, target))
				found = true;
		} else if (!strcmp(kv[i].key, IDM_KEY_TARGET_ADDRESS) && !o->quiet) {
			printf("  Portal: %s\n", kv[i].val);
		}
	}
	return found;
}

/* A discovery session up to its SendTargets answer. */
static int send_targets(struct ini_session *s, char **text, size_t *len)
{
	int rc = ini_session_connect(s);

	if (rc == 0)
		rc = ini_session_login(s, true, NULL);
	if (rc == 0)
		rc = ini_session_send_targets(s, text, len);
	return rc;
}

int ini_discover(const struct ini_opts *o, idm_ctx *ctx, char *target,
		 size_t target_len)
{
	static struct ex_kv kv[MAX_SENDTARGETS_KEYS];
	struct ini_session s;
	char *text;
	size_t len;
	bool found;
	int n, rc;

	rc = ini_session_init(&s, o, ctx, 0, 1);
	if (rc == 0)
		rc = send_targets(&s, &text, &len);
	if (rc < 0) {
		ex_err("discovery at %s:%s failed: %s", o->portal.host,
		       o->portal.port, s.why[0] ? s.why : idm_strerror(rc));
		ini_session_fini(&s);
		return rc;
	}
	n = ex_text_parse(text, len, kv, MAX_SENDTARGETS_KEYS);
	if (n < 0)
		ex_err("malformed SendTargets answer (%d)", n);
	found = n >= 0 && take_targets(o, kv, n, target, target_len);
	ini_session_logout(&s);
	ini_session_fini(&s);
	if (n < 0)
		return -EPROTO;
	if (!target[0]) {
		ex_err("the target at %s:%s reports no targets", o->portal.host,
		       o->portal.port);
		return -ENOENT;
	}
	if (!found)
		ex_warn("target %s is not among those SendTargets returned",
			target);
	return 0;
}

/* Retry a command the target answers with UNIT ATTENTION (a fresh LUN
 * reports power-on/reset once per I_T nexus). */
static int sync_retry(struct ini_session *s, struct ini_cmd *c)
{
	int rc = 0;

	for (int i = 0; i < 4; i++) {
		int key;

		rc = ini_scsi_sync(s, c);
		if (rc != -EIO || c->status != INI_STATUS_CHECK_CONDITION ||
		    c->sense_len < 3)
			return rc;
		/* sense data in neither format is retried too */
		key = ini_cmd_sense_key(c);
		if (key >= 0 && key != INI_SENSE_UNIT_ATTENTION)
			return rc;
		ex_dbg("unit attention on opcode 0x%02x, retrying", c->cdb[0]);
	}
	return rc;
}

/* TEST UNIT READY until the LUN stops reporting UNIT ATTENTION, so that
 * the commands that follow (benchmark I/O) never see one. */
int ini_clear_ua(struct ini_session *s, int lun)
{
	struct ini_cmd *c = ini_cmd_get(s);
	int rc;

	if (!c)
		return -EBUSY;
	ini_cdb_test_unit_ready(c);
	c->lun = ini_lun_encode(lun);
	rc = sync_retry(s, c);
	if (rc < 0) {
		char err[128];

		ex_err("session %d: TEST UNIT READY: %s", s->index,
		       ini_cmd_strerror(c, err, sizeof(err)));
	}
	ini_cmd_put(c);
	return rc;
}

/*
 * Bytes of Data-In the command returned. The residual says how much the
 * target meant to send; the provider's count of placed bytes, when it has
 * one, bounds it. On iSER Data-In arrives by RDMA Write, which the
 * initiator never sees, so the iSER provider reports 0 placed bytes for an
 * underflowed command: then the residual is all we have, and run() zeroed
 * the buffer so that a lying target yields zeros, not stale data.
 */
static uint32_t got(const struct ini_cmd *c)
{
	uint32_t n = c->len;

	if (c->rsp_flags & IDM_ISCSI_RSP_UNDERFLOW)
		n = c->residual < c->len ? c->len - c->residual : 0;
	if (c->data_received && c->data_received < n)
		n = c->data_received;
	return n;
}

static const char *type_name(unsigned t)
{
	switch (t) {
	case 0x00:
		return "disk";
	case 0x01:
		return "tape";
	case 0x05:
		return "cd/dvd";
	case 0x0c:
		return "controller";
	case 0x0d:
		return "enclosure";
	case 0x1f:
		return "no device";
	default:
		return "other";
	}
}

/* Copy a fixed-width SCSI ASCII field, trimmed, replacing non-printables. */
static void ascii(char *out, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = (p[i] >= 0x20 && p[i] < 0x7f) ? (char)p[i] : '.';
	while (i > 0 && out[i - 1] == ' ')
		i--;
	out[i] = '\0';
}

static int run(struct ini_session *s, struct ini_cmd *c, int lun)
{
	c->lun = ini_lun_encode(lun);
	c->buf = s->ctl_buf;
	c->buf_off = 0;
	if (c->len <= INI_CTL_BUF)
		memset(idm_buf_addr(s->ctl_buf), 0, c->len);
	return sync_retry(s, c);
}

/* INQUIRY data (SPC-4 6.6.2): peripheral qualifier and device type in
 * byte 0, then the vendor, product and revision fields. */
#define INQ_TYPE_MASK       0x1f
#define INQ_QUALIFIER_SHIFT 5
#define INQ_TYPE_DISK       0x00
#define INQ_VENDOR          8  /* 8 bytes */
#define INQ_PRODUCT         16 /* 16 bytes */
#define INQ_REVISION        32 /* 4 bytes */
#define INQ_MIN_LEN         36

static void quiet_newline(const struct ini_session *s)
{
	if (!s->o->quiet)
		printf("\n");
}

/* A probe command that failed or came back short: said, and its code. */
static int probe_failed(struct ini_cmd *c, const char *what, int lun, int rc)
{
	char err[128];

	ex_err("%s of LUN %d: %s", what, lun,
	       rc < 0 ? ini_cmd_strerror(c, err, sizeof(err)) : "short data");
	return rc < 0 ? rc : -EPROTO;
}

/* INQUIRY, printed; 1 when the LUN is no disk we can use. */
static int probe_inquiry(struct ini_session *s, struct ini_cmd *c, int lun)
{
	const uint8_t *buf = idm_buf_addr(s->ctl_buf);
	char vendor[9], product[17], rev[5];
	unsigned type;
	int rc;

	ini_cdb_inquiry(c, 96);
	rc = run(s, c, lun);
	if (rc < 0 || got(c) < INQ_MIN_LEN)
		return probe_failed(c, "INQUIRY", lun, rc);
	type = buf[0] & INQ_TYPE_MASK;
	ascii(vendor, buf + INQ_VENDOR, 8);
	ascii(product, buf + INQ_PRODUCT, 16);
	ascii(rev, buf + INQ_REVISION, 4);
	if (!s->o->quiet)
		printf("LUN %d: type 0x%02x (%s) vendor '%s' product '%s' rev "
		       "'%s'",
		       lun, type, type_name(type), vendor, product, rev);
	if (type != INQ_TYPE_DISK || (buf[0] >> INQ_QUALIFIER_SHIFT) != 0) {
		quiet_newline(s);
		return 1;
	}
	return 0;
}

/* READ CAPACITY(16) parameter data (SBC-3 5.16.2) */
#define RC16_LAST_LBA  0 /* 8 bytes */
#define RC16_BLOCK_LEN 8 /* 4 bytes */
#define RC16_MIN_LEN   12

/* READ CAPACITY(16) into li: the last LBA and the block length. */
static int probe_capacity(struct ini_session *s, struct ini_cmd *c, int lun,
			  struct ini_lun_info *li)
{
	const uint8_t *buf = idm_buf_addr(s->ctl_buf);
	int rc;

	ini_cdb_read_capacity16(c, 32);
	rc = run(s, c, lun);
	if (rc < 0 || got(c) < RC16_MIN_LEN) {
		quiet_newline(s);
		return probe_failed(c, "READ CAPACITY(16)", lun, rc);
	}
	li->blocks = idm_iscsi_get64(buf + RC16_LAST_LBA) + 1;
	li->block_size = idm_iscsi_get32(buf + RC16_BLOCK_LEN);
	return 0;
}

/* A power of two from 512 bytes to 1 MiB, and at least one block. */
static bool capacity_usable(const struct ini_lun_info *li)
{
	return li->block_size >= 512 && li->block_size <= (1u << 20) &&
	       !(li->block_size & (li->block_size - 1)) && li->blocks != 0;
}

static int probe_one(struct ini_session *s, int lun, struct ini_lun_info *li)
{
	struct ini_cmd *c = ini_cmd_get(s);
	int rc;

	if (!c)
		return -EBUSY;
	memset(li, 0, sizeof(*li));
	li->lun = lun;
	rc = probe_inquiry(s, c, lun);
	if (rc == 0)
		rc = probe_capacity(s, c, lun, li);
	ini_cmd_put(c);
	if (rc != 0)
		return rc; /* 1: not a disk we can use */
	if (!capacity_usable(li)) {
		quiet_newline(s);
		ex_err("LUN %d: unusable capacity (%llu blocks of %u bytes)",
		       lun, (unsigned long long)li->blocks, li->block_size);
		return -EPROTO;
	}
	if (!s->o->quiet)
		printf(", %llu blocks of %u bytes (%.1f MiB)\n",
		       (unsigned long long)li->blocks, li->block_size,
		       (double)li->blocks * li->block_size / 1048576.0);
	return 0;
}

/* The LUN list of REPORT LUNS data (SPC-4 6.33): a 4-byte length, 4
 * reserved bytes, then 8 bytes a LUN, its addressing method in the top
 * two bits (SAM-5 4.7). */
#define RL_HEADER        8
#define RL_ENTRY         8
#define LUN_METHOD_SHIFT 6
#define LUN_PERIPHERAL   0
#define LUN_FLAT         1
#define LUN_FLAT_MASK    0x3f

static int parse_lun_list(const uint8_t *buf, uint32_t got_len, int *luns)
{
	uint32_t list = idm_iscsi_get32(buf), avail = got_len - RL_HEADER;
	int nluns = 0;

	if (list > avail)
		list = avail;
	for (uint32_t off = 0; off + RL_ENTRY <= list && nluns < MAX_LUNS;
	     off += RL_ENTRY) {
		const uint8_t *e = buf + RL_HEADER + off;
		unsigned method = e[0] >> LUN_METHOD_SHIFT;

		if (method == LUN_PERIPHERAL)
			luns[nluns++] = e[1];
		else if (method == LUN_FLAT)
			luns[nluns++] = ((e[0] & LUN_FLAT_MASK) << 8) | e[1];
		else
			ex_warn("LUN with addressing method %u skipped",
				method);
	}
	return nluns;
}

/* REPORT LUNS, or the LUN asked for (0 by default) when it fails. */
static int report_luns(struct ini_session *s, int want, int *luns)
{
	struct ini_cmd *c = ini_cmd_get(s);
	char err[128];
	int nluns, rc;

	if (!c)
		return -EBUSY;
	ini_cdb_report_luns(c, RL_HEADER + RL_ENTRY * MAX_LUNS);
	rc = run(s, c, 0);
	if (rc == 0 && got(c) >= RL_HEADER) {
		nluns = parse_lun_list(idm_buf_addr(s->ctl_buf), got(c), luns);
	} else {
		ex_warn("REPORT LUNS: %s; assuming LUN %d",
			ini_cmd_strerror(c, err, sizeof(err)),
			want < 0 ? 0 : want);
		luns[0] = want < 0 ? 0 : want;
		nluns = 1;
	}
	ini_cmd_put(c);
	return nluns;
}

static void print_luns(const struct ini_session *s, const int *luns,
		       int nluns)
{
	if (s->o->quiet)
		return;
	printf("LUNs:");
	for (int i = 0; i < nluns; i++)
		printf(" %d", luns[i]);
	printf("\n");
}

/* Probe the listed LUNs; the first usable disk (or `want`) is chosen,
 * *chosen -1 when none is. -errno when the session failed meanwhile. */
static int choose_lun(struct ini_session *s, const int *luns, int nluns,
		      int want, struct ini_lun_info *li, int *chosen)
{
	*chosen = -1;
	for (int i = 0; i < nluns; i++) {
		struct ini_lun_info tmp;
		int rc;

		/* quiet mode only needs the LUN it will use */
		if (s->o->quiet && want >= 0 && luns[i] != want)
			continue;
		rc = probe_one(s, luns[i], &tmp);
		if (s->state != INI_S_FFP)
			return s->fail ? s->fail : -EIO;
		if (rc == 0 && *chosen < 0 && (want < 0 || want == luns[i])) {
			*chosen = luns[i];
			*li = tmp;
		}
		if (s->o->quiet && *chosen >= 0)
			break;
	}
	/* a LUN the report did not list: try it anyway */
	if (*chosen < 0 && want >= 0 && probe_one(s, want, li) == 0)
		*chosen = want;
	return 0;
}

int ini_probe_lun(struct ini_session *s, int *lun, struct ini_lun_info *li)
{
	int luns[MAX_LUNS];
	int nluns = report_luns(s, *lun, luns);
	int chosen, rc;

	if (nluns < 0)
		return nluns;
	print_luns(s, luns, nluns);
	rc = choose_lun(s, luns, nluns, *lun, li, &chosen);
	if (rc < 0)
		return rc;
	if (chosen < 0) {
		ex_err("no usable disk LUN%s",
		       *lun >= 0 ? " with that number" : "");
		return -ENODEV;
	}
	*lun = chosen;
	return 0;
}
