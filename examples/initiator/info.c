/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What idm-initiator prints about the target: the SendTargets answer of a
 * discovery session, the LUNs of REPORT LUNS, and INQUIRY and READ
 * CAPACITY(16) of each. Also picks the target and LUN the later passes use.
 */
#include "initiator.h"

#include "ex_log.h"
#include "ex_text.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define MAX_SENDTARGETS_KEYS 512
#define MAX_LUNS	     64

int ini_discover(const struct ini_opts *o, idm_ctx *ctx, char *target,
		 size_t target_len)
{
	static struct ex_kv kv[MAX_SENDTARGETS_KEYS];
	struct ini_session s;
	char *text;
	size_t len;
	bool found = false;
	int n, rc;

	rc = ini_session_init(&s, o, ctx, 0, 1);
	if (rc == 0)
		rc = ini_session_connect(&s);
	if (rc == 0)
		rc = ini_session_login(&s, true, NULL);
	if (rc == 0)
		rc = ini_session_send_targets(&s, &text, &len);
	if (rc < 0) {
		ex_err("discovery at %s:%s failed: %s", o->portal.host,
		       o->portal.port, s.why[0] ? s.why : idm_strerror(rc));
		ini_session_fini(&s);
		return rc;
	}
	n = ex_text_parse(text, len, kv, MAX_SENDTARGETS_KEYS);
	if (n < 0) {
		ex_err("malformed SendTargets answer (%d)", n);
		ini_session_logout(&s);
		ini_session_fini(&s);
		return -EPROTO;
	}
	for (int i = 0; i < n; i++) {
		if (!strcmp(kv[i].key, "TargetName")) {
			if (!o->quiet)
				printf("Target: %s\n", kv[i].val);
			if (!target[0] && strlen(kv[i].val) < target_len)
				snprintf(target, target_len, "%s", kv[i].val);
			if (!strcmp(kv[i].val, target))
				found = true;
		} else if (!strcmp(kv[i].key, "TargetAddress") && !o->quiet) {
			printf("  Portal: %s\n", kv[i].val);
		}
	}
	ini_session_logout(&s);
	ini_session_fini(&s);
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
		rc = ini_scsi_sync(s, c);
		if (rc != -EIO || c->status != 0x02 || c->sense_len < 3)
			return rc;
		if ((c->sense[0] & 0x7e) == 0x70 && (c->sense[2] & 0xf) != 6)
			return rc;
		if ((c->sense[0] & 0x7e) == 0x72 && (c->sense[1] & 0xf) != 6)
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

static int probe_one(struct ini_session *s, int lun, struct ini_lun_info *li)
{
	const uint8_t *buf = idm_buf_addr(s->ctl_buf);
	struct ini_cmd *c = ini_cmd_get(s);
	char vendor[9], product[17], rev[5], err[128];
	unsigned type;
	int rc;

	if (!c)
		return -EBUSY;
	memset(li, 0, sizeof(*li));
	li->lun = lun;
	ini_cdb_inquiry(c, 96);
	rc = run(s, c, lun);
	if (rc < 0 || got(c) < 36) {
		ex_err("INQUIRY of LUN %d: %s", lun,
		       rc < 0 ? ini_cmd_strerror(c, err, sizeof(err))
			      : "short data");
		ini_cmd_put(c);
		return rc < 0 ? rc : -EPROTO;
	}
	type = buf[0] & 0x1f;
	ascii(vendor, buf + 8, 8);
	ascii(product, buf + 16, 16);
	ascii(rev, buf + 32, 4);
	if (!s->o->quiet)
		printf("LUN %d: type 0x%02x (%s) vendor '%s' product '%s' rev "
		       "'%s'",
		       lun, type, type_name(type), vendor, product, rev);
	if (type != 0x00 || (buf[0] >> 5) != 0) {
		if (!s->o->quiet)
			printf("\n");
		ini_cmd_put(c);
		return 1; /* not a disk we can use */
	}
	ini_cdb_read_capacity16(c, 32);
	rc = run(s, c, lun);
	if (rc < 0 || got(c) < 12) {
		if (!s->o->quiet)
			printf("\n");
		ex_err("READ CAPACITY(16) of LUN %d: %s", lun,
		       rc < 0 ? ini_cmd_strerror(c, err, sizeof(err))
			      : "short data");
		ini_cmd_put(c);
		return rc < 0 ? rc : -EPROTO;
	}
	li->blocks = idm_iscsi_get64(buf) + 1;
	li->block_size = idm_iscsi_get32(buf + 8);
	ini_cmd_put(c);
	if (li->block_size < 512 || li->block_size > (1u << 20) ||
	    (li->block_size & (li->block_size - 1)) || li->blocks == 0) {
		if (!s->o->quiet)
			printf("\n");
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

int ini_probe_lun(struct ini_session *s, int *lun, struct ini_lun_info *li)
{
	const uint8_t *buf = idm_buf_addr(s->ctl_buf);
	int luns[MAX_LUNS];
	int nluns = 0, chosen = -1, rc;
	struct ini_cmd *c = ini_cmd_get(s);
	char err[128];

	if (!c)
		return -EBUSY;
	ini_cdb_report_luns(c, 8 + 8 * MAX_LUNS);
	rc = run(s, c, 0);
	if (rc == 0 && got(c) >= 8) {
		uint32_t list = idm_iscsi_get32(buf), avail = got(c) - 8;

		if (list > avail)
			list = avail;
		for (uint32_t off = 0; off + 8 <= list && nluns < MAX_LUNS;
		     off += 8) {
			const uint8_t *e = buf + 8 + off;
			unsigned method = e[0] >> 6;

			if (method == 0)
				luns[nluns++] = e[1];
			else if (method == 1)
				luns[nluns++] = ((e[0] & 0x3f) << 8) | e[1];
			else
				ex_warn("LUN with addressing method %u skipped",
					method);
		}
	} else {
		ex_warn("REPORT LUNS: %s; assuming LUN %d",
			ini_cmd_strerror(c, err, sizeof(err)),
			*lun < 0 ? 0 : *lun);
		luns[nluns++] = *lun < 0 ? 0 : *lun;
	}
	ini_cmd_put(c);
	if (!s->o->quiet) {
		printf("LUNs:");
		for (int i = 0; i < nluns; i++)
			printf(" %d", luns[i]);
		printf("\n");
	}
	for (int i = 0; i < nluns; i++) {
		struct ini_lun_info tmp;

		/* quiet mode only needs the LUN it will use */
		if (s->o->quiet && *lun >= 0 && luns[i] != *lun)
			continue;
		rc = probe_one(s, luns[i], &tmp);
		if (s->state != INI_S_FFP)
			return s->fail ? s->fail : -EIO;
		if (rc == 0 && chosen < 0 && (*lun < 0 || *lun == luns[i])) {
			chosen = luns[i];
			*li = tmp;
		}
		if (s->o->quiet && chosen >= 0)
			break;
	}
	if (chosen < 0 && *lun >= 0) {
		/* a LUN the report did not list: try it anyway */
		rc = probe_one(s, *lun, li);
		if (rc == 0)
			chosen = *lun;
	}
	if (chosen < 0) {
		ex_err("no usable disk LUN%s",
		       *lun >= 0 ? " with that number" : "");
		return -ENODEV;
	}
	*lun = chosen;
	return 0;
}
