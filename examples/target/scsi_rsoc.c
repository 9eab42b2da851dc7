/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * REPORT SUPPORTED OPERATION CODES (SPC-4 6.35): the table of commands
 * this target implements, each with its CDB usage data (the bits a CDB
 * may set without being refused), so initiators can ask rather than try.
 * Keep it in step with scsi_spc.c, scsi_sbc.c and scsi_mode.c.
 */
#include "scsi.h"

#include <string.h>

struct op {
	uint8_t opcode;
	uint8_t sa;        /* service action, with has_sa */
	bool has_sa;
	uint8_t len;       /* CDB length */
	uint8_t usage[16]; /* usage[0] is the opcode */
};

#define FF 0xff
/* DPO, FUA, FUA_NV in byte 1 of READ/WRITE(10/12/16) */
#define RW1 0x1a

static const struct op ops[] = {
	{ 0x00, 0, false, 6, { 0x00, 0, 0, 0, 0, 0 } },               /* TEST UNIT READY */
	{ 0x03, 0, false, 6, { 0x03, 0x01, 0, 0, FF, 0 } },           /* REQUEST SENSE */
	{ 0x08, 0, false, 6, { 0x08, 0x1f, FF, FF, FF, 0 } },         /* READ(6) */
	{ 0x0a, 0, false, 6, { 0x0a, 0x1f, FF, FF, FF, 0 } },         /* WRITE(6) */
	{ 0x12, 0, false, 6, { 0x12, 0x01, FF, FF, FF, 0 } },         /* INQUIRY */
	{ 0x15, 0, false, 6, { 0x15, 0x10, 0, 0, FF, 0 } },           /* MODE SELECT(6) */
	{ 0x16, 0, false, 6, { 0x16, 0, 0, 0, 0, 0 } },               /* RESERVE(6) */
	{ 0x17, 0, false, 6, { 0x17, 0, 0, 0, 0, 0 } },               /* RELEASE(6) */
	{ 0x1a, 0, false, 6, { 0x1a, 0x08, FF, FF, FF, 0 } },         /* MODE SENSE(6) */
	{ 0x1b, 0, false, 6, { 0x1b, 0x01, 0, 0x0f, 0x03, 0 } },      /* START STOP UNIT */
	{ 0x1e, 0, false, 6, { 0x1e, 0, 0, 0, 0x03, 0 } },            /* PREVENT ALLOW */
	{ 0x25, 0, false, 10, { 0x25, 0, FF, FF, FF, FF, 0, 0, 0x01, 0 } }, /* READ CAPACITY(10) */
	{ 0x28, 0, false, 10, { 0x28, RW1, FF, FF, FF, FF, 0x1f, FF, FF, 0 } },
	{ 0x2a, 0, false, 10, { 0x2a, RW1, FF, FF, FF, FF, 0x1f, FF, FF, 0 } },
	{ 0x2e, 0, false, 10, { 0x2e, 0x16, FF, FF, FF, FF, 0x1f, FF, FF, 0 } }, /* WRITE AND VERIFY(10) */
	{ 0x2f, 0, false, 10, { 0x2f, 0x16, FF, FF, FF, FF, 0x1f, FF, FF, 0 } }, /* VERIFY(10) */
	{ 0x34, 0, false, 10, { 0x34, 0x02, FF, FF, FF, FF, 0x1f, FF, FF, 0 } }, /* PRE-FETCH(10) */
	{ 0x35, 0, false, 10, { 0x35, 0x02, FF, FF, FF, FF, 0x1f, FF, FF, 0 } }, /* SYNCHRONIZE CACHE(10) */
	{ 0x41, 0, false, 10, { 0x41, 0x08, FF, FF, FF, FF, 0x1f, FF, FF, 0 } }, /* WRITE SAME(10) */
	{ 0x42, 0, false, 10, { 0x42, 0, 0, 0, 0, 0, 0x1f, FF, FF, 0 } },       /* UNMAP */
	{ 0x55, 0, false, 10, { 0x55, 0x10, 0, 0, 0, 0, 0, FF, FF, 0 } },       /* MODE SELECT(10) */
	{ 0x56, 0, false, 10, { 0x56, 0, 0, 0, 0, 0, 0, 0, 0, 0 } },            /* RESERVE(10) */
	{ 0x57, 0, false, 10, { 0x57, 0, 0, 0, 0, 0, 0, 0, 0, 0 } },            /* RELEASE(10) */
	{ 0x5a, 0, false, 10, { 0x5a, 0x18, FF, FF, 0, 0, 0, FF, FF, 0 } },     /* MODE SENSE(10) */
	{ 0x5e, 0x00, true, 10, { 0x5e, 0x00, 0, 0, 0, 0, 0, FF, FF, 0 } },     /* PRIN READ KEYS */
	{ 0x5e, 0x01, true, 10, { 0x5e, 0x01, 0, 0, 0, 0, 0, FF, FF, 0 } },     /* READ RESERVATION */
	{ 0x5e, 0x02, true, 10, { 0x5e, 0x02, 0, 0, 0, 0, 0, FF, FF, 0 } },     /* REPORT CAPABILITIES */
	{ 0x5e, 0x03, true, 10, { 0x5e, 0x03, 0, 0, 0, 0, 0, FF, FF, 0 } },     /* READ FULL STATUS */
	{ 0x5f, 0x00, true, 10, { 0x5f, 0x00, FF, 0, 0, FF, FF, FF, FF, 0 } },  /* PROUT REGISTER */
	{ 0x5f, 0x01, true, 10, { 0x5f, 0x01, FF, 0, 0, FF, FF, FF, FF, 0 } },  /* RESERVE */
	{ 0x5f, 0x02, true, 10, { 0x5f, 0x02, FF, 0, 0, FF, FF, FF, FF, 0 } },  /* RELEASE */
	{ 0x5f, 0x03, true, 10, { 0x5f, 0x03, FF, 0, 0, FF, FF, FF, FF, 0 } },  /* CLEAR */
	{ 0x5f, 0x04, true, 10, { 0x5f, 0x04, FF, 0, 0, FF, FF, FF, FF, 0 } },  /* PREEMPT */
	{ 0x5f, 0x05, true, 10, { 0x5f, 0x05, FF, 0, 0, FF, FF, FF, FF, 0 } },  /* PREEMPT AND ABORT */
	{ 0x5f, 0x06, true, 10, { 0x5f, 0x06, FF, 0, 0, FF, FF, FF, FF, 0 } },  /* REGISTER AND IGNORE */
	{ 0x88, 0, false, 16, { 0x88, RW1, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0x1f, 0 } },
	{ 0x89, 0, false, 16, { 0x89, 0x18, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0, 0, FF, 0x1f, 0 } },
	{ 0x8a, 0, false, 16, { 0x8a, RW1, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0x1f, 0 } },
	{ 0x8b, 0, false, 16, { 0x8b, RW1, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0x1f, 0 } },
	{ 0x8e, 0, false, 16, { 0x8e, 0x16, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0x1f, 0 } },
	{ 0x8f, 0, false, 16, { 0x8f, 0x16, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0x1f, 0 } },
	{ 0x90, 0, false, 16, { 0x90, 0x02, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0x1f, 0 } },
	{ 0x91, 0, false, 16, { 0x91, 0x02, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0x1f, 0 } },
	{ 0x93, 0, false, 16, { 0x93, 0x09, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0x1f, 0 } },
	{ 0x9e, 0x10, true, 16, { 0x9e, 0x10, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0 } },
	{ 0x9e, 0x12, true, 16, { 0x9e, 0x12, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, FF, 0, 0 } },
	{ 0xa0, 0, false, 12, { 0xa0, 0, FF, 0, 0, 0, FF, FF, FF, FF, 0, 0 } },  /* REPORT LUNS */
	{ 0xa3, 0x0c, true, 12, { 0xa3, 0x0c, 0x87, FF, FF, FF, FF, FF, FF, FF, 0, 0 } },
	{ 0xa8, 0, false, 12, { 0xa8, RW1, FF, FF, FF, FF, FF, FF, FF, FF, 0x1f, 0 } },
	{ 0xaa, 0, false, 12, { 0xaa, RW1, FF, FF, FF, FF, FF, FF, FF, FF, 0x1f, 0 } },
	{ 0xae, 0, false, 12, { 0xae, 0x16, FF, FF, FF, FF, FF, FF, FF, FF, 0x1f, 0 } },
	{ 0xaf, 0, false, 12, { 0xaf, 0x16, FF, FF, FF, FF, FF, FF, FF, FF, 0x1f, 0 } },
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

/* Command timeouts descriptor (RCTD=1): no timeouts given. */
static uint32_t timeouts(uint8_t *p)
{
	memset(p, 0, 12);
	wbe16(p, 0x0a);
	return 12;
}

int rsoc_prepare(struct scsi_cmd *sc)
{
	const uint8_t *cdb = sc->cdb;
	uint8_t opts = cdb[2] & 0x07;

	if ((cdb[1] & 0x1f) != 0x0c || opts > 2) {
		scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
		return -1;
	}
	if (opts) {
		/* one command: options 001b is for opcodes without service
		 * actions, 010b for those with (SPC-4 6.35.2) */
		for (size_t i = 0; i < NOPS; i++)
			if (ops[i].opcode == cdb[3] && ops[i].has_sa != (opts == 2)) {
				scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
				return -1;
			}
	}
	sc->kind = SCK_IN;
	sc->spdtl_in = be32(cdb + 6);
	return 0;
}

void rsoc_exec(struct scsi_cmd *sc)
{
	const uint8_t *cdb = sc->cdb;
	bool rctd = cdb[2] & 0x80;
	uint8_t opts = cdb[2] & 0x07;
	uint8_t d[4 + NOPS * 20];
	uint32_t n = 4;

	memset(d, 0, sizeof(d));
	if (opts == 0) {
		for (size_t i = 0; i < NOPS; i++) {
			uint8_t *p = d + n;
			p[0] = ops[i].opcode;
			wbe16(p + 2, ops[i].sa);
			p[5] = (uint8_t)((ops[i].has_sa ? 0x01 : 0) | (rctd ? 0x02 : 0));
			wbe16(p + 6, ops[i].len);
			n += 8;
			if (rctd)
				n += timeouts(d + n);
		}
		wbe32(d, n - 4);
	} else {
		uint16_t sa = be16(cdb + 4);
		const struct op *o = NULL;
		for (size_t i = 0; i < NOPS; i++)
			if (ops[i].opcode == cdb[3] && (!ops[i].has_sa || ops[i].sa == sa))
				o = &ops[i];
		if (!o) {
			d[1] = 0x01; /* SUPPORT 001b: not supported */
		} else {
			d[1] = (uint8_t)((rctd ? 0x80 : 0) | 0x03); /* CTDP, SUPPORT 011b */
			wbe16(d + 2, o->len);
			memcpy(d + 4, o->usage, o->len);
			n += o->len;
			if (rctd)
				n += timeouts(d + n);
		}
	}
	scsi_put_in(sc, d, n, be32(cdb + 6));
}
