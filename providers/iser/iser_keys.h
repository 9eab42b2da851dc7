/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Key policy of the iSER provider (RFC 7145 section 6, 8.1, 11): what the
 * negotiated keys mean for buffer sizes and queue depths. Pure functions of
 * struct idm_conn_params, unit-tested on the host.
 */
#ifndef IDM_ISER_KEYS_H
#define IDM_ISER_KEYS_H

#include <libidm/keys.h>
#include <libidm/provider.h>

/* Receive provisioning (RFC 7145 8.1: Sends are not flow controlled).
 * ISER_CMD_WINDOW: commands assumed in flight when the caller did not say
 * (idm_conn_set_cmd_window). ISER_RX_SPARE: buffers beyond the window's
 * needs, for immediate PDUs (NOP-Out, TMF) and the peer's answers to our
 * own requests. ISER_RX_CAP and ISER_RX_BYTES bound one connection: at
 * most this many buffers and, above the configured minimum depth, this
 * many bytes of them; beyond that the RC receiver-not-ready retry paces
 * the peer. */
#define ISER_CMD_WINDOW 8u
#define ISER_RX_SPARE 16u
#define ISER_RX_CAP 4096u
#define ISER_RX_BYTES (32u << 20)
/* Data bytes a pooled send buffer holds (bigger control PDUs are rare). */
#define ISER_TX_POOL_DSL 8192u
/* AHS we accept when the peer declared "no limit" (MaxAHSLength=0). */
#define ISER_AHS_CAP 1024u

struct iser_sizes {
	uint32_t rx_msg;   /* bytes of one receive buffer */
	uint32_t tx_msg;   /* bytes of one send buffer (header+BHS+AHS+data) */
	uint32_t rx_depth; /* receive buffers posted in full feature phase */
	uint32_t tx_depth; /* send buffers */
};

/* Force what RFC 7145 6.1/6.6 imply under RDMAExtensions=Yes (digests
 * None). Returns true if something had to be changed. */
bool iser_keys_force(struct idm_conn_params *p);

/* Check values the iSER provider cannot work with; 0 or -EINVAL with a
 * reason in err. */
int iser_keys_check(const struct idm_conn_params *p, char *err, size_t errlen);

/* Sends one command may cost the receiver: a target gets the command
 * (with its immediate data) and, with InitialR2T=No, the unsolicited
 * Data-Out that fills FirstBurstLength in TargetRecvDataSegmentLength
 * pieces; an initiator gets one SCSI Response. */
uint32_t iser_rx_per_cmd(const struct idm_conn_params *p, enum idm_role role);

/* Sizes for the login phase (small, section 11) and for full feature phase
 * from the negotiated values and the caller's command window (0: unknown,
 * ISER_CMD_WINDOW). `rx_depth` is the configured minimum (0: the
 * default); a declared MaxOutstandingUnexpectedPDUs + ISER_RX_SPARE raises
 * it (up to ISER_RX_CAP). Then rx_depth = min(max(window x
 * iser_rx_per_cmd + ISER_RX_SPARE, minimum), max(minimum, ISER_RX_BYTES /
 * rx_msg), ISER_RX_CAP). */
void iser_sizes_login(struct iser_sizes *s);
void iser_sizes_ffp(struct iser_sizes *s, const struct idm_conn_params *p,
		    enum idm_role role, uint32_t rx_depth, uint32_t window);

/* Shared receive queue (iser_srq.c): one per context and device, its
 * buffers of one size, ISER_SRQ_DSL of data: the iSCSI default segment,
 * and the TargetRecvDataSegmentLength Linux's iSER initiator negotiates
 * (it does not offer the key), so that a queue of them serves a kernel
 * initiator's 32 Sends per 256 KiB first burst as its own ring did. A
 * connection whose own declared RecvDataSegmentLength is larger cannot
 * use it (iser_srq_fits): the caller declares at most
 * IDM_SHARED_RECV_DSL with IDM_CTX_SHARED_RECV.
 *
 * The cap in count is ISER_RX_CAP: every connection's receive CQ has room
 * for that many completions (ISER_RQ_DEPTH), so even one connection
 * taking every shared buffer cannot overrun its CQ; and it is above the
 * 3912 buffers a kernel initiator's connection gets on a ring of its own
 * (window 128, 32 Sends a command, within ISER_RX_BYTES), so a lone
 * session meets no receiver-not-ready it did not meet before. 4096
 * buffers of 9 KiB are 37 MiB, for 64 sessions as for one (instead of
 * 64 x 32 MiB). ISER_SRQ_BYTES, the cap in bytes, twice one connection's
 * ISER_RX_BYTES, binds only if the buffers ever grow.
 * ISER_SRQ_STEP: buffers added at once, at least, whenever the queue
 * grows (one registration per step, not per buffer). */
#define ISER_SRQ_DSL IDM_SHARED_RECV_DSL
#define ISER_SRQ_BYTES (64u << 20)
#define ISER_SRQ_STEP 16u

/* Bytes of one shared receive buffer: header, BHS, the largest AHS we
 * accept and ISER_SRQ_DSL of data. */
uint32_t iser_srq_msg_size(void);
/* Can a connection whose receive buffers are rx_msg bytes (struct
 * iser_sizes) take the shared ones? */
bool iser_srq_fits(uint32_t rx_msg);
/* The most buffers a shared queue of msg-byte buffers holds: the caps
 * above and the device's limit (max_srq_wr; 0: none known). */
uint32_t iser_srq_cap(uint32_t msg, uint32_t dev_max);
/* How many buffers the queue should have: the sum of what its
 * connections would each have posted (want), at most cap; and, when
 * fewer than a low-water mark (an eighth, at least ISER_SRQ_STEP) are
 * still posted, ISER_SRQ_STEP or a quarter more than it has, so that a
 * burst of unsolicited data across many connections finds buffers.
 * Never fewer than it has (buffers are not taken back while connections
 * are attached). */
uint32_t iser_srq_target(uint64_t want, uint32_t have, uint32_t posted,
			 uint32_t cap);

#endif
