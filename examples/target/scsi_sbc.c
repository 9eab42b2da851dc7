/* SPDX-License-Identifier: BSD-2-Clause */
/* SBC-3 block commands: READ/WRITE 6/10/12/16, WRITE AND VERIFY, VERIFY,
 * READ CAPACITY 10/16, GET LBA STATUS, SYNCHRONIZE CACHE, PRE-FETCH,
 * WRITE SAME 10/16, UNMAP, COMPARE AND WRITE and ORWRITE(16). */
#include "scsi.h"

#include <string.h>

static int bad_cdb(struct scsi_cmd *sc)
{
	scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	return -1;
}

/* LBA range check shared by every medium-access command. */
static int check_range(struct scsi_cmd *sc, uint64_t lba, uint64_t n)
{
	uint64_t nb = lun_nblocks(sc->lun);

	if (lba > nb || n > nb - lba) {
		scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
		return -1;
	}
	return 0;
}

/* SBC-3 4.11: WRITE PROTECTED (27h/00h) for a LUN served read-only,
 * LOGICAL UNIT SOFTWARE WRITE PROTECTED (27h/02h) for the SWP bit. */
#define ASC_WRITE_PROTECTED_MEDIUM 0x2700

static int write_protected(struct scsi_cmd *sc)
{
	if (lun_write_protected(sc->lun)) {
		scsi_sense(sc, SK_DATA_PROTECT, sc->lun->ro ? ASC_WRITE_PROTECTED_MEDIUM
							    : ASC_WRITE_PROTECTED);
		return 1;
	}
	return 0;
}

/* Decode LBA and transfer length of the READ/WRITE/VERIFY families. */
static void decode_rw(const uint8_t *cdb, uint64_t *lba, uint32_t *n)
{
	switch (cdb[0] >> 5) {
	case 0: /* 6-byte */
		*lba = ((uint64_t)(cdb[1] & 0x1f) << 16) | be16(cdb + 2);
		*n = cdb[4] ? cdb[4] : 256;
		break;
	case 1: /* 10-byte */
		*lba = be32(cdb + 2);
		*n = be16(cdb + 7);
		break;
	case 5: /* 12-byte */
		*lba = be32(cdb + 2);
		*n = be32(cdb + 6);
		break;
	default: /* 16-byte */
		*lba = be64(cdb + 2);
		*n = be32(cdb + 10);
		break;
	}
}

static int prep_rw(struct scsi_cmd *sc, bool write)
{
	const uint8_t *cdb = sc->cdb;
	uint64_t lba;
	uint32_t n;

	decode_rw(cdb, &lba, &n);
	/* RD/WRPROTECT need protection information, which we do not have */
	if (cdb[0] != 0x08 && cdb[0] != 0x0a && (cdb[1] & 0xe0))
		return bad_cdb(sc);
	if (check_range(sc, lba, n) < 0)
		return -1;
	if ((uint64_t)n * sc->lun->bs > sc->max_io)
		return bad_cdb(sc);
	if (write && write_protected(sc))
		return -1;
	sc->lba = lba;
	sc->nblocks = n;
	sc->fua = cdb[0] != 0x08 && cdb[0] != 0x0a && (cdb[1] & 0x08);
	if (write) {
		sc->kind = SCK_WRITE;
		sc->spdtl_out = n * sc->lun->bs;
	} else {
		sc->kind = SCK_READ;
		sc->spdtl_in = n * sc->lun->bs;
	}
	return 0;
}

static int prep_verify(struct scsi_cmd *sc)
{
	const uint8_t *cdb = sc->cdb;
	uint8_t bytchk = (cdb[1] >> 1) & 3;
	uint64_t lba;
	uint32_t n;

	decode_rw(cdb, &lba, &n);
	if ((cdb[1] & 0xe0) || bytchk == 2)
		return bad_cdb(sc);
	if (check_range(sc, lba, n) < 0)
		return -1;
	if ((uint64_t)n * sc->lun->bs > sc->max_io)
		return bad_cdb(sc);
	sc->lba = lba;
	sc->nblocks = n;
	if (bytchk) {
		sc->kind = SCK_OUT;
		sc->spdtl_out = (bytchk == 3 ? (n ? 1 : 0) : n) * sc->lun->bs;
	}
	return 0;
}

