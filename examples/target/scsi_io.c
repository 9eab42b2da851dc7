/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The data path of one SCSI command: decode it (scsi_prepare), move its
 * data with Get_Data / Put_Data, execute it, and report status with the
 * residuals of the Implementer's Guide (RFC 5048 / RFC 7143) 3.1: the
 * residual compares the command's SCSI transfer length (SPDTL) with the
 * Expected Data Transfer Length (EDTL) of the matching direction.
 *
 * RAM LUNs move data straight between the LUN memory and the wire (the
 * LUN is one registered idm_buf); file and RBD LUNs go through a pooled
 * buffer, which the backend reads into or writes from.
 *
 * Execution may wait for the LUN (an RBD LUN completes on librbd's
 * threads): the task is then TS_BACKEND, and exec_done() goes on when
 * the loop drains its completion queue. Such a task is freed only there,
 * also when it was aborted or its connection ended meanwhile (t->c NULL):
 * the backend still writes into, or reads from, its buffer.
 */
#include "target.h"
#include "ex_log.h"

#include <stddef.h>
#include <string.h>

/* Residual flags and count for the SCSI Response or the final Data-In. */
static void residual(const struct ttask *t, uint8_t *flags, uint32_t *count)
{
	const struct scsi_cmd *sc = &t->sc;
	bool rd = t->bhs[1] & IDM_ISCSI_CMD_READ, wr = t->bhs[1] & IDM_ISCSI_CMD_WRITE;
	uint32_t spdtl = 0, edtl = t->edtl;

	*flags = 0;
	*count = 0;
	if (sc->status == SAM_GOOD || sc->residual_anyway) {
		switch (sc->kind) {
		case SCK_READ: case SCK_IN:
			spdtl = sc->spdtl_in;
			if (!rd)
				edtl = 0;
			break;
		case SCK_WRITE: case SCK_OUT:
			spdtl = sc->spdtl_out;
			if (!wr)
				edtl = 0;
			break;
		default:
			break;
		}
	}
	if (spdtl > edtl) {
		*flags = IDM_ISCSI_RSP_OVERFLOW;
		*count = spdtl - edtl;
	} else if (spdtl < edtl) {
		*flags = IDM_ISCSI_RSP_UNDERFLOW;
		*count = edtl - spdtl;
	}
}

static void respond(struct ttask *t)
{
	struct tconn *c = t->c;
	uint8_t r[IDM_ISCSI_BHS_LEN] = { 0 };
	uint8_t data[2 + sizeof(t->sc.sense)];
	uint32_t count, dlen = 0;
	uint8_t flags;

	residual(t, &flags, &count);
	r[0] = IDM_ISCSI_OP_SCSI_RSP;
	r[1] = IDM_ISCSI_FLAG_FINAL | flags;
	r[2] = IDM_ISCSI_RESPONSE_COMPLETED;
	r[3] = t->sc.status;
	idm_iscsi_put32(r + IDM_ISCSI_BHS_ITT, t->itt);
	conn_fill_sn(c, r, true);
	idm_iscsi_put32(r + IDM_ISCSI_BHS_RESIDUAL, count);
	if (t->sc.sense_len) {
		/* data segment: SenseLength, then the sense data */
		idm_iscsi_put16(data, (uint16_t)t->sc.sense_len);
		memcpy(data + 2, t->sc.sense, t->sc.sense_len);
		dlen = 2 + t->sc.sense_len;
	}
	if (t->sc.status != SAM_GOOD)
		ex_dbg("%s: ITT 0x%x op 0x%02x status 0x%02x sense %x/%02x/%02x",
		       idm_conn_peer_name(c->ic), t->itt, t->sc.cdb[0], t->sc.status,
		       t->sc.sense_len ? (t->sc.sense[0] == 0x72 ? t->sc.sense[1] : t->sc.sense[2]) & 0xf : 0,
		       t->sc.sense[0] == 0x72 ? t->sc.sense[2] : t->sc.sense[12],
		       t->sc.sense[0] == 0x72 ? t->sc.sense[3] : t->sc.sense[13]);
	task_done(t);
	conn_send(c, r, dlen ? data : NULL, dlen);
}

/* Send `len` bytes of read data from ib[off] with the status in the last
 * Data-In (no sense data, so it may ride there: RFC 7143 11.7.4). */
static void put_data(struct ttask *t, idm_buf *ib, size_t off, uint32_t len)
{
	struct tconn *c = t->c;
	uint8_t d[IDM_ISCSI_BHS_LEN] = { 0 };
	uint32_t count;
	uint8_t flags;
	int r;

	residual(t, &flags, &count);
	d[0] = IDM_ISCSI_OP_DATA_IN;
	d[1] = IDM_ISCSI_DATAIN_STATUS | flags; /* O/U bits share positions with the SCSI Response */
	d[3] = t->sc.status;
	memcpy(d + IDM_ISCSI_BHS_LUN, t->bhs + IDM_ISCSI_BHS_LUN, 8);
	idm_iscsi_put32(d + IDM_ISCSI_BHS_ITT, t->itt);
	conn_fill_sn(c, d, true);
	idm_iscsi_put32(d + IDM_ISCSI_BHS_RESIDUAL, count);
	t->state = TS_DATAIN;
	r = idm_put_data(t->it, d, ib, off, 0, len, 0);
	if (r < 0) {
		ex_warn("%s: Put_Data: %s", idm_conn_peer_name(c->ic), idm_strerror(r));
		task_done(t);
		conn_close(c, "Put_Data failed");
	}
}

