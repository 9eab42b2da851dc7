/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Persistent reservations (SPC-4 5.13, 6.15, 6.16): PERSISTENT RESERVE IN
 * (READ KEYS, READ RESERVATION, REPORT CAPABILITIES, READ FULL STATUS) and
 * OUT (REGISTER, REGISTER AND IGNORE EXISTING KEY, RESERVE, RELEASE,
 * CLEAR, PREEMPT, PREEMPT AND ABORT), all six reservation types, and the
 * access check every other command goes through.
 *
 * An I_T nexus is named by its iSCSI initiator port ("name,i,0xISID"), so
 * registrations survive reconnects as SPC-4 intends. State lives in
 * memory only (no APTPL), and no unit attentions are raised.
 */
#include "scsi.h"

#include <pthread.h>
#include <string.h>

enum {
	PR_WE = 1, PR_EA = 3, PR_WERO = 5, PR_EARO = 6, PR_WEAR = 7, PR_EAAR = 8,
};

static bool all_registrants(uint8_t type)
{
	return type == PR_WEAR || type == PR_EAAR;
}

static bool registrants_only(uint8_t type)
{
	return type == PR_WERO || type == PR_EARO || all_registrants(type);
}

static struct pr_reg *find_reg(struct lun *l, const char *iport)
{
	for (int i = 0; i < l->pr.nregs; i++)
		if (!strcmp(l->pr.regs[i].iport, iport))
			return &l->pr.regs[i];
	return NULL;
}

static void drop_reg(struct lun *l, struct pr_reg *r)
{
	struct pr_state *p = &l->pr;
	bool holder = p->reserved && !all_registrants(p->type) &&
		      !strcmp(p->holder, r->iport);

	*r = p->regs[--p->nregs];
	/* SPC-4 5.13.11: a holder that unregisters releases the reservation;
	 * an all-registrants one goes only with the last registrant */
	if (holder || (p->reserved && all_registrants(p->type) && p->nregs == 0))
		p->reserved = false;
}

static bool is_holder(const struct lun *l, const char *iport, const struct pr_reg *reg)
{
	if (!l->pr.reserved)
		return false;
	if (all_registrants(l->pr.type))
		return reg != NULL;
	return !strcmp(l->pr.holder, iport);
}

/* SPC-4 table 55: may this command run against the reservation? */
static bool allowed_locked(const struct scsi_cmd *sc)
{
	const struct lun *l = sc->lun;
	const uint8_t op = sc->cdb[0];
	const struct pr_reg *reg;
	bool write;

	if (!l->pr.reserved)
		return true;
	switch (op) {
	case 0x12: case 0xa0: case 0x03: case 0x00: case 0x25: case 0x5e: case 0x5f:
	case 0xa3:
		return true;
	case 0x9e: /* READ CAPACITY(16), GET LBA STATUS */
		return true;
	case 0x08: case 0x28: case 0xa8: case 0x88: /* reads */
	case 0x2f: case 0xaf: case 0x8f:             /* verify */
	case 0x34: case 0x90:                        /* pre-fetch */
	case 0x1a: case 0x5a:                        /* mode sense */
		write = false;
		break;
	default:
		write = true;
		break;
	}
	reg = find_reg((struct lun *)l, sc->iport);
	if (is_holder(l, sc->iport, reg))
		return true;
	if (registrants_only(l->pr.type) && reg)
		return true;
	/* WE types let everyone read; EA types nobody else */
	if (!write && (l->pr.type == PR_WE || l->pr.type == PR_WERO || l->pr.type == PR_WEAR))
		return true;
	return false;
}

/* Loops share the LUNs: the reservation state changes under this lock
 * (PERSISTENT RESERVE commands only); a command on a LUN that has no
 * registration reads one atomic flag and takes no lock. */
static pthread_mutex_t pr_lock = PTHREAD_MUTEX_INITIALIZER;

bool pr_allowed(const struct scsi_cmd *sc)
{
	bool ok;

	if (!sc->lun || !sc->iport || !__atomic_load_n(&sc->lun->pr_held, __ATOMIC_ACQUIRE))
		return true;
	pthread_mutex_lock(&pr_lock);
	ok = allowed_locked(sc);
	pthread_mutex_unlock(&pr_lock);
	return ok;
}

