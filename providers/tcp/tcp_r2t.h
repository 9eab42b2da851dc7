/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tcp_r2t.c: target Get_Data, R2Ts.
 */
#ifndef LIBIDM_TCP_R2T_H
#define LIBIDM_TCP_R2T_H

#include "tcp.h"

void tcp_get_cancel_all(struct tcp_conn *tc, struct idm_task *t);
bool tcp_get_complete_ready(struct tcp_conn *tc, struct idm_task *t);
int tcp_issue_r2ts(struct tcp_conn *tc, struct idm_task *t);
int tcp_get_data(struct idm_task *task, const uint8_t *tmpl,
		 struct idm_buf *buf, size_t buf_off, uint32_t offset,
		 uint32_t length, uint32_t flags);


/* [a0,a1) and [b0,b1) overlap in [*lo, *hi)? */
static inline bool tcp_overlap(uint32_t a0, uint32_t a1, uint32_t b0,
			       uint32_t b1, uint32_t *lo, uint32_t *hi)
{
	*lo = a0 > b0 ? a0 : b0;
	*hi = a1 < b1 ? a1 : b1;
	return *lo < *hi;
}

#endif
