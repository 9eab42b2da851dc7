/* SPDX-License-Identifier: BSD-2-Clause */
/* SPC-4 primary commands: TEST UNIT READY, REQUEST SENSE, INQUIRY (with
 * the VPD pages initiators ask for), REPORT LUNS, START STOP UNIT,
 * PREVENT ALLOW MEDIUM REMOVAL, and the SPC-2 RESERVE/RELEASE (6/10). */
#include "scsi.h"
#include "target.h"

#include <string.h>

#define VPD_MAX_XFER_BLOCKS(sc) ((sc)->max_io / (sc)->lun->bs)

/* OPTIMAL TRANSFER LENGTH. Linux's sd caps its requests at this value (and
 * at the host's max_sectors, 512 KiB for ib_iser): a small one turns every
 * large write into many small commands, each all unsolicited data on
 * iSER. The caller's opt_io (one MaxBurstLength: one R2T on TCP, one RDMA
 * Read on iSER) is what the target handles best; never above the maximum. */
static uint32_t vpd_opt_xfer_blocks(const struct scsi_cmd *sc)
{
	uint32_t opt = sc->opt_io && sc->opt_io < sc->max_io ? sc->opt_io
							      : sc->max_io;

	return opt / sc->lun->bs;
}

static int invalid_cdb_field(struct scsi_cmd *sc)
{
	scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	return -1;
}

/* Parameter data we generate, up to `alloc` bytes */
static int prep_in(struct scsi_cmd *sc, uint32_t alloc)
{
	sc->kind = SCK_IN;
	sc->spdtl_in = alloc;
	return 0;
}

static int prep_start_stop(struct scsi_cmd *sc)
{
	const uint8_t *cdb = sc->cdb;

	/* POWER CONDITION other than START_VALID(0) is not supported */
	if (cdb[4] & 0xf0)
		return invalid_cdb_field(sc);
	/* LOEJ while removal is prevented (SBC-3 5.25) */
	if ((cdb[4] & 0x02) && !(cdb[4] & 0x01) && sc->lun->prevent) {
		scsi_sense(sc, SK_ILLEGAL_REQUEST, 0x5302);
		return -1;
	}
	return 0;
}

int spc_prepare(struct scsi_cmd *sc)
{
	const uint8_t *cdb = sc->cdb;

	switch (cdb[0]) {
	case 0x00: /* TEST UNIT READY */
		return 0;
	case 0x03: /* REQUEST SENSE */
		return prep_in(sc, cdb[4]);
	case 0x12: /* INQUIRY */
		/* CMDDT (obsolete) set, or a page code without EVPD */
		if ((cdb[1] & 0x02) || (!(cdb[1] & 0x01) && cdb[2]))
			return invalid_cdb_field(sc);
		return prep_in(sc, be16(cdb + 3));
	case 0xa0: /* REPORT LUNS */
		if (cdb[2] > 0x02 && cdb[2] != 0x10 && cdb[2] != 0x11)
			return invalid_cdb_field(sc);
		return prep_in(sc, be32(cdb + 6));
	case 0x1b: /* START STOP UNIT */
		return prep_start_stop(sc);
	case 0x1e: /* PREVENT ALLOW MEDIUM REMOVAL */
		return 0;
	case 0x16: case 0x56: /* RESERVE(6/10): whole LU only, no third party */
		if ((cdb[0] == 0x56 && (cdb[1] & 0x12)) || (cdb[0] == 0x16 && (cdb[1] & 0x01)))
			return invalid_cdb_field(sc);
		return 0;
	case 0x17: case 0x57: /* RELEASE(6/10) */
		return 0;
	}
	scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
	return -1;
}

static uint32_t std_inquiry(struct scsi_cmd *sc, uint8_t *d)
{
	static const uint16_t versions[] = { 0x00a0 /* SAM-5 */, 0x0960 /* iSCSI */,
					     0x0460 /* SPC-4 */, 0x04c0 /* SBC-3 */ };

	memset(d, 0, 66);
	/* No such LUN: peripheral qualifier 011b, device type 1fh (SPC-4 6.4.2) */
	d[0] = sc->lun ? 0x00 : 0x7f;
	d[2] = 0x06;        /* SPC-4 */
	d[3] = 0x12;        /* HISUP, response data format 2 */
	d[4] = 66 - 5;
	d[7] = 0x02;        /* CMDQUE */
	memcpy(d + 8, "LIBIDM  ", 8);
	memcpy(d + 16, "idm-target      ", 16);
	memcpy(d + 32, "1.0 ", 4);
	for (unsigned i = 0; i < 4; i++)
		wbe16(d + 58 + 2 * i, versions[i]);
	return 66;
}

/* Device Identification (0x83) designators at p: returns their length */
static uint32_t vpd_device_id(const struct lun *l, uint8_t *p)
{
	uint8_t *start = p;
	size_t tl = strlen(g_tgt.name);

	/* NAA designator, associated with the LU */
	p[0] = 0x01; p[1] = 0x03; p[2] = 0; p[3] = 8;
	memcpy(p + 4, l->naa, 8);
	p += 12;
	/* T10 vendor id designator */
	p[0] = 0x02; p[1] = 0x01; p[2] = 0; p[3] = (uint8_t)(8 + strlen(l->serial));
	memcpy(p + 4, "LIBIDM  ", 8);
	memcpy(p + 12, l->serial, strlen(l->serial));
	p += 4 + p[3];
	/* SCSI name string of the target device (PIV=1, iSCSI) */
	if (tl + 1 <= 220) {
		uint32_t sl = (uint32_t)((tl + 1 + 3) & ~3u);
		p[0] = 0x53; p[1] = 0xa8; p[2] = 0; p[3] = (uint8_t)sl;
		memset(p + 4, 0, sl);
		memcpy(p + 4, g_tgt.name, tl);
		p += 4 + sl;
	}
	return (uint32_t)(p - start);
}

