/* SPDX-License-Identifier: BSD-2-Clause */
/* SCSI dispatch: routes a CDB to the SPC, SBC, mode page, PR or RSOC
 * code (sense data is built in scsi_sense.c). */
#include "scsi.h"

/* Whether a reservation another I_T nexus holds refuses the command */
static bool reservation_conflict(const struct scsi_cmd *sc, uint8_t op)
{
	/* SPC-2 reservation held by another I_T nexus: only commands that
	 * cannot disturb it go through (SPC-2 5.5.1, as Linux LIO does) */
	const void *holder = sc->lun ? __atomic_load_n(&sc->lun->reserved_by, __ATOMIC_ACQUIRE)
				     : NULL;

	if (holder && holder != sc->nexus &&
	    op != 0x12 && op != 0xa0 && op != 0x03 && op != 0x17 && op != 0x57)
		return true;
	/* SPC-2 RESERVE is refused while persistent reservations exist */
	if (sc->lun && (op == 0x16 || op == 0x56) &&
	    __atomic_load_n(&sc->lun->pr_held, __ATOMIC_ACQUIRE))
		return true;
	return !pr_allowed(sc);
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
	/* SBC-3 4.6: a capacity change (an RBD image resized) is a unit
	 * attention for every I_T nexus, reported once, to any command but
	 * INQUIRY, REPORT LUNS and REQUEST SENSE */
	if (sc->lun && sc->cap_seen && op != 0x12 && op != 0xa0 && op != 0x03) {
		unsigned gen = __atomic_load_n(&sc->lun->cap_gen, __ATOMIC_ACQUIRE);

		if (*sc->cap_seen != gen) {
			*sc->cap_seen = gen;
			scsi_sense(sc, SK_UNIT_ATTENTION, ASC_CAPACITY_CHANGED);
			return -1;
		}
	}
	if (reservation_conflict(sc, op)) {
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
	sc->pending = false;
	sc->in_exec = true;
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
	sc->in_exec = false;
}
