/* SPDX-License-Identifier: BSD-2-Clause */
/* One SCSI command through the emulation, for the unit tests of
 * examples/target and tests/cli (the same steps scsi_io.c takes around
 * a transport, minus the transport). */
#include <string.h>

#include "scsi_run.h"
#include "target.h"

/* The target the SCSI code names (INQUIRY, REPORT LUNS) */
struct target g_tgt = { .name = "iqn.2026-11.org.libidm:unit" };

/* static: the returned command points at it after scsi_run returns */
static struct lun *luns[1];

struct scsi_cmd scsi_run(struct lun *l, uint8_t *buf, uint32_t size,
			 const uint8_t *cdb, const void *out, uint32_t len)
{
	return scsi_run_opt(l, buf, size, 0, cdb, out, len);
}

struct scsi_cmd scsi_run_opt(struct lun *l, uint8_t *buf, uint32_t size,
			     uint32_t opt_io, const uint8_t *cdb,
			     const void *out, uint32_t len)
{
	struct scsi_cmd sc;

	luns[0] = l;
	memset(&sc, 0, sizeof(sc));
	sc.cdb = cdb;
	sc.lun = l;
	sc.luns = luns;
	sc.nluns = 1;
	sc.max_io = size;
	sc.opt_io = opt_io;
	sc.edtl = len;
	if (scsi_prepare(&sc) < 0)
		return sc;
	sc.buf = buf;
	if (sc.kind == SCK_WRITE || sc.kind == SCK_OUT) {
		memcpy(buf, out, len);
		sc.buf_len = len < sc.spdtl_out ? len : sc.spdtl_out;
	} else {
		sc.buf_len = len < sc.spdtl_in ? len : sc.spdtl_in;
	}
	scsi_exec(&sc);
	return sc;
}
