/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Pure transfer arithmetic of the TCP provider (no I/O, no state), kept
 * apart so the unit tests check it directly: how a range splits into
 * Data-In/Data-Out PDUs, where the F bits go, and how R2Ts cut the
 * solicited rest (how much immediate and unsolicited data a write carries
 * is the core's: idm_prov_unsol_plan / idm_prov_unsol_cmd).
 */
#ifndef LIBIDM_TCP_SEGMENT_H
#define LIBIDM_TCP_SEGMENT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Length of the next data PDU of a transfer covering [pos, end), whose
 * sequences (bursts) start at seq_start and are at most mbl bytes: at most
 * dsl bytes, never crossing a burst boundary. *final is set when the PDU
 * ends a burst or the whole range (F bit). Returns 0 when pos >= end.
 * mbl == 0 means "no burst limit" (a single sequence, e.g. one R2T).
 */
uint32_t tcp_seg_next(uint32_t pos, uint32_t end, uint32_t seq_start,
		      uint32_t mbl, uint32_t dsl, bool *final);

/* Number of PDUs tcp_seg_next cuts [start, end) into. */
uint32_t tcp_seg_count(uint32_t start, uint32_t end, uint32_t mbl,
		       uint32_t dsl);

/* Target Get_Data: the first byte of [offset, offset+length) that needs
 * an R2T (unsolicited data covers [0, unsol_end)). */
static inline uint32_t tcp_r2t_start(uint32_t offset, uint32_t unsol_end)
{
	return offset > unsol_end ? offset : unsol_end;
}

/* Desired Data Transfer Length of the next R2T for [pos, end). */
static inline uint32_t tcp_r2t_len(uint32_t pos, uint32_t end, uint32_t mbl)
{
	uint32_t left = end > pos ? end - pos : 0;
	return left < mbl ? left : mbl;
}

/* How many R2Ts the target keeps outstanding per task: the negotiated
 * MaxOutstandingR2T capped by the provider's per-task table. */
static inline uint32_t tcp_r2t_window(uint32_t max_outstanding_r2t,
				      uint32_t cap)
{
	if (max_outstanding_r2t == 0)
		return 1;
	return max_outstanding_r2t < cap ? max_outstanding_r2t : cap;
}

#endif
