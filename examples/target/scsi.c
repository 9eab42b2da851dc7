/* SPDX-License-Identifier: BSD-2-Clause */
/* SCSI dispatch and sense data: routes a CDB to the SPC, SBC or mode page
 * code and builds fixed or descriptor format sense (per D_SENSE). */
#include "scsi.h"

#include <string.h>

void scsi_sense_info(struct scsi_cmd *sc, uint8_t key, uint16_t ascq, uint64_t info)
{
	uint8_t *s = sc->sense;

	memset(s, 0, sizeof(sc->sense));
	sc->status = SAM_CHECK_CONDITION;
	if (sc->lun && sc->lun->d_sense) {
		s[0] = 0x72;
		s[1] = key;
		s[2] = (uint8_t)(ascq >> 8);
		s[3] = (uint8_t)ascq;
		sc->sense_len = 8;
		if (info != UINT64_MAX) {
			s[8] = 0x00;  /* information descriptor */
			s[9] = 0x0a;
			s[10] = 0x80; /* VALID */
			wbe64(s + 12, info);
			s[7] = 12;
			sc->sense_len = 20;
		}
	} else {
		s[0] = 0x70;
		s[2] = key;
		s[7] = 10;
		s[12] = (uint8_t)(ascq >> 8);
		s[13] = (uint8_t)ascq;
		if (info != UINT64_MAX) {
			s[0] |= 0x80;
			wbe32(s + 3, (uint32_t)info);
		}
		sc->sense_len = 18;
	}
}

void scsi_sense(struct scsi_cmd *sc, uint8_t key, uint16_t ascq)
{
	scsi_sense_info(sc, key, ascq, UINT64_MAX);
}

void scsi_put_in(struct scsi_cmd *sc, const uint8_t *data, uint32_t len, uint32_t alloc)
{
	uint32_t n = len < alloc ? len : alloc;

	sc->spdtl_in = n;
	if (n > sc->buf_len)
		n = sc->buf_len;
	if (n)
		memcpy(sc->buf, data, n);
	sc->in_len = n;
}

int scsi_prepare(struct scsi_cmd *sc)
{
	uint8_t op = sc->cdb[0];

	sc->kind = SCK_NODATA;
	sc->status = SAM_GOOD;
	sc->sense_len = 0;
	sc->spdtl_in = sc->spdtl_out = 0;
	sc->in_len = 0;

	/* SPC-4 4.5.1: INQUIRY, REPORT LUNS and REQUEST SENSE work on any
	 * LUN; everything else needs one that exists. */
	if (!sc->lun && op != 0x12 && op != 0xa0 && op != 0x03) {
		scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_LUN_NOT_SUPPORTED);
		return -1;
	}
	/* SPC-2 reservation held by another I_T nexus: only commands that
	 * cannot disturb it go through (SPC-2 5.5.1, as Linux LIO does) */
	const void *holder = sc->lun ? __atomic_load_n(&sc->lun->reserved_by, __ATOMIC_ACQUIRE)
				     : NULL;

	if (holder && holder != sc->nexus &&
	    op != 0x12 && op != 0xa0 && op != 0x03 && op != 0x17 && op != 0x57) {
		sc->status = SAM_RESERVATION_CONFLICT;
		return -1;
	}
	/* SPC-2 RESERVE is refused while persistent reservations exist */
	if (sc->lun && (op == 0x16 || op == 0x56) &&
	    __atomic_load_n(&sc->lun->pr_held, __ATOMIC_ACQUIRE)) {
		sc->status = SAM_RESERVATION_CONFLICT;
		return -1;
	}
	if (!pr_allowed(sc)) {
		sc->status = SAM_RESERVATION_CONFLICT;
		return -1;
	}
	switch (op) {
	case 0x15: case 0x55: case 0x1a: case 0x5a:
		return mode_prepare(sc);
	case 0xa3: /* MAINTENANCE IN */
		return rsoc_prepare(sc);
	case 0x5e: case 0x5f:
		return pr_prepare(sc);
	case 0x00: case 0x03: case 0x12: case 0xa0: case 0x1b: case 0x1e:
	case 0x16: case 0x17: case 0x56: case 0x57:
		return spc_prepare(sc);
	default:
		return sbc_prepare(sc);
	}
}

void scsi_exec(struct scsi_cmd *sc)
{
	switch (sc->cdb[0]) {
	case 0x15: case 0x55: case 0x1a: case 0x5a:
		mode_exec(sc);
		break;
	case 0xa3:
		rsoc_exec(sc);
		break;
	case 0x5e: case 0x5f:
		pr_exec(sc);
		break;
	case 0x00: case 0x03: case 0x12: case 0xa0: case 0x1b: case 0x1e:
	case 0x16: case 0x17: case 0x56: case 0x57:
		spc_exec(sc);
		break;
	default:
		sbc_exec(sc);
		break;
	}
}