int pr_prepare(struct scsi_cmd *sc)
{
	const uint8_t *cdb = sc->cdb;
	uint8_t sa = cdb[1] & 0x1f;

	if (!sc->iport) {
		scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
		return -1;
	}
	if (cdb[0] == 0x5e) {
		if (sa > 3) {
			scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
			return -1;
		}
		sc->kind = SCK_IN;
		sc->spdtl_in = be16(cdb + 7);
		return 0;
	}
	/* PERSISTENT RESERVE OUT: REGISTER AND MOVE (7) is not supported */
	if (sa > 6) {
		scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
		return -1;
	}
	if (be32(cdb + 5) != 24) {
		scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_PARAM_LIST_LENGTH);
		return -1;
	}
	sc->kind = SCK_OUT;
	sc->spdtl_out = 24;
	return 0;
}

/* One READ FULL STATUS descriptor at e: returns its length */
static uint32_t full_status_entry(const struct lun *l, const struct pr_reg *r, uint8_t *e)
{
	size_t il = strlen(r->iport) + 1;
	uint32_t tl = (uint32_t)(4 + ((il + 3) & ~(size_t)3));

	wbe64(e, r->key);
	if (is_holder(l, r->iport, r)) {
		e[12] = 0x01; /* R_HOLDER */
		e[13] = l->pr.type;
	}
	e[12] |= 0x02;        /* ALL_TG_PT: one target port anyway */
	wbe16(e + 18, 1);     /* relative target port identifier */
	wbe32(e + 20, tl);
	e[24] = 0x45;         /* iSCSI initiator port TransportID */
	wbe16(e + 26, (uint16_t)(tl - 4));
	memcpy(e + 28, r->iport, il);
	return 24 + tl;
}

static void prin(struct scsi_cmd *sc)
{
	struct lun *l = sc->lun;
	struct pr_state *p = &l->pr;
	uint8_t d[8 + PR_MAX_REGS * (24 + 264)];
	uint32_t n = 8;

	memset(d, 0, sizeof(d));
	wbe32(d, p->generation);
	switch (sc->cdb[1] & 0x1f) {
	case 0: /* READ KEYS */
		for (int i = 0; i < p->nregs; i++, n += 8)
			wbe64(d + n, p->regs[i].key);
		break;
	case 1: /* READ RESERVATION */
		if (p->reserved) {
			struct pr_reg *h = all_registrants(p->type) ? NULL : find_reg(l, p->holder);
			wbe64(d + 8, h ? h->key : 0);
			d[21] = p->type; /* scope 0: logical unit */
			n += 16;
		}
		break;
	case 2: /* REPORT CAPABILITIES */
		wbe16(d, 8);
		d[2] = 0x10;        /* CRH: RESERVE(6) is refused while PR exist */
		d[3] = 0x80 | 0x10; /* TMV, ALLOW COMMANDS 001b */
		d[4] = 0x80 | 0x40 | 0x20 | 0x08 | 0x02;
		d[5] = 0x01;
		scsi_put_in(sc, d, 8, be16(sc->cdb + 7));
		return;
	case 3: /* READ FULL STATUS */
		for (int i = 0; i < p->nregs; i++)
			n += full_status_entry(l, &p->regs[i], d + n);
		break;
	}
	wbe32(d + 4, n - 8);
	scsi_put_in(sc, d, n, be16(sc->cdb + 7));
}

static void conflict(struct scsi_cmd *sc)
{
	sc->status = SAM_RESERVATION_CONFLICT;
	sc->sense_len = 0;
}

/* REGISTER (sa 0) and REGISTER AND IGNORE EXISTING KEY (sa 6): add,
 * change or (service action key 0) drop the I_T nexus' registration */
static void pr_register(struct scsi_cmd *sc, struct pr_reg *reg, uint8_t sa, uint64_t key,
			uint64_t sakey)
{
	struct lun *l = sc->lun;
	struct pr_state *p = &l->pr;

	if (sa == 0 && (reg ? reg->key != key : key != 0))
		return conflict(sc);
	if (!reg && sakey) {
		if (p->nregs == PR_MAX_REGS)
			return scsi_sense(sc, SK_ILLEGAL_REQUEST, 0x5504); /* registrations full */
		reg = &p->regs[p->nregs++];
		memset(reg, 0, sizeof(*reg));
		strncpy(reg->iport, sc->iport, sizeof(reg->iport) - 1);
		reg->key = sakey;
	} else if (reg && sakey) {
		reg->key = sakey;
	} else if (reg) {
		drop_reg(l, reg);
	}
	p->generation++;
}