static int prep_write_same(struct scsi_cmd *sc)
{
	const uint8_t *cdb = sc->cdb;
	bool ndob = cdb[0] == 0x93 && (cdb[1] & 0x01);
	uint64_t lba = cdb[0] == 0x41 ? be32(cdb + 2) : be64(cdb + 2);
	uint32_t n = cdb[0] == 0x41 ? be16(cdb + 7) : be32(cdb + 10);

	/* WRPROTECT, ANCHOR, PBDATA, LBDATA: not supported */
	if ((cdb[1] & 0xe0) || (cdb[1] & 0x10) || (cdb[1] & 0x06))
		return bad_cdb(sc);
	/* WSNZ=1 in the Block Limits page: zero blocks is refused; more
	 * than MAXIMUM WRITE SAME LENGTH too */
	if (n == 0 || n > SBC_MAX_WS_LEN)
		return bad_cdb(sc);
	if (check_range(sc, lba, n) < 0)
		return -1;
	if (write_protected(sc))
		return -1;
	sc->lba = lba;
	sc->nblocks = n;
	if (!ndob) {
		sc->kind = SCK_OUT;
		sc->spdtl_out = sc->lun->bs;
	}
	return 0;
}

static int prep_caw(struct scsi_cmd *sc)
{
	const uint8_t *cdb = sc->cdb;
	uint64_t lba = be64(cdb + 2);
	uint32_t n = cdb[13];

	if (cdb[1] & 0xe0)
		return bad_cdb(sc);
	if (check_range(sc, lba, n) < 0)
		return -1;
	/* The Data-Out must be exactly the two halves: a NUMBER OF LOGICAL
	 * BLOCKS that disagrees with EDTL (e.g. 256 wrapped to 0) is refused
	 * rather than half-done. */
	if (sc->edtl != 2u * n * sc->lun->bs || 2ull * n * sc->lun->bs > sc->max_io)
		return bad_cdb(sc);
	if (write_protected(sc))
		return -1;
	sc->lba = lba;
	sc->nblocks = n;
	sc->kind = SCK_OUT;
	sc->spdtl_out = 2 * n * sc->lun->bs;
	return 0;
}

/* Parameter data of a known length: READ CAPACITY, GET LBA STATUS */
static int prep_in(struct scsi_cmd *sc, uint32_t len)
{
	sc->kind = SCK_IN;
	sc->spdtl_in = len;
	return 0;
}

static int prep_read_capacity10(struct scsi_cmd *sc)
{
	/* LBA without PMI is an error (SBC-3 5.16) */
	if (!(sc->cdb[8] & 0x01) && be32(sc->cdb + 2))
		return bad_cdb(sc);
	return prep_in(sc, 8);
}

/* SERVICE ACTION IN (16): READ CAPACITY (16) and GET LBA STATUS */
static int prep_service_action_in(struct scsi_cmd *sc)
{
	const uint8_t *cdb = sc->cdb;

	if ((cdb[1] & 0x1f) == 0x10) /* READ CAPACITY (16) */
		return prep_in(sc, be32(cdb + 10));
	if ((cdb[1] & 0x1f) == 0x12) { /* GET LBA STATUS */
		if (be64(cdb + 2) >= lun_nblocks(sc->lun)) {
			scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
			return -1;
		}
		return prep_in(sc, be32(cdb + 10));
	}
	return bad_cdb(sc);
}

/* SYNCHRONIZE CACHE and PRE-FETCH (10/16): only their range to check */
static int prep_range_only(struct scsi_cmd *sc)
{
	const uint8_t *cdb = sc->cdb;

	if (cdb[0] == 0x35 || cdb[0] == 0x34)
		return check_range(sc, be32(cdb + 2), be16(cdb + 7));
	return check_range(sc, be64(cdb + 2), be32(cdb + 10));
}

static int prep_unmap(struct scsi_cmd *sc)
{
	if (sc->cdb[1] & 0x01) /* ANCHOR */
		return bad_cdb(sc);
	if (write_protected(sc))
		return -1;
	sc->kind = SCK_OUT;
	sc->spdtl_out = be16(sc->cdb + 7);
	return 0;
}

/* WRITE (and WRITE AND VERIFY: the verify is a no-op) */
static int prep_write(struct scsi_cmd *sc)
{
	const uint8_t *cdb = sc->cdb;

	if ((cdb[0] & 0x0f) == 0x0e && (cdb[1] & 0x06) == 0x04) /* BYTCHK=10b */
		return bad_cdb(sc);
	return prep_rw(sc, true);
}

