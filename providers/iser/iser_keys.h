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

#endif
