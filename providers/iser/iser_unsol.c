/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A target task's immediate and unsolicited data (RFC 7145 7.3.4): it
 * arrives in Sends and is copied from the receive buffer (the one
 * unavoidable copy) into the Get_Data range waiting for it, or staged
 * until the caller asks for it.
 */
#include "iser_unsol.h"
#include "iser_dop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libidm/iscsi.h>

static int stage(struct iser_task *it, uint32_t off, const uint8_t *src,
		 uint32_t n)
{
	if (!it->staged) {
		/* only when the caller has not called Get_Data yet: a
		 * well-behaved target never gets here (idm.h, Get_Data) */
		it->staged = malloc(it->unsol_len ? it->unsol_len : 1);
		if (!it->staged)
			return -ENOMEM;
	}
	memcpy(it->staged + off, src, n);
	if (off + n > it->staged_len)
		it->staged_len = off + n;
	return 0;
}

void iser_tgt_cmd_done(struct iser_conn *ic, struct idm_task *t)
{
	struct iser_task *it = iser_task(t);
	const uint8_t *imm = it->imm_now;

	it->imm_now = NULL;
	/* Get_Data did not take the immediate data during control_notify:
	 * keep a copy until it does. */
	if (imm && it->imm_len && !it->imm_taken &&
	    stage(it, 0, imm, it->imm_len) < 0)
		iser_conn_fail(ic, -ENOMEM, "no memory to stage immediate data");
}

/* Copy [from, to) of the command's unsolicited data that is already here
 * into the Get_Data destination. Returns the bytes copied. */
uint32_t iser_unsol_copy(struct iser_task *it, struct iser_dop *d,
			 uint32_t from, uint32_t to)
{
	uint32_t n = 0, e;

	if (from < it->imm_len) {
		e = to < it->imm_len ? to : it->imm_len;
		if (it->imm_now) {
			memcpy(d->dst + (from - d->offset), it->imm_now + from,
			       e - from);
			if (from == 0 && e == it->imm_len)
				it->imm_taken = true;
		} else if (it->staged && it->staged_len >= e) {
			memcpy(d->dst + (from - d->offset), it->staged + from,
			       e - from);
		} else {
			return 0;
		}
		n += e - from;
		from = e;
	}
	if (from < to && it->staged && it->staged_len > from) {
		e = to < it->staged_len ? to : it->staged_len;
		memcpy(d->dst + (from - d->offset), it->staged + from, e - from);
		n += e - from;
	}
	return n;
}

int iser_tgt_data_out(struct iser_conn *ic, const uint8_t *bhs,
		      const uint8_t *data, uint32_t dlen)
{
	struct idm_task *t = idm_prov_task_find(ic->conn, iscsi_bhs_itt(bhs));
	uint32_t off = iscsi_get32(bhs + ISCSI_BHS_BUF_OFFSET);
	uint32_t covered = 0;
	struct iser_dop *done[ISER_TASK_DOPS];
	struct iser_task *it;
	int i, n_done = 0, r = 0;

	if (iscsi_get32(bhs + ISCSI_BHS_TTT) != ISCSI_RESERVED_TAG)
		return -EPROTO; /* solicited Data-Out never exists on iSER */
	if (!t)
		return 0; /* task already ended (aborted): drop its data */
	it = iser_task(t);
	if (off < it->imm_len || off > it->unsol_len ||
	    dlen > it->unsol_len - off || off != it->placed)
		return -EPROTO; /* outside the unsolicited burst, or out of order */
	it->placed += dlen;
	ic->stat_unsol_sends++;
	/* Place into every Get_Data range waiting for these bytes first,
	 * stage what none of them wanted, and only then tell the caller:
	 * a Get_Data it issues from Data_Completion_Notify (the next range
	 * of a split transfer) must find the rest of this PDU staged. */
	for (i = 0; i < ISER_TASK_DOPS; i++) {
		struct iser_dop *d = &it->dops[i];
		uint32_t a, b;

		if (!d->used || d->dir != IDM_DATA_OUT)
			continue;
		a = off > d->offset ? off : d->offset;
		b = off + dlen < d->offset + d->length ? off + dlen
						      : d->offset + d->length;
		if (a >= b)
			continue;
		memcpy(d->dst + (a - d->offset), data + (a - off), b - a);
		covered += b - a;
		d->remaining = b - a > d->remaining ? 0 : d->remaining - (b - a);
		if (d->remaining == 0)
			done[n_done++] = d;
	}
	if (covered < dlen)
		r = stage(it, off, data, dlen);
	for (i = 0; i < n_done && ic->state == ISER_UP && idm_prov_task_active(t);
	     i++)
		if (done[i]->used && done[i]->remaining == 0)
			iser_dop_finish(ic, done[i]);
	return r;
}

void iser_unsol_free(struct iser_task *it)
{
	free(it->staged);
	it->staged = NULL;
	it->staged_len = 0;
	it->imm_now = NULL;
}
