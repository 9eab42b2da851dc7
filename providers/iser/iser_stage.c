/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An initiator connection's staging area. iSER names a command's buffer
 * with one STag per direction, and an STag covers one registered region:
 * a range of a scatter-gather buffer (idm_buf_create_iov) over segments
 * that are not adjacent in memory has none. Such a command moves its
 * data through this area instead: the initiator copies the Data-Out
 * range in before the command goes out, and the Data-In range out when
 * the SCSI Response came, every byte counted in payload_copy_bytes
 * (iser_initiator.c). Ranges in one region never come here.
 *
 * The area is one anonymous mapping of IDM_ISER_STAGING_MB, registered
 * once, on the connection's first scattered command (a connection that
 * never sees one costs nothing), cut into ISER_STAGE_UNITS equal units:
 * a command holds a run of adjacent units per direction, found in a
 * 64-bit map, so taking and giving back is a few instructions and no
 * allocation. Per connection, so that with plain MR STags
 * (IDM_ISER_STAG=mr) the rkey reaches only this peer's own staged data.
 */
#include "iser_stage.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

int iser_stage_open(struct iser_conn *ic)
{
	uint32_t bytes = ic->ip->stage_bytes;
	struct iser_stage *s;
	int access = IBV_ACCESS_LOCAL_WRITE;

	if (ic->stage)
		return 0;
	if (!bytes)
		return -EOPNOTSUPP;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	/* bytes is a multiple of 1 MiB: units of 16 KiB or more */
	s->n_units = ISER_STAGE_UNITS;
	s->unit = bytes / ISER_STAGE_UNITS;
	s->size = (size_t)s->unit * s->n_units;
	s->mem = mmap(NULL, s->size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->mem == MAP_FAILED) {
		free(s);
		return -ENOMEM;
	}
	/* as caller buffers are: windows grant the peer's access per I/O;
	 * without them the MR's rkey is the STag */
	if (ic->use_mw)
		access |= IBV_ACCESS_MW_BIND;
	else
		access |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	s->mr = ibv_reg_mr(ic->dev->pd, s->mem, s->size, access);
	if (!s->mr) {
		munmap(s->mem, s->size);
		free(s);
		return -ENOMEM;
	}
	ic->stage = s;
	idm_prov_dbg(ic->ctx, "iser: staging area of %zu bytes (%u units) for "
		     "scattered initiator buffers", s->size, s->n_units);
	return 0;
}

static uint64_t run_mask(uint32_t first, uint32_t n)
{
	return (n >= 64 ? ~0ull : ((1ull << n) - 1)) << first;
}

bool iser_stage_take(struct iser_conn *ic, uint32_t len, uint16_t *slot)
{
	struct iser_stage *s = ic->stage;
	uint32_t n, first;

	if (!s || !len || len > s->size)
		return false;
	n = (uint32_t)(((uint64_t)len + s->unit - 1) / s->unit);
	for (first = 0; first + n <= s->n_units; first++) {
		uint64_t m = run_mask(first, n);

		if (s->busy & m)
			continue;
		s->busy |= m;
		*slot = (uint16_t)(first << 8 | n);
		return true;
	}
	return false;
}

void iser_stage_put(struct iser_conn *ic, uint16_t *slot)
{
	if (!*slot || !ic->stage)
		return;
	ic->stage->busy &= ~run_mask(*slot >> 8, *slot & 0xff);
	*slot = 0;
}

uint8_t *iser_stage_addr(const struct iser_conn *ic, uint16_t slot)
{
	return ic->stage->mem + (size_t)(slot >> 8) * ic->stage->unit;
}

struct ibv_mr *iser_stage_mr(const struct iser_conn *ic)
{
	return ic->stage->mr;
}

void iser_stage_close(struct iser_conn *ic)
{
	struct iser_stage *s = ic->stage;

	if (!s)
		return;
	ibv_dereg_mr(s->mr);
	munmap(s->mem, s->size);
	free(s);
	ic->stage = NULL;
}
