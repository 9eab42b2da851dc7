/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_sg.c: payload of a scatter-gather buffer range, segment by segment.
 */
#ifndef LIBIDM_TCP_SG_H
#define LIBIDM_TCP_SG_H

#include "tcp.h"

uint32_t tcp_sg_crc32c(uint32_t crc, const struct idm_buf *b, size_t off, size_t len);
/* Data-In source: bytes [buf_off, +length) of buf, by address when they
 * lie in one segment */
void tcp_txd_set_src(struct tcp_txd *d, const struct idm_buf *buf, size_t buf_off,
		     uint32_t length);

#endif