static void pr_reserve(struct scsi_cmd *sc, const struct pr_reg *reg, uint8_t scope,
		       uint8_t type)
{
	struct pr_state *p = &sc->lun->pr;

	if (scope != 0 || !(type == PR_WE || type == PR_EA || registrants_only(type)))
		return scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_CDB);
	if (p->reserved) {
		if (!is_holder(sc->lun, sc->iport, reg) || p->type != type)
			return conflict(sc);
		return;
	}
	p->reserved = true;
	p->type = type;
	strncpy(p->holder, sc->iport, sizeof(p->holder) - 1);
	p->holder[sizeof(p->holder) - 1] = '\0';
}

static void pr_release(struct scsi_cmd *sc, const struct pr_reg *reg, uint8_t scope,
		       uint8_t type)
{
	struct pr_state *p = &sc->lun->pr;

	if (!p->reserved || !is_holder(sc->lun, sc->iport, reg))
		return;
	if (scope != 0 || p->type != type)
		return scsi_sense(sc, SK_ILLEGAL_REQUEST, 0x2604); /* invalid release of PR */
	p->reserved = false;
}

/* Drop the registrations with key `sakey` (0: all) but the nexus' own */
static void drop_regs_with(struct pr_state *p, const struct pr_reg *reg, uint64_t sakey)
{
	for (int i = 0; i < p->nregs;) {
		struct pr_reg *r = &p->regs[i];
		if (r != reg && (sakey == 0 || r->key == sakey)) {
			p->regs[i] = p->regs[--p->nregs];
			if (&p->regs[i] == reg) /* our entry moved */
				reg = &p->regs[i];
			continue;
		}
		i++;
	}
}

/* PREEMPT (AND ABORT): tasks are not aborted here */
static void pr_preempt(struct scsi_cmd *sc, const struct pr_reg *reg, uint8_t type,
		       uint64_t sakey)
{
	struct pr_state *p = &sc->lun->pr;
	bool took = false;

	if (!sakey && !(p->reserved && all_registrants(p->type)))
		return scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM);
	if (p->reserved && !all_registrants(p->type)) {
		struct pr_reg *h = find_reg(sc->lun, p->holder);
		took = h && h->key == sakey;
	} else if (p->reserved) {
		took = sakey == 0;
	}
	drop_regs_with(p, reg, sakey);
	if (took) {
		p->reserved = true;
		p->type = type;
		strncpy(p->holder, sc->iport, sizeof(p->holder) - 1);
	}
	p->generation++;
}

static void prout(struct scsi_cmd *sc)
{
	struct pr_state *p = &sc->lun->pr;
	const uint8_t *cdb = sc->cdb, *d = sc->buf;
	uint8_t sa = cdb[1] & 0x1f, scope = cdb[2] >> 4, type = cdb[2] & 0x0f;
	uint64_t key;
	struct pr_reg *reg;

	if (sc->buf_len < 24)
		return scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_PARAM_LIST_LENGTH);
	key = be64(d);
	/* SPEC_I_PT and APTPL (persist through power loss) are not supported */
	if (d[20] & 0x09)
		return scsi_sense(sc, SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD_IN_PARAM);
	reg = find_reg(sc->lun, sc->iport);
	if (sa == 0 || sa == 6)
		return pr_register(sc, reg, sa, key, be64(d + 8));
	/* every other action needs a registration with the right key */
	if (!reg || reg->key != key)
		return conflict(sc);
	switch (sa) {
	case 1:
		return pr_reserve(sc, reg, scope, type);
	case 2:
		return pr_release(sc, reg, scope, type);
	case 3: /* CLEAR */
		p->nregs = 0;
		p->reserved = false;
		p->generation++;
		return;
	case 4: case 5:
		return pr_preempt(sc, reg, type, be64(d + 8));
	}
}

void pr_exec(struct scsi_cmd *sc)
{
	pthread_mutex_lock(&pr_lock);
	if (sc->cdb[0] == 0x5e)
		prin(sc);
	else
		prout(sc);
	__atomic_store_n(&sc->lun->pr_held, sc->lun->pr.nregs > 0 || sc->lun->pr.reserved,
			 __ATOMIC_RELEASE);
	pthread_mutex_unlock(&pr_lock);
}
