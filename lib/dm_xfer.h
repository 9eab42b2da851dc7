/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/dm_xfer.c: the record of a task's transfers in flight. */
#ifndef LIBIDM_DM_XFER_H
#define LIBIDM_DM_XFER_H

#include "core.h"

struct idmp_xfer *idmp_xfer_add(struct idm_task *t, enum idm_data_dir dir,
				struct idm_buf *b, size_t buf_off, uint32_t offset,
				uint32_t length);
void idmp_xfer_del(struct idm_task *t, struct idmp_xfer *x);
/* Forget the transfer a completion reports, if recorded. */
void idmp_xfer_done(struct idm_task *t, enum idm_data_dir dir, uint32_t offset,
		    uint32_t length);
void idmp_xfer_drop_all(struct idm_task *t);

#endif