static void get_data(struct ttask *t, idm_buf *ib, size_t off, uint32_t len)
{
	struct tconn *c = t->c;
	uint8_t r2t[IDM_ISCSI_BHS_LEN] = { 0 };
	int r;

	r2t[0] = IDM_ISCSI_OP_R2T;
	r2t[1] = IDM_ISCSI_FLAG_FINAL;
	memcpy(r2t + IDM_ISCSI_BHS_LUN, t->bhs + IDM_ISCSI_BHS_LUN, 8);
	idm_iscsi_put32(r2t + IDM_ISCSI_BHS_ITT, t->itt);
	conn_fill_sn(c, r2t, false);
	t->state = TS_DATAOUT;
	r = idm_get_data(t->it, r2t, ib, off, 0, len, 0);
	if (r < 0) {
		ex_warn("%s: Get_Data: %s", idm_conn_peer_name(c->ic), idm_strerror(r));
		task_done(t);
		conn_close(c, "Get_Data failed");
	}
}

/* Bytes the initiator sends without an R2T (RFC 7143 4.2.5.2): the
 * immediate data, plus up to FirstBurstLength when InitialR2T=No and the
 * command did not end the unsolicited sequence (F=1). */
static uint32_t unsolicited_len(const struct ttask *t)
{
	const struct ex_params *p = &t->c->sess->p;
	uint32_t n = idm_iscsi_bhs_data_len(t->bhs);

	if (!(t->bhs[1] & IDM_ISCSI_FLAG_FINAL) && !p->initial_r2t)
		n = p->first_burst;
	return n < t->edtl ? n : t->edtl;
}

/* Finish with the status in t->sc, first taking in unsolicited data
 * still on its way so the data stream stays in step. */
static void finish(struct ttask *t)
{
	uint32_t unsol = (t->bhs[1] & IDM_ISCSI_CMD_WRITE) ? unsolicited_len(t) : 0;

	if (unsol && !t->drain && !t->buf) {
		t->buf = pbuf_get(unsol);
		if (t->buf) {
			t->drain = true;
			get_data(t, t->buf->ib, 0, unsol);
			return;
		}
	}
	respond(t);
}

/* The command has executed: its Data-In and status, or its status */
static void after_exec(struct ttask *t)
{
	if (t->sc.kind == SCK_NODATA) {
		finish(t);
		return;
	}
	if (t->sc.status != SAM_GOOD || !t->sc.in_len) {
		respond(t);
		return;
	}
	put_data(t, t->buf->ib, 0, t->sc.in_len);
}

/* sc->done of a command that waited for its LUN (from lun_cq_drain()) */
static void exec_done(struct scsi_cmd *sc)
{
	struct ttask *t = (struct ttask *)((char *)sc - offsetof(struct ttask, sc));

	if (!t->c) { /* its connection ended meanwhile: libidm forgot it */
		pbuf_put(t->buf);
		ttask_put(t);
		return;
	}
	if (t->aborted) {
		task_done(t);
		tmf_check_all(); /* a TMF may wait for it */
		return;
	}
	after_exec(t);
}

/* Execute; reply now, or when the LUN completes (exec_done()) */
static void exec_and_reply(struct ttask *t)
{
	t->state = TS_BACKEND;
	scsi_exec(&t->sc);
	if (!t->sc.pending)
		after_exec(t);
}

/* Out of buffer memory: let the initiator retry (SAM-5 5.3.1) */
static void busy(struct ttask *t)
{
	t->sc.status = SAM_TASK_SET_FULL;
	t->sc.sense_len = 0;
	finish(t);
}

/* Where the session keeps what it last saw of l's capacity generation. A
 * LUN it first uses starts at the current one: no unit attention for
 * what changed before. Full (LUNs replaced by reloads): entries of LUNs
 * no longer served go. */
static unsigned *cap_seen_of(struct session *s, const struct lun *l)
{
	int n = 0;

	for (int i = 0; i < s->ncap_seen; i++)
		if (s->cap_seen[i].l == l)
			return &s->cap_seen[i].gen;
	if (s->ncap_seen == TGT_MAX_LUNS) {
		for (int i = 0; i < s->ncap_seen; i++)
			for (int j = 0; j < g_tgt.nluns; j++)
				if (g_tgt.luns[j] == s->cap_seen[i].l) {
					s->cap_seen[n++] = s->cap_seen[i];
					break;
				}
		s->ncap_seen = n;
		if (n == TGT_MAX_LUNS)
			return NULL;
	}
	s->cap_seen[s->ncap_seen].l = l;
	s->cap_seen[s->ncap_seen].gen = __atomic_load_n(&l->cap_gen, __ATOMIC_ACQUIRE);
	return &s->cap_seen[s->ncap_seen++].gen;
}

