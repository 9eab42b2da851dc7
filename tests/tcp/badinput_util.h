/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Shared steps of the bad-input and terminate tests: bring up a libidm
 * side against a raw peer, and check how a bad PDU ended.
 */
#ifndef TESTS_TCP_BADINPUT_UTIL_H
#define TESTS_TCP_BADINPUT_UTIL_H

#include "harness.h"

/* How a bad PDU ended. */
enum bi_outcome {
	BI_FAILED,  /* exactly one connection_terminate_notify */
	BI_DROPPED, /* PDU dropped (or handed to the caller), connection up */
};

/* libidm target + raw initiator logged in with *p; disk of 2 slots. */
void bi_evil_initiator(struct h *h, struct h_raw *r, const struct h_params *p,
		       uint32_t slot_cap);
/* libidm initiator + raw target logged in with *p; 2 slots. */
void bi_evil_target(struct h *h, struct h_raw *r, const struct h_params *p,
		    uint32_t slot_cap);

/* After a bad PDU to the libidm target: wait for the terminate notify;
 * without one (and allow_drop) check that the connection still answers a
 * NOP-Out ping. Asserts the contract either way; logs and returns what
 * happened. */
enum bi_outcome bi_target_outcome(struct h *h, struct h_raw *r,
				  bool allow_drop, const char *what);
/* Same for the libidm initiator (the raw target sends a NOP-In). */
enum bi_outcome bi_initiator_outcome(struct h *h, struct h_raw *r,
				     bool allow_drop, const char *what);

/* The side failed exactly once: one connection_terminate_notify, a
 * reason in idm_conn_error(), no callback after it. */
void bi_assert_failed_once(const struct h_side *s, const char *what);

/* Raw initiator: send a SCSI WRITE/READ of len at disk slot 0. */
void bi_send_cmd(struct h *h, struct h_raw *r, bool write, uint32_t itt,
		 uint32_t len);
/* Receive PDUs until one with opcode op arrives (others are skipped). */
void bi_recv_op(struct h *h, struct h_raw *r, uint8_t op, uint8_t bhs[48]);

/* Build a Data-Out / Data-In BHS. */
void bi_data_bhs(uint8_t bhs[48], uint8_t op, uint32_t itt, uint32_t ttt,
		 uint32_t sn, uint32_t offset, bool final);

/* true when nothing was written in [off, off+len) of disk slot 0. */
bool bi_disk_untouched(struct h *h, uint32_t off, uint32_t len);
/* true when nothing was written in [off, off+len) of initiator slot 0. */
bool bi_ibuf_untouched(struct h *h, uint32_t off, uint32_t len);

#endif
