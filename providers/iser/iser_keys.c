/* SPDX-License-Identifier: BSD-2-Clause */
/* Key policy: buffer sizing and unsolicited-data arithmetic (iser_keys.h). */
#include "iser_keys.h"
#include "iser_wire.h"

#include <errno.h>
#include <stdio.h>

#include <libidm/iscsi.h>

#define ISER_RX_DEPTH_DEFAULT 64u
#define ISER_TX_DEPTH 128u
#define ISER_LOGIN_DEPTH 4u

bool iser_keys_force(struct idm_conn_params *p)
{
	bool changed = p->header_digest || p->data_digest;

	/* RDMA carries its own CRC: digests are None on iSER (6.1). */
	p->header_digest = false;
	p->data_digest = false;
	return changed;
}

int iser_keys_check(const struct idm_conn_params *p, char *err, size_t errlen)
{
	if (p->max_outstanding_unexpected_pdus == 1) {
		/* 6.7: 0 or 2..2^32-1 */
		snprintf(err, errlen, "MaxOutstandingUnexpectedPDUs=1 is not valid");
		return -EINVAL;
	}
	if (p->max_ahs_length == 1) {
		snprintf(err, errlen, "MaxAHSLength=1 is not valid");
		return -EINVAL;
	}
	return 0;
}

static uint32_t ahs_room(uint32_t declared)
{
	if (declared == 0 || declared > ISER_AHS_CAP)
		return ISER_AHS_CAP;
	return (declared + 3u) & ~3u;
}

static uint32_t round64(uint32_t v)
{
	return (v + 63u) & ~63u;
}

void iser_sizes_login(struct iser_sizes *s)
{
	s->rx_msg = round64(ISER_HDR_LEN + IDM_ISCSI_BHS_LEN +
			    IDM_ISCSI_LOGIN_MAX_DATA_SEGMENT_LENGTH);
	s->tx_msg = s->rx_msg;
	s->rx_depth = ISER_LOGIN_DEPTH;
	s->tx_depth = ISER_LOGIN_DEPTH;
}

uint32_t iser_rx_per_cmd(const struct idm_conn_params *p, enum idm_role role)
{
	uint32_t dsl = p->target_recv_dsl ? p->target_recv_dsl : 1u;
	uint32_t imm = 0, rest;

	if (role != IDM_ROLE_TARGET || p->initial_r2t)
		return 1u;
	/* the command carries up to min(FirstBurst, TRDSL) immediate
	 * bytes; Data-Out PDUs of at most TRDSL bring the rest of the
	 * first burst */
	if (p->immediate_data)
		imm = p->first_burst_length < dsl ? p->first_burst_length : dsl;
	rest = p->first_burst_length - imm;
	return 1u + rest / dsl + (rest % dsl != 0);
}

void iser_sizes_ffp(struct iser_sizes *s, const struct idm_conn_params *p,
		    enum idm_role role, uint32_t rx_depth, uint32_t window)
{
	uint32_t rx_dsl = role == IDM_ROLE_TARGET ? p->target_recv_dsl
						  : p->initiator_recv_dsl;
	uint32_t tx_dsl = role == IDM_ROLE_TARGET ? p->initiator_recv_dsl
						  : p->target_recv_dsl;
	uint64_t want, limit;

	/* Never below the login size: the final Login Response or a
	 * Text/NOP may still land in one of these. */
	if (rx_dsl < IDM_ISCSI_LOGIN_MAX_DATA_SEGMENT_LENGTH)
		rx_dsl = IDM_ISCSI_LOGIN_MAX_DATA_SEGMENT_LENGTH;
	if (tx_dsl < IDM_ISCSI_LOGIN_MAX_DATA_SEGMENT_LENGTH)
		tx_dsl = IDM_ISCSI_LOGIN_MAX_DATA_SEGMENT_LENGTH;
	/* The AHS we may receive is bounded by what *we* declared; the
	 * one we send by what the peer declared. Both come as one value. */
	s->rx_msg = round64(ISER_HDR_LEN + IDM_ISCSI_BHS_LEN +
			    ahs_room(p->max_ahs_length) + rx_dsl);
	/* Send buffers carry control PDUs only (data goes by RDMA or, for
	 * immediate and unsolicited data, straight from the caller's
	 * buffer): a peer's large RecvDataSegmentLength must not pin
	 * 128 x 256 KiB per connection. Larger Text/NOP payloads get a
	 * one-off buffer (iser_msg_oneoff). */
	if (tx_dsl > ISER_TX_POOL_DSL)
		tx_dsl = ISER_TX_POOL_DSL;
	s->tx_msg = round64(ISER_HDR_LEN + IDM_ISCSI_BHS_LEN +
			    ahs_room(p->max_ahs_length) + tx_dsl);
	if (!rx_depth)
		rx_depth = ISER_RX_DEPTH_DEFAULT;
	if (!window)
		window = ISER_CMD_WINDOW;
	/* 8.1: the declared MaxOutstandingUnexpectedPDUs plus the expected
	 * responses is a promise: part of the minimum (up to the cap) */
	if (p->max_outstanding_unexpected_pdus &&
	    p->max_outstanding_unexpected_pdus < ISER_RX_CAP &&
	    p->max_outstanding_unexpected_pdus + ISER_RX_SPARE > rx_depth)
		rx_depth = p->max_outstanding_unexpected_pdus + ISER_RX_SPARE;
	/* Every command of the window may be in flight with all the Sends
	 * the negotiated keys let it bring unasked (8.1). */
	want = (uint64_t)window * iser_rx_per_cmd(p, role) + ISER_RX_SPARE;
	if (want < rx_depth)
		want = rx_depth;
	/* Bounded memory: ISER_RX_BYTES of buffers, or the minimum depth
	 * when its buffers alone are larger; never more than ISER_RX_CAP. */
	limit = ISER_RX_BYTES / s->rx_msg;
	if (limit < rx_depth)
		limit = rx_depth;
	if (limit > ISER_RX_CAP)
		limit = ISER_RX_CAP;
	s->rx_depth = (uint32_t)(want < limit ? want : limit);
	s->tx_depth = ISER_TX_DEPTH;
}

uint32_t iser_srq_msg_size(void)
{
	return round64(ISER_HDR_LEN + IDM_ISCSI_BHS_LEN + ISER_AHS_CAP +
		       ISER_SRQ_DSL);
}

bool iser_srq_fits(uint32_t rx_msg)
{
	return rx_msg <= iser_srq_msg_size();
}

uint32_t iser_srq_cap(uint32_t msg, uint32_t dev_max)
{
	uint32_t cap = ISER_SRQ_BYTES / (msg ? msg : 1u);

	if (cap > ISER_RX_CAP)
		cap = ISER_RX_CAP;
	if (dev_max && cap > dev_max)
		cap = dev_max;
	return cap ? cap : 1u;
}

/* Below the low-water mark: grow by a step or a quarter. */
static uint32_t srq_burst_room(uint32_t have, uint32_t posted)
{
	uint32_t low = have / 8u > ISER_SRQ_STEP ? have / 8u : ISER_SRQ_STEP;
	uint32_t step = have / 4u > ISER_SRQ_STEP ? have / 4u : ISER_SRQ_STEP;

	return posted < low ? have + step : have;
}

uint32_t iser_srq_target(uint64_t want, uint32_t have, uint32_t posted,
			 uint32_t cap)
{
	uint64_t t = want > have ? want : have;
	uint32_t burst = srq_burst_room(have, posted);

	if (burst > t)
		t = burst;
	if (t > cap)
		t = cap;
	return t > have ? (uint32_t)t : have;
}
