/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The initiator's STags (RFC 7145 7.3.1, 7.3.2, 9.5): type-2 memory
 * windows bound for exactly one I/O on the caller's registered buffer,
 * posted ahead of the command's Send on the same QP, and invalidated
 * before the SCSI Response reaches the caller: by the target's Send with
 * Invalidate, or locally. Without windows (IDM_ISER_STAG=mr, or a device
 * without them) the MR's rkey is the STag and there is nothing to revoke.
 * Windows are recycled through the connection's free list (iser_mw.c).
 */
#include "iser_stag.h"
#include "iser_cq.h"
#include "iser_mw.h"
#include "iser_sq.h"
#include "iser_stage.h"

#include <errno.h>
#include <string.h>

/* Advertise [addr, addr+len) of buf: bind a window (posted now, ordered
 * before the command Send on the same QP) or, without windows, the MR. */
int iser_stag_advertise(struct iser_conn *ic, struct idm_task *t, int idx,
			struct ibv_mr *mr, uint8_t *addr, uint32_t len)
{
	struct iser_task *it = iser_task(t);
	struct ibv_send_wr wr;
	struct iser_op *op;
	struct ibv_mw *mw;
	uint32_t rkey;
	int r;

	if (!ic->use_mw) {
		it->stag[idx] = mr->rkey;
		it->stag_valid[idx] = true;
		return 0;
	}
	r = iser_mw_get(ic, &mw);
	if (r < 0)
		return r;
	op = iser_op_get(ic, ISER_OP_BIND);
	if (!op) {
		iser_mw_put(ic, mw);
		return -EAGAIN;
	}
	iser_op_task(op, t);
	op->bind_mw = mw;
	rkey = ibv_inc_rkey(mw->rkey);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = iser_op_wr_id(ic, op);
	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags =
		idx == STAG_READ ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ;
	r = iser_post(ic, &wr);
	if (r < 0) {
		iser_op_put(ic, op);
		iser_mw_put(ic, mw);
		return r;
	}
	/* mw->rkey becomes the bound key once the bind is posted
	 * (iser_sq_kick): the device names the window by its current key */
	it->mw[idx] = mw;
	it->stag[idx] = rkey;
	it->stag_valid[idx] = true;
	return 0;
}

bool iser_wc_invalidated(const struct ibv_wc *wc, const struct iser_task *it)
{
	if (wc->wc_flags & IBV_WC_WITH_INV)
		return true;
	/* rxe reports the kernel's IB_WC_WITH_INVALIDATE (1 << 2) in the
	 * user CQ, where that bit reads as IBV_WC_IP_CSUM_OK: accept it
	 * when the rkey is one we advertised. */
	return (wc->wc_flags & IBV_WC_IP_CSUM_OK) && wc->invalidated_rkey &&
	       ((it->stag_valid[0] && it->stag[0] == wc->invalidated_rkey) ||
		(it->stag_valid[1] && it->stag[1] == wc->invalidated_rkey));
}


bool iser_stag_remote_inv(struct iser_conn *ic, struct iser_task *it,
			  uint32_t rkey)
{
	bool found = false;
	int i;

	for (i = 0; i < 2; i++) {
		if (it->stag_valid[i] && it->stag[i] == rkey) {
			it->stag_valid[i] = false;
			iser_mw_put(ic, it->mw[i]);
			it->mw[i] = NULL;
			found = true;
		}
	}
	return found;
}

/* Invalidate STag idx of t locally; the window is recycled when that
 * completes. With track, the task waits for it (the response must not
 * reach the caller before); without, the task is being freed and the
 * completion must not name it. */
int iser_stag_local_inv(struct iser_conn *ic, struct idm_task *t, int idx,
			bool track)
{
	struct iser_task *it = iser_task(t);
	struct ibv_send_wr wr;
	struct iser_op *op;
	int r;

	op = iser_op_get(ic, ISER_OP_LINV);
	if (!op)
		return -EAGAIN;
	iser_op_task(op, track ? t : NULL);
	op->mw = it->mw[idx];
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = iser_op_wr_id(ic, op);
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = it->stag[idx];
	r = iser_post(ic, &wr);
	if (r < 0) {
		op->mw = NULL;
		iser_op_put(ic, op);
		return r;
	}
	it->mw[idx] = NULL;
	it->stag_valid[idx] = false;
	if (track) {
		it->linv_pending++;
	} else {
		/* a released task's staged range: the peer may still write
		 * or read there until the window is dead, so its units go
		 * back with the invalidation, not before (else the next
		 * command's data there could meet the old command's) */
		op->stage = it->stage[idx];
		it->stage[idx] = 0;
	}
	return 0;
}

/* A window still bound whose invalidation cannot be posted (no op slot
 * left, or the post failed): the peer could still reach the caller's
 * buffer, which is about to be freed or reused, and a bound type-2
 * window cannot be bound again. The error state cuts the peer off at
 * once (a window is reached only through its QP); the connection fails
 * from the next pass, and its teardown deallocates the window. */
static void revoke_by_qp_error(struct iser_conn *ic)
{
	static const char why[] = "cannot invalidate a memory window: "
				  "connection closed to revoke the peer's access";
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};

	if (ic->fail_later)
		return;
	/* first, so that the flush errors that follow are not the reason */
	if (ic->conn)
		idm_prov_conn_set_error(ic->conn, "iser: %s", why);
	if (ic->qp)
		ibv_modify_qp(ic->qp, &attr, IBV_QP_STATE);
	iser_conn_fail_later(ic, why);
}

/* Windows still valid are invalidated locally while the QP works; the
 * others go back to the free list. */
void iser_stags_release(struct iser_conn *ic, struct idm_task *t)
{
	struct iser_task *it = iser_task(t);
	int i;

	for (i = 0; i < 2; i++) {
		if (!it->mw[i])
			continue;
		/* revoke the peer's access while the QP still works */
		if (it->stag_valid[i] && ic->state == ISER_UP) {
			if (iser_stag_local_inv(ic, t, i, false) == 0)
				continue;
			revoke_by_qp_error(ic);
		}
		iser_mw_put(ic, it->mw[i]);
		it->mw[i] = NULL;
		it->stag_valid[i] = false;
	}
}