/* ORWRITE(16): a read-modify-write, so no zero copy */
static int prep_orwrite(struct scsi_cmd *sc)
{
	if (prep_rw(sc, true) < 0)
		return -1;
	sc->kind = SCK_OUT;
	return 0;
}

int sbc_prepare(struct scsi_cmd *sc)
{
	switch (sc->cdb[0]) {
	case 0x08: case 0x28: case 0xa8: case 0x88:
		return prep_rw(sc, false);
	case 0x0a: case 0x2a: case 0xaa: case 0x8a:
	case 0x2e: case 0xae: case 0x8e:
		return prep_write(sc);
	case 0x2f: case 0xaf: case 0x8f:
		return prep_verify(sc);
	case 0x25:
		return prep_read_capacity10(sc);
	case 0x9e:
		return prep_service_action_in(sc);
	case 0x35: case 0x91: /* SYNCHRONIZE CACHE 10/16 */
	case 0x34: case 0x90: /* PRE-FETCH 10/16 */
		return prep_range_only(sc);
	case 0x41: case 0x93:
		return prep_write_same(sc);
	case 0x42:
		return prep_unmap(sc);
	case 0x89:
		return prep_caw(sc);
	case 0x8b:
		return prep_orwrite(sc);
	}
	scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
	return -1;
}

static void io_error(struct scsi_cmd *sc, bool write)
{
	scsi_sense(sc, SK_MEDIUM_ERROR, write ? ASC_WRITE_ERROR : ASC_READ_ERROR);
}

/*
 * Asynchronous medium access. A command runs as steps: each one looks at
 * the result of the LUN call before it and may set up the next
 * (next_io()); advance() submits it. A call that completes inline (RAM,
 * file) lets advance() go on in its loop, so an UNMAP of 256 descriptors
 * does not recurse; one that completes later re-enters through io_done()
 * from the loop's completion queue. When no step follows, the command
 * has finished: sc->done() unless still inside scsi_exec().
 */
static void io_done(struct lun_io *io);

static void next_io(struct scsi_cmd *sc, enum lun_op op, void *buf, uint64_t off,
		    uint64_t len, void (*then)(struct scsi_cmd *, int))
{
	struct lun_io *io = &sc->io;

	io->op = op;
	io->buf = buf;
	io->off = off;
	io->len = len;
	io->pat_len = sc->lun->bs;
	io->cq = sc->cq;
	io->done = io_done;
	io->arg = sc;
	sc->step = then;
	sc->io_next = true;
}

static void advance(struct scsi_cmd *sc, void (*step)(struct scsi_cmd *, int), int r)
{
	for (;;) {
		sc->io_next = false;
		step(sc, r);
		if (!sc->io_next)
			break;
		step = sc->step;
		sc->submitting = true;
		sc->io_inline = false;
		lun_submit(sc->lun, &sc->io);
		sc->submitting = false;
		if (!sc->io_inline)
			return; /* io_done() goes on */
		r = sc->io.result;
	}
	sc->pending = false;
	if (!sc->in_exec && sc->done)
		sc->done(sc); /* may free sc */
}

static void io_done(struct lun_io *io)
{
	struct scsi_cmd *sc = io->arg;

	if (sc->submitting) {
		sc->io_inline = true;
		return;
	}
	advance(sc, sc->step, io->result);
}

static void start_async(struct scsi_cmd *sc, void (*first)(struct scsi_cmd *, int))
{
	sc->pending = true;
	sc->stepn = 0;
	advance(sc, first, 0);
}

static void read_done(struct scsi_cmd *sc, int r)
{
	if (r < 0)
		return io_error(sc, false);
	sc->in_len = (uint32_t)sc->io.len;
}

static void read_start(struct scsi_cmd *sc, int r)
{
	uint32_t n = sc->buf_len < sc->spdtl_in ? sc->buf_len : sc->spdtl_in;

	(void)r;
	if (n)
		next_io(sc, LUN_OP_READ, sc->buf, sc->lba * sc->lun->bs, n, read_done);
}

/* the last step of a write, flush or discard: its result */
static void write_flushed(struct scsi_cmd *sc, int r)
{
	if (r < 0)
		io_error(sc, true);
}

/* after the data: FUA, or no write cache, makes it durable first */
static void write_done(struct scsi_cmd *sc, int r)
{
	if (r < 0)
		return io_error(sc, true);
	if (sc->fua || !sc->lun->wce)
		next_io(sc, LUN_OP_FLUSH, NULL, 0, 0, write_flushed);
}