/* Block Limits (0xb0, SBC-3 6.5.3) after the page header at d */
static uint32_t vpd_block_limits(const struct scsi_cmd *sc, uint8_t *d)
{
	memset(d + 4, 0, 0x3c);
	d[4] = 0x01;                          /* WSNZ */
	d[5] = 255;                           /* MAXIMUM COMPARE AND WRITE LENGTH */
	wbe32(d + 8, VPD_MAX_XFER_BLOCKS(sc)); /* MAXIMUM TRANSFER LENGTH */
	wbe32(d + 12, vpd_opt_xfer_blocks(sc)); /* OPTIMAL TRANSFER LENGTH */
	wbe32(d + 20, 0xffffffffu);           /* MAXIMUM UNMAP LBA COUNT */
	wbe32(d + 24, 256);                   /* MAXIMUM UNMAP BLOCK DESCRIPTOR COUNT */
	wbe32(d + 28, 1);                     /* OPTIMAL UNMAP GRANULARITY */
	wbe64(d + 36, SBC_MAX_WS_LEN);        /* MAXIMUM WRITE SAME LENGTH */
	return 0x3c;
}

/* The payload of VPD page `page` after its header at d: its length, or
 * -1 for a page we do not have */
static int64_t vpd_payload(struct scsi_cmd *sc, uint8_t page, uint8_t *d)
{
	static const uint8_t pages[] = { 0x00, 0x80, 0x83, 0xb0, 0xb1, 0xb2 };
	const struct lun *l = sc->lun;

	switch (page) {
	case 0x00:
		memcpy(d + 4, pages, sizeof(pages));
		return sizeof(pages);
	case 0x80:
		memcpy(d + 4, l->serial, strlen(l->serial));
		return (int64_t)strlen(l->serial);
	case 0x83:
		return vpd_device_id(l, d + 4);
	case 0xb0:
		return vpd_block_limits(sc, d);
	case 0xb1: /* Block Device Characteristics */
		memset(d + 4, 0, 0x3c);
		wbe16(d + 4, 1); /* non-rotating medium */
		return 0x3c;
	case 0xb2: /* Logical Block Provisioning */
		memset(d + 4, 0, 4);
		d[5] = 0x80 | 0x40 | 0x20 | 0x04; /* LBPU, LBPWS, LBPWS10, LBPRZ */
		d[6] = 0x02;                      /* thin provisioned */
		return 4;
	default:
		return -1;
	}
}

static uint32_t vpd_page(struct scsi_cmd *sc, uint8_t page, uint8_t *d)
{
	int64_t n;

	d[0] = 0x00;
	d[1] = page;
	n = vpd_payload(sc, page, d);
	if (n < 0)
		return 0;
	wbe16(d + 2, (uint16_t)n);
	return (uint32_t)n + 4;
}

static void inquiry(struct scsi_cmd *sc)
{
	uint8_t d[512];
	uint32_t n;
	uint32_t alloc = be16(sc->cdb + 3);

	if (!(sc->cdb[1] & 0x01)) {
		n = std_inquiry(sc, d);
	} else {
		n = sc->lun ? vpd_page(sc, sc->cdb[2], d) : 0;
		if (!n) {
			scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
			return;
		}
	}
	scsi_put_in(sc, d, n, alloc);
}

static void report_luns(struct scsi_cmd *sc)
{
	uint8_t d[8 + 8 * TGT_MAX_LUNS];
	uint32_t n = 0;

	memset(d, 0, sizeof(d));
	for (int i = 0; i < sc->nluns; i++) {
		uint64_t id = (uint64_t)sc->luns[i]->id;

		/* an initiator ACL's luns= hides the others */
		if (!lun_granted(sc->lunmask, id))
			continue;
		lun_encode(d + 8 + 8 * n++, id);
	}
	/* LUN LIST LENGTH is never truncated (Implementer's Guide 3.1.2) */
	wbe32(d, 8 * n);
	scsi_put_in(sc, d, 8 + 8 * n, be32(sc->cdb + 6));
}

static void request_sense(struct scsi_cmd *sc)
{
	uint8_t d[18];

	/* No pending sense: report NO SENSE in the requested format */
	memset(d, 0, sizeof(d));
	if (sc->cdb[1] & 0x01) {
		d[0] = 0x72;
		scsi_put_in(sc, d, 8, sc->cdb[4]);
	} else {
		d[0] = 0x70;
		d[7] = 10;
		scsi_put_in(sc, d, 18, sc->cdb[4]);
	}
}

void spc_exec(struct scsi_cmd *sc)
{
	switch (sc->cdb[0]) {
	case 0x00:
		break;
	case 0x03:
		request_sense(sc);
		break;
	case 0x12:
		inquiry(sc);
		break;
	case 0xa0:
		report_luns(sc);
		break;
	case 0x1b:
		if (!(sc->cdb[4] & 0x02))
			sc->lun->stopped = !(sc->cdb[4] & 0x01);
		break;
	case 0x1e:
		sc->lun->prevent = (sc->cdb[4] & 0x03) != 0;
		break;
	case 0x16: case 0x56:
		/* conflicts were refused earlier */
		__atomic_store_n(&sc->lun->reserved_by, sc->nexus, __ATOMIC_RELEASE);
		break;
	case 0x17: case 0x57:
		/* from another nexus a RELEASE is a no-op (SPC-2 7.17) */
		{
			const void *mine = sc->nexus;

			__atomic_compare_exchange_n(&sc->lun->reserved_by, &mine, NULL, false,
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		}
		break;
	}
}
