/* SPDX-License-Identifier: BSD-2-Clause */
/* lib/buf.c: buffers, as the core checks and addresses them. */
#ifndef LIBIDM_BUF_H
#define LIBIDM_BUF_H

#include "core.h"

/* The address of [off, off+len) of b when it lies in one segment, else
 * NULL (the range must be inside the buffer). */
uint8_t *idmp_buf_range_addr(const struct idm_buf *b, size_t off, size_t len);
/* 0, or -EOPNOTSUPP when b has several segments and the provider lacks
 * IDM_CAP_SCATTER_GATHER. */
int idmp_buf_usable(const struct idm_buf *b, const struct idm_prov_ops *ops);
/* May c use b? A buffer of the connection's domain, always; of another
 * one, only where the provider registers no memory (no buf_release: TCP),
 * since a registration is valid in its own domain only. */
bool idmp_buf_fits_conn(const struct idm_buf *b, const struct idm_conn *c);

#endif