static void write_start(struct scsi_cmd *sc, int r)
{
	struct lun *l = sc->lun;
	/* EDTL < SPDTL (overflow): the blocks EDTL covers whole are written
	 * (FCP-4 9.4.2 a, as RFC 7143 11.4.5.2 allows); an EDTL that ends
	 * inside a block would leave that block half written, so such a
	 * command writes nothing and gets INVALID FIELD IN INFORMATION UNIT
	 * (FCP-4 9.4.2 b, as Linux LIO answers) */
	uint32_t n = sc->buf_len < sc->spdtl_out ? sc->buf_len : sc->spdtl_out;

	if (n % l->bs) {
		/* the overflow is the reason: the residual reports it */
		sc->residual_anyway = true;
		return scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_IU);
	}
	if (n)
		next_io(sc, LUN_OP_WRITE, sc->buf, sc->lba * l->bs, n, write_done);
	else
		write_done(sc, r);
}

static void sync_start(struct scsi_cmd *sc, int r)
{
	(void)r;
	next_io(sc, LUN_OP_FLUSH, NULL, 0, 0, write_flushed);
}

static void exec_verify(struct scsi_cmd *sc)
{
	struct lun *l = sc->lun;
	uint8_t blk[4096];
	bool same = ((sc->cdb[1] >> 1) & 3) == 3;

	if (sc->kind != SCK_OUT)
		return;
	if (sc->buf_len < sc->spdtl_out)
		return scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_IU);
	for (uint32_t i = 0; i < sc->nblocks; i++) {
		const uint8_t *want = sc->buf + (same ? 0 : (size_t)i * l->bs);
		for (uint32_t o = 0; o < l->bs; o += sizeof(blk)) {
			uint32_t c = l->bs - o < sizeof(blk) ? l->bs - o : (uint32_t)sizeof(blk);
			if (lun_read(l, blk, (sc->lba + i) * l->bs + o, c) < 0)
				return io_error(sc, false);
			for (uint32_t k = 0; k < c; k++)
				if (blk[k] != want[o + k])
					return scsi_sense_info(sc, SK_MISCOMPARE, ASC_MISCOMPARE_VERIFY,
							       (uint64_t)i * l->bs + o + k);
		}
	}
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static void write_same_start(struct scsi_cmd *sc, int r)
{
	struct lun *l = sc->lun;
	uint64_t off = sc->lba * l->bs, len = (uint64_t)sc->nblocks * l->bs;

	(void)r;
	if (sc->kind == SCK_OUT && sc->buf_len < l->bs)
		return scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_IU);
	/* NDOB, or a zero block (with or without UNMAP): deallocating gives
	 * the same result, since unmapped blocks read back as zeros (LBPRZ) */
	if (sc->kind != SCK_OUT || all_zero(sc->buf, l->bs))
		next_io(sc, LUN_OP_DISCARD, NULL, off, len, write_flushed);
	else
		next_io(sc, LUN_OP_WRITE_SAME, sc->buf, off, len, write_flushed);
}

/* UNMAP: the descriptors one after the other (stepn: the next one) */
static void unmap_next(struct scsi_cmd *sc, int r)
{
	struct lun *l = sc->lun;
	const uint8_t *d = sc->buf;
	uint32_t o = 8 + 16 * sc->stepn;

	if (r < 0)
		return io_error(sc, true);
	for (; o + 16 <= 8 + sc->bdl && !be32(d + o + 8); o += 16)
		sc->stepn++; /* nothing to deallocate */
	if (o + 16 > 8 + sc->bdl)
		return;
	sc->stepn++;
	next_io(sc, LUN_OP_DISCARD, NULL, be64(d + o) * l->bs,
		(uint64_t)be32(d + o + 8) * l->bs, unmap_next);
}

static void unmap_start(struct scsi_cmd *sc, int r)
{
	const uint8_t *d = sc->buf;
	uint32_t len = sc->buf_len, bdl;

	(void)r;
	if (len == 0)
		return;
	if (len < 8)
		return scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_PARAM_LIST_LENGTH);
	bdl = be16(d + 2);
	if (bdl > len - 8)
		bdl = (len - 8) & ~15u;
	if (bdl / 16 > 256)
		return scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM);
	/* check every descriptor before changing anything */
	for (uint32_t o = 8; o + 16 <= 8 + bdl; o += 16)
		if (check_range(sc, be64(d + o), be32(d + o + 8)) < 0)
			return;
	sc->bdl = bdl;
	unmap_next(sc, 0);
}