/* The command as the SCSI emulation takes it, on the LUN `l` */
static void fill_cmd(struct ttask *t, struct lun *l)
{
	struct scsi_cmd *sc = &t->sc;
	struct session *s = t->c->sess;

	memset(sc, 0, sizeof(*sc));
	sc->cdb = t->bhs + IDM_ISCSI_CMD_CDB;
	sc->lun = l;
	sc->lunmask = session_lunmask(s);
	sc->luns = g_tgt.luns;
	sc->nluns = g_tgt.nluns;
	sc->max_io = TGT_MAX_IO;
	/* Block Limits: one negotiated burst is the optimal transfer */
	sc->opt_io = s->p.max_burst;
	sc->edtl = t->edtl;
	sc->nexus = s;
	sc->iport = s->iport;
	sc->cq = &g_loop->cq;
	sc->done = exec_done;
	sc->cap_seen = l ? cap_seen_of(t->c->sess, l) : NULL;
}

/* A command returning data: READ, or parameter data we generate */
static void start_in(struct ttask *t, struct lun *l)
{
	struct scsi_cmd *sc = &t->sc;
	uint32_t n = (t->bhs[1] & IDM_ISCSI_CMD_READ) ? t->edtl : 0;

	if (sc->spdtl_in < n)
		n = sc->spdtl_in;
	/* parameter data we generate is small whatever the allocation
	 * length says; the rest is reported as residual */
	if (sc->kind == SCK_IN && n > SCSI_IN_MAX)
		n = SCSI_IN_MAX;
	if (sc->kind == SCK_READ && l->ram && n) {
		/* zero copy: straight from the LUN memory */
		put_data(t, l->ib, sc->lba * l->bs, n);
		return;
	}
	if (sc->kind == SCK_READ && !n) {
		finish(t);
		return;
	}
	t->buf = pbuf_get(n ? n : 1);
	if (!t->buf)
		return busy(t);
	sc->buf = t->buf->addr;
	sc->buf_len = n;
	exec_and_reply(t);
}

/* A command taking data: WRITE, or parameter data (UNMAP, MODE SELECT...) */
static void start_out(struct ttask *t, struct lun *l)
{
	struct scsi_cmd *sc = &t->sc;
	bool wr = t->bhs[1] & IDM_ISCSI_CMD_WRITE;
	uint32_t unsol = wr ? unsolicited_len(t) : 0, get;
	uint32_t n = wr ? t->edtl : 0;

	if (sc->spdtl_out < n)
		n = sc->spdtl_out;
	t->want_out = n;
	get = n > unsol ? n : unsol; /* take all unsolicited data too */
	if (!get) {
		sc->buf = NULL;
		sc->buf_len = 0;
		exec_and_reply(t);
		return;
	}
	if (sc->kind == SCK_WRITE && l->ram && get == n && n % l->bs == 0) {
		/* zero copy: the initiator's data lands in the LUN */
		sc->buf = l->mem + sc->lba * l->bs;
		get_data(t, l->ib, sc->lba * l->bs, n);
		return;
	}
	t->buf = pbuf_get(get);
	if (!t->buf)
		return busy(t);
	sc->buf = t->buf->addr;
	get_data(t, t->buf->ib, 0, get);
}

void scsi_io_start(struct ttask *t)
{
	struct lun *l = session_lun(t->c->sess, t->lun_id);

	fill_cmd(t, l);
	if (scsi_prepare(&t->sc) < 0)
		return finish(t);
	switch (t->sc.kind) {
	case SCK_NODATA:
		exec_and_reply(t);
		return;
	case SCK_READ:
	case SCK_IN:
		return start_in(t, l);
	case SCK_WRITE:
	case SCK_OUT:
		return start_out(t, l);
	}
}

void scsi_io_data_done(idm_task *it, enum idm_data_dir dir, uint32_t off,
		       uint32_t len, uint32_t sn, int status, void *arg)
{
	struct ttask *t = idm_task_get_arg(it);
	struct session *s;

	(void)off; (void)len; (void)sn; (void)arg;
	if (!t)
		return;
	s = t->c->sess;
	if (t->aborted || status < 0) {
		if (status < 0 && !t->aborted)
			ex_warn("%s: ITT 0x%x data transfer failed: %s",
				idm_conn_peer_name(t->c->ic), t->itt, idm_strerror(status));
		task_done(t);
		if (s)
			tmf_check_all();
		return;
	}
	if (dir == IDM_DATA_IN) {
		/* status went with the last Data-In */
		task_done(t);
		return;
	}
	if (t->drain) {
		respond(t);
		return;
	}
	t->sc.buf_len = t->want_out;
	exec_and_reply(t);
}
