/* SPDX-License-Identifier: BSD-2-Clause */
/* MODE SENSE 6/10 and MODE SELECT 6/10 for the caching (08h), control
 * (0Ah) and informational exceptions (1Ch) pages. Changeable: WCE,
 * D_SENSE and SWP (what iscsi-swp and iscsi-test-cu toggle). */
#include "scsi.h"

#include <string.h>

enum { PC_CURRENT, PC_CHANGEABLE, PC_DEFAULT, PC_SAVED };

static uint32_t page_caching(const struct lun *l, int pc, uint8_t *p)
{
	memset(p, 0, 20);
	p[0] = 0x08;
	p[1] = 0x12;
	if (pc == PC_CHANGEABLE)
		p[2] = 0x04;
	else if (pc == PC_DEFAULT)
		p[2] = 0x04;
	else
		p[2] = l->wce ? 0x04 : 0;
	return 20;
}

static uint32_t page_control(const struct lun *l, int pc, uint8_t *p)
{
	memset(p, 0, 12);
	p[0] = 0x0a;
	p[1] = 0x0a;
	if (pc == PC_CHANGEABLE) {
		p[2] = 0x04; /* D_SENSE */
		p[4] = 0x08; /* SWP */
	} else if (pc == PC_CURRENT) {
		p[2] = l->d_sense ? 0x04 : 0;
		p[3] = 0x10; /* unrestricted reordering, QErr 00b */
		p[4] = l->swp ? 0x08 : 0;
	} else {
		p[3] = 0x10;
	}
	wbe16(p + 8, 0xffff); /* busy timeout: unlimited */
	return 12;
}

static uint32_t page_iec(int pc, uint8_t *p)
{
	memset(p, 0, 12);
	p[0] = 0x1c;
	p[1] = 0x0a;
	(void)pc;
	return 12;
}

int mode_prepare(struct scsi_cmd *sc)
{
	const uint8_t *cdb = sc->cdb;

	switch (cdb[0]) {
	case 0x1a: case 0x5a: {
		uint8_t pc = cdb[2] >> 6, page = cdb[2] & 0x3f, sub = cdb[3];
		if (pc == PC_SAVED) {
			scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_SAVING_NOT_SUPPORTED);
			return -1;
		}
		if ((page != 0x08 && page != 0x0a && page != 0x1c && page != 0x3f) ||
		    (sub != 0 && !(page == 0x3f && sub == 0xff))) {
			scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
			return -1;
		}
		sc->kind = SCK_IN;
		sc->spdtl_in = cdb[0] == 0x1a ? cdb[4] : be16(cdb + 7);
		return 0;
	}
	default: /* MODE SELECT */
		/* PF=0 (vendor pages) and SP=1 (save) are not supported */
		if (!(cdb[1] & 0x10) || (cdb[1] & 0x01)) {
			scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
			return -1;
		}
		sc->kind = SCK_OUT;
		sc->spdtl_out = cdb[0] == 0x15 ? cdb[4] : be16(cdb + 7);
		return 0;
	}
}

static void mode_sense(struct scsi_cmd *sc)
{
	const uint8_t *cdb = sc->cdb;
	const struct lun *l = sc->lun;
	bool ten = cdb[0] == 0x5a;
	bool dbd = cdb[1] & 0x08;
	int pc = cdb[2] >> 6;
	uint8_t page = cdb[2] & 0x3f;
	uint8_t d[256];
	uint32_t hl = ten ? 8 : 4, n = hl;

	memset(d, 0, sizeof(d));
	/* device-specific parameter: WP, DPOFUA */
	d[ten ? 3 : 2] = (uint8_t)((lun_write_protected(l) ? 0x80 : 0) | 0x10);
	if (!dbd) {
		uint64_t nb = lun_nblocks(l) > 0xffffffffu ? 0xffffffffu : lun_nblocks(l);
		wbe32(d + n, (uint32_t)nb);
		wbe32(d + n + 4, l->bs & 0xffffff);
		n += 8;
		if (ten)
			wbe16(d + 6, 8);
		else
			d[3] = 8;
	}
	if (page == 0x08 || page == 0x3f)
		n += page_caching(l, pc, d + n);
	if (page == 0x0a || page == 0x3f)
		n += page_control(l, pc, d + n);
	if (page == 0x1c || page == 0x3f)
		n += page_iec(pc, d + n);
	if (ten)
		wbe16(d, (uint16_t)(n - 2));
	else
		d[0] = (uint8_t)(n - 1);
	scsi_put_in(sc, d, n, sc->spdtl_in);
}

/* The settings MODE SELECT may change, applied only when every page in
 * the parameter list is valid */
struct mode_settings {
	bool wce, d_sense, swp;
};

/* One mode page of `plen` bytes at p into *m. False: not one we take. */
static bool select_page(const uint8_t *p, uint32_t plen, struct mode_settings *m)
{
	switch (p[0] & 0x3f) {
	case 0x08: /* Caching */
		if (plen != 20)
			return false;
		m->wce = p[2] & 0x04;
		return true;
	case 0x0a: /* Control */
		if (plen != 12)
			return false;
		m->d_sense = p[2] & 0x04;
		m->swp = p[4] & 0x08;
		return true;
	case 0x1c: /* Informational Exceptions Control */
		return plen == 12;
	default:
		return false;
	}
}

static void mode_select(struct scsi_cmd *sc)
{
	struct lun *l = sc->lun;
	bool ten = sc->cdb[0] == 0x55;
	const uint8_t *d = sc->buf;
	uint32_t len = sc->buf_len < sc->spdtl_out ? sc->buf_len : sc->spdtl_out;
	uint32_t hl = ten ? 8 : 4, o;
	struct mode_settings m = { l->wce, l->d_sense, l->swp };

	if (len == 0)
		return;
	if (len < hl)
		return scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_PARAM_LIST_LENGTH);
	o = hl + (ten ? be16(d + 6) : d[3]); /* past the block descriptors */
	if (o > len)
		return scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_PARAM_LIST_LENGTH);
	while (o + 2 <= len) {
		uint32_t plen = 2u + d[o + 1];

		if (d[o] & 0x40) /* sub-page format: none supported */
			return scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM);
		if (o + plen > len)
			return scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_PARAM_LIST_LENGTH);
		if (!select_page(d + o, plen, &m))
			return scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM);
		o += plen;
	}
	/* all pages were valid: apply them together */
	l->wce = m.wce;
	l->d_sense = m.d_sense;
	l->swp = m.swp;
}

void mode_exec(struct scsi_cmd *sc)
{
	if (sc->cdb[0] == 0x1a || sc->cdb[0] == 0x5a)
		mode_sense(sc);
	else
		mode_select(sc);
}
