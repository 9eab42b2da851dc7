/* SPDX-License-Identifier: BSD-2-Clause */
/* iser_stag.c: the STags an initiator advertises for a command. */
#ifndef IDM_ISER_STAG_H
#define IDM_ISER_STAG_H

#include "iser.h"

enum { STAG_READ = 0, STAG_WRITE = 1 };

/* Advertise [addr, addr+len) of the buffer of mr as t's STag idx. */
int iser_stag_advertise(struct iser_conn *ic, struct idm_task *t, int idx,
			struct ibv_mr *mr, uint8_t *addr, uint32_t len);
/* Did the receive of wc invalidate an STag (Send with Invalidate)? */
bool iser_wc_invalidated(const struct ibv_wc *wc, const struct iser_task *it);
/* The peer invalidated rkey: forget it. False if t never advertised it. */
bool iser_stag_remote_inv(struct iser_conn *ic, struct iser_task *it,
			  uint32_t rkey);
/* Invalidate STag idx of t locally; with track t waits for it. */
int iser_stag_local_inv(struct iser_conn *ic, struct idm_task *t, int idx,
			bool track);
/* The task ends: revoke or recycle every window it still holds. */
void iser_stags_release(struct iser_conn *ic, struct idm_task *t);

#endif
