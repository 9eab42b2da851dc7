/* SPDX-License-Identifier: BSD-2-Clause */
/* Sense data and Data-In results of a SCSI command: the helpers every
 * command set (SPC, SBC, mode pages, PR, RSOC) reports through. They sit
 * below the dispatch in scsi.c, so calls flow one way: scsi.c into the
 * command sets, and those into this file. */
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
