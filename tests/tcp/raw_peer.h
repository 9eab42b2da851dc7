/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one raw iSCSI peer of the TCP tests: iSCSI over a plain socket (own
 * CRC32C, every received digest checked) that plays an evil initiator or
 * target against one libidm side of the harness (harness.h), brings that
 * side up to full feature phase, and checks how a bad PDU ended. Used by
 * test_wire, test_badinput, test_badinput_ini and test_terminate.
 */
#ifndef TESTS_TCP_RAW_PEER_H
#define TESTS_TCP_RAW_PEER_H

#include "harness.h"

uint32_t h_crc32c(uint32_t crc, const void *data, size_t len);

struct h_raw {
	int fd;
	bool hd, dd;   /* digests in effect */
	bool closed;   /* EOF or reset seen */
	uint32_t cmdsn, statsn;
	/* h_raw_write sends in pieces of odd sizes, letting libidm read
	 * each before the next (PDUs cut anywhere) */
	bool cut;
	unsigned cut_pos;
};

/* Evil initiator: connect to the harness target. */
int h_raw_connect(struct h *h, struct h_raw *r);
/* Evil target: a listening socket on 127.0.0.1:0; *port gets its port. */
int h_raw_listen(int *port);
/* Accept on lfd while making libidm progress. */
int h_raw_accept(struct h *h, int lfd, struct h_raw *r, int timeout_ms);
void h_raw_close(struct h_raw *r);
/* The end of a raw-peer test: close our socket, then h_fini() (which
 * asserts that libidm left no descriptor open). */
void h_raw_end(struct h *h, struct h_raw *r);

/* Write all bytes, making libidm progress whenever the socket is full.
 * Returns 0 or a negative errno (-EPIPE when the peer is gone). */
int h_raw_write(struct h *h, struct h_raw *r, const void *buf, size_t len);

/* H_RAW_* corrupt flags for h_raw_send_pdu */
#define H_RAW_BAD_HD (1u << 0)
#define H_RAW_BAD_DD (1u << 1)
#define H_RAW_KEEP_LENGTHS (1u << 2) /* don't fill AHS/DSL fields */

/* Send one PDU with padding and the digests in effect. */
int h_raw_send_pdu(struct h *h, struct h_raw *r, const uint8_t bhs[48],
		   const void *ahs, size_t ahs_len, const void *data,
		   size_t data_len, unsigned flags);
/* Receive one PDU (data up to cap bytes kept, the rest discarded) while
 * making libidm progress, checking the digests in effect with our own
 * CRC32C. 0, -ETIMEDOUT, -ECONNRESET (closed), -EBADMSG (digest). */
int h_raw_recv_pdu(struct h *h, struct h_raw *r, uint8_t bhs[48],
		   uint8_t *data, size_t cap, uint32_t *data_len,
		   int timeout_ms);
/* Wait until the peer closed the socket (EOF/reset), discarding what it
 * sends. 0 or -ETIMEDOUT. */
int h_raw_wait_closed(struct h *h, struct h_raw *r, int timeout_ms);

/* Log in as an initiator with the keys of *p (sets r->hd/dd). */
int h_raw_login_initiator(struct h *h, struct h_raw *r,
			  const struct h_params *p);
/* Answer the libidm initiator's Login Request with the keys of *p. */
int h_raw_login_target(struct h *h, struct h_raw *r, const struct h_params *p);

/* ---- a libidm side against the raw peer ---- */

/* How a bad PDU ended. */
enum h_raw_outcome {
	H_RAW_FAILED,  /* exactly one connection_terminate_notify */
	H_RAW_DROPPED, /* PDU dropped (or handed to the caller), connection up */
};

/* Progress conditions: that side reached full feature phase (or failed). */
bool h_target_in_ffp(struct h *h);
bool h_initiator_in_ffp(struct h *h);

/* libidm target + raw initiator logged in with *p; disk of 2 slots. */
void h_raw_evil_initiator(struct h *h, struct h_raw *r, const struct h_params *p,
		       uint32_t slot_cap);
/* ... with n_slots disk slots (up to H_MAX_SLOTS). */
void h_raw_evil_initiator_slots(struct h *h, struct h_raw *r,
				const struct h_params *p, uint32_t slot_cap,
				size_t n_slots);
/* libidm initiator + raw target logged in with *p; 2 slots. */
void h_raw_evil_target(struct h *h, struct h_raw *r, const struct h_params *p,
		    uint32_t slot_cap);

/* After a bad PDU to the libidm target: wait for the terminate notify;
 * without one (and allow_drop) check that the connection still answers a
 * NOP-Out ping. Asserts the contract either way; logs and returns what
 * happened. */
enum h_raw_outcome h_raw_target_outcome(struct h *h, struct h_raw *r,
				  bool allow_drop, const char *what);
/* Same for the libidm initiator (the raw target sends a NOP-In). */
enum h_raw_outcome h_raw_initiator_outcome(struct h *h, struct h_raw *r,
				     bool allow_drop, const char *what);

/* After a well-framed bad PDU to the libidm target (doc/api.md 7.1):
 * the harness target got it with no task and answered with a Reject of
 * `reason` echoing `sent`, then the connection still answers a NOP-Out. */
void h_raw_expect_reject(struct h *h, struct h_raw *r, const uint8_t sent[48],
			 uint8_t reason, const char *what);

/* The side failed exactly once: one connection_terminate_notify, a
 * reason in idm_conn_error(), no callback after it. */
void h_raw_assert_failed_once(const struct h_side *s, const char *what);

/* Raw initiator: send a SCSI WRITE/READ of len at disk slot 0. */
void h_raw_send_cmd(struct h *h, struct h_raw *r, bool write, uint32_t itt,
		 uint32_t len);
/* Receive PDUs until one with opcode op arrives (others are skipped). */
void h_raw_recv_op(struct h *h, struct h_raw *r, uint8_t op, uint8_t bhs[48]);

/* Build a Data-Out / Data-In BHS. */
void h_raw_data_bhs(uint8_t bhs[48], uint8_t op, uint32_t itt, uint32_t ttt,
		 uint32_t sn, uint32_t offset, bool final);

/* true when nothing was written in [off, off+len) of disk slot 0. */
bool h_raw_disk_untouched(struct h *h, uint32_t off, uint32_t len);
/* true when nothing was written in [off, off+len) of initiator slot 0. */
bool h_raw_ibuf_untouched(struct h *h, uint32_t off, uint32_t len);

#endif
