/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_datain.c: target Put_Data (Data-In) and the DataACK SNACK.
 */
#ifndef LIBIDM_TCP_DATAIN_H
#define LIBIDM_TCP_DATAIN_H

#include "tcp.h"

int tcp_put_data(struct idm_task *task, const uint8_t *tmpl,
		 struct idm_buf *buf, size_t buf_off, uint32_t offset,
		 uint32_t length, uint32_t flags);
/* a SNACK Request at the target: a DataACK is acted on here, any other
 * goes to the caller */
enum tcp_rx_verdict tcp_tgt_snack(struct tcp_conn *tc);

#endif