static void exec_caw(struct scsi_cmd *sc)
{
	struct lun *l = sc->lun;
	uint32_t half = sc->nblocks * l->bs;
	uint8_t blk[4096];

	if (!sc->nblocks)
		return;
	if (sc->buf_len < 2 * half)
		return scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_IU);
	for (uint32_t o = 0; o < half; o += sizeof(blk)) {
		uint32_t c = half - o < sizeof(blk) ? half - o : (uint32_t)sizeof(blk);
		if (lun_read(l, blk, sc->lba * l->bs + o, c) < 0)
			return io_error(sc, false);
		for (uint32_t k = 0; k < c; k++)
			if (blk[k] != sc->buf[o + k])
				return scsi_sense_info(sc, SK_MISCOMPARE, ASC_MISCOMPARE_VERIFY,
						       (uint64_t)o + k);
	}
	if (lun_write(l, sc->buf + half, sc->lba * l->bs, half) < 0)
		io_error(sc, true);
}

/* ORWRITE: each byte becomes old | new (SBC-3 5.8), block by block. */
static void exec_orwrite(struct scsi_cmd *sc)
{
	struct lun *l = sc->lun;
	uint32_t n = sc->buf_len < sc->spdtl_out ? sc->buf_len : sc->spdtl_out;
	uint8_t blk[4096];

	n -= n % l->bs;
	for (uint32_t o = 0; o < n; o += sizeof(blk)) {
		uint32_t c = n - o < sizeof(blk) ? n - o : (uint32_t)sizeof(blk);
		uint64_t off = sc->lba * l->bs + o;
		if (lun_read(l, blk, off, c) < 0)
			return io_error(sc, false);
		for (uint32_t k = 0; k < c; k++)
			blk[k] |= sc->buf[o + k];
		if (lun_write(l, blk, off, c) < 0)
			return io_error(sc, true);
	}
}

static void read_capacity(struct scsi_cmd *sc)
{
	struct lun *l = sc->lun;
	uint8_t d[32];

	memset(d, 0, sizeof(d));
	if (sc->cdb[0] == 0x25) {
		uint64_t last = lun_nblocks(l) - 1;
		wbe32(d, last > 0xfffffffeu ? 0xffffffffu : (uint32_t)last);
		wbe32(d + 4, l->bs);
		scsi_put_in(sc, d, 8, 8);
		return;
	}
	wbe64(d, lun_nblocks(l) - 1);
	wbe32(d + 8, l->bs);
	d[14] = 0x80 | 0x40; /* LBPME, LBPRZ */
	scsi_put_in(sc, d, 32, be32(sc->cdb + 10));
}

static void get_lba_status(struct scsi_cmd *sc)
{
	struct lun *l = sc->lun;
	uint64_t lba = be64(sc->cdb + 2);
	uint64_t nb = lun_nblocks(l);
	uint64_t n = lba < nb ? nb - lba : 0;
	uint8_t d[24];

	/* Report one descriptor: everything from LBA on is mapped. */
	memset(d, 0, sizeof(d));
	wbe32(d, 4 + 16);
	wbe64(d + 8, lba);
	wbe32(d + 16, n > 0xffffffffu ? 0xffffffffu : (uint32_t)n);
	d[20] = 0; /* mapped */
	scsi_put_in(sc, d, sizeof(d), be32(sc->cdb + 10));
}

void sbc_exec(struct scsi_cmd *sc)
{
	switch (sc->cdb[0]) {
	case 0x08: case 0x28: case 0xa8: case 0x88:
		start_async(sc, read_start);
		break;
	case 0x0a: case 0x2a: case 0xaa: case 0x8a:
	case 0x2e: case 0xae: case 0x8e:
		start_async(sc, write_start);
		break;
	case 0x2f: case 0xaf: case 0x8f:
		exec_verify(sc);
		break;
	case 0x25:
		read_capacity(sc);
		break;
	case 0x9e:
		if ((sc->cdb[1] & 0x1f) == 0x10)
			read_capacity(sc);
		else
			get_lba_status(sc);
		break;
	case 0x35: case 0x91:
		start_async(sc, sync_start);
		break;
	case 0x34: case 0x90:
		break;
	case 0x41: case 0x93:
		start_async(sc, write_same_start);
		break;
	case 0x42:
		start_async(sc, unmap_start);
		break;
	case 0x89:
		exec_caw(sc);
		break;
	case 0x8b:
		exec_orwrite(sc);
		break;
	}
}
