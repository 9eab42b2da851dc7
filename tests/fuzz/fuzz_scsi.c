/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * idm-target's SCSI emulation (examples/target/scsi*.c) along the data
 * path scsi_io.c gives it: scsi_prepare() decodes the CDB, then the data
 * moves as the target would move it (RAM LUN reads and whole-block
 * writes straight from/into the LUN memory, everything else through a
 * buffer of exactly the size the target would get from its pool), then
 * scsi_exec(). ASan catches any range the CDB checks let through.
 *
 * Input: one byte of setup (bit 0: 4096-byte blocks, else 512), then
 * commands, each
 *   ctl(1) EDTL(2, big endian) CDB(16) Data-Out(EDTL bytes, for writes;
 *   zeros past the end of the input)
 * ctl bit 0: from the second I_T nexus (reservations), bit 1: to a LUN
 * that does not exist, bit 2: R flag, bit 3: W flag of the SCSI Command.
 * State (mode pages, reservations, data) carries over between commands
 * of one input; every input starts from a fresh LUN.
 */
#include "fuzz.h"

#include "scsi.h"
#include "target.h"

#include <stdlib.h>
#include <string.h>

#define LUN_SIZE "64K"
#define MAX_CMDS 16
#define REC_HDR 19

/* INQUIRY and REPORT LUNS name the target */
struct target g_tgt = { .name = "iqn.2026-11.org.libidm:fuzz" };

static const char *iport[2] = {
	"iqn.2026-11.org.libidm:ini-a,i,0x400000000001",
	"iqn.2026-11.org.libidm:ini-b,i,0x400000000002",
};
static int nexus[2];

static void check(const struct scsi_cmd *sc)
{
	if (sc->sense_len > sizeof(sc->sense))
		abort();
	if (sc->status == SAM_CHECK_CONDITION && !sc->sense_len)
		abort();
}

static void one(struct lun *l, const uint8_t *rec, const uint8_t *data, size_t dlen)
{
	struct lun *luns[1] = { l };
	uint8_t cdb[16];
	struct scsi_cmd sc;
	uint8_t ctl = rec[0];
	bool rd = ctl & 4, wr = ctl & 8;
	uint32_t edtl = (uint32_t)rec[1] << 8 | rec[2];
	uint32_t n;
	uint8_t *buf = NULL;

	memcpy(cdb, rec + 3, sizeof(cdb));
	memset(&sc, 0, sizeof(sc));
	sc.cdb = cdb;
	sc.lun = (ctl & 2) ? NULL : l;
	sc.luns = luns;
	sc.nluns = 1;
	sc.max_io = TGT_MAX_IO;
	sc.opt_io = 1048576;
	sc.edtl = edtl;
	sc.nexus = &nexus[ctl & 1];
	sc.iport = iport[ctl & 1];
	if (scsi_prepare(&sc) < 0) {
		check(&sc);
		return;
	}
	switch (sc.kind) {
	case SCK_NODATA:
		scsi_exec(&sc);
		break;
	case SCK_READ:
	case SCK_IN:
		n = rd ? edtl : 0;
		if (sc.spdtl_in < n)
			n = sc.spdtl_in;
		if (sc.kind == SCK_IN && n > SCSI_IN_MAX)
			n = SCSI_IN_MAX;
		if (sc.kind == SCK_READ) {
			/* zero copy Put_Data of LUN memory: the range must be in it */
			uint8_t *wire = malloc(n ? n : 1);
			if (wire && n)
				memcpy(wire, l->mem + sc.lba * l->bs, n);
			free(wire);
			break;
		}
		buf = malloc(n ? n : 1);
		if (!buf)
			return;
		sc.buf = buf;
		sc.buf_len = n;
		scsi_exec(&sc);
		if (sc.in_len > n)
			abort();
		break;
	case SCK_WRITE:
	case SCK_OUT:
		n = wr ? edtl : 0;
		if (sc.spdtl_out < n)
			n = sc.spdtl_out;
		if (!n) {
			scsi_exec(&sc);
			break;
		}
		if (sc.kind == SCK_WRITE && n % l->bs == 0) {
			/* zero copy Get_Data into the LUN memory */
			sc.buf = l->mem + sc.lba * l->bs;
		} else {
			buf = calloc(1, n);
			if (!buf)
				return;
			sc.buf = buf;
		}
		memcpy(sc.buf, data, dlen < n ? dlen : n);
		sc.buf_len = n;
		scsi_exec(&sc);
		break;
	}
	check(&sc);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lun *l;

	if (size < 1)
		return 0;
	if (lun_open("ram:" LUN_SIZE, 0, (data[0] & 1) ? 4096 : 512, &l) < 0)
		abort();
	data++;
	size--;
	for (int i = 0; i < MAX_CMDS && size >= REC_HDR; i++) {
		uint32_t edtl = (uint32_t)data[1] << 8 | data[2];
		size_t dlen = (data[0] & 8) ? (size - REC_HDR < edtl ? size - REC_HDR : edtl) : 0;

		one(l, data, data + REC_HDR, dlen);
		data += REC_HDR + dlen;
		size -= REC_HDR + dlen;
	}
	lun_close(l);
	return 0;
}
