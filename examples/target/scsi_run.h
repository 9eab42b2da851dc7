/* SPDX-License-Identifier: BSD-2-Clause */
/* Test harness of idm-target's SCSI emulation (linked into the unit
 * tests only, never into idm-target): one command end to end, without
 * any transport. */
#ifndef IDM_TARGET_SCSI_RUN_H
#define IDM_TARGET_SCSI_RUN_H

#include <stdint.h>

#include "scsi.h"

/* Run `cdb` on LUN `l` (the only LUN of the nexus) with `buf` (`size`
 * bytes, also the largest transfer) as the data buffer: Data-Out copied
 * from `out` (`len` bytes), or room for `len` bytes of Data-In. The
 * returned command carries status, sense and the transfer lengths; a
 * CDB that scsi_prepare() refuses comes back unexecuted, with its sense. */
struct scsi_cmd scsi_run(struct lun *l, uint8_t *buf, uint32_t size,
			 const uint8_t *cdb, const void *out, uint32_t len);
/* The same with the optimal transfer length a session negotiated
 * (scsi_cmd.opt_io: Block Limits' OPTIMAL TRANSFER LENGTH; 0: max_io). */
struct scsi_cmd scsi_run_opt(struct lun *l, uint8_t *buf, uint32_t size,
			     uint32_t opt_io, const uint8_t *cdb,
			     const void *out, uint32_t len);

#endif
