/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PDU framing of iSCSI over TCP (RFC 7143 11.2): the lengths a BHS
 * announces and the BHS of the PDUs the provider generates itself
 * (Data-In, Data-Out, R2T, DataACK SNACK). Pure functions, unit tested.
 * Which opcodes each side may receive is the core's table
 * (idm_prov_opcode_check).
 */
#ifndef LIBIDM_TCP_PDU_H
#define LIBIDM_TCP_PDU_H

#include <stdbool.h>
#include <stdint.h>

#include <libidm/iscsi.h>
#include <libidm/keys.h>

/* Largest TotalAHSLength accepted: an extended CDB of 260 bytes plus a
 * bidirectional read length AHS need well under this. */
#define TCP_MAX_AHS_LEN 512u

struct tcp_pdu_lens {
	uint32_t ahs;	  /* TotalAHSLength in bytes */
	uint32_t dsl;	  /* DataSegmentLength */
	uint32_t pad;	  /* 0..3 */
	uint32_t hdr;	  /* BHS + AHS + header digest */
	uint32_t trailer; /* pad + data digest (0 when dsl == 0) */
	uint64_t total;	  /* the whole PDU on the wire */
};

/* Decode the lengths of a received BHS and check them: -EMSGSIZE when the
 * AHS exceeds TCP_MAX_AHS_LEN or the data segment exceeds max_dsl. */
int tcp_pdu_lens(const uint8_t *bhs, bool hdigest, bool ddigest,
		 uint32_t max_dsl, struct tcp_pdu_lens *l);

/* Data-In from the caller's template: the fields libidm owns are set, the
 * status fields kept only when `status` (S bit on this PDU). */
void tcp_pdu_datain(uint8_t *out, const uint8_t *tmpl, uint32_t len,
		    uint32_t ttt, uint32_t datasn, uint32_t offset, bool final,
		    bool ack, bool status);

/* Data-Out (initiator). */
void tcp_pdu_dataout(uint8_t *out, const uint8_t *lun, uint32_t itt,
		     uint32_t ttt, uint32_t exp_statsn, uint32_t datasn,
		     uint32_t offset, uint32_t len, bool final);

/* R2T from the caller's template. */
void tcp_pdu_r2t(uint8_t *out, const uint8_t *tmpl, uint32_t ttt,
		 uint32_t r2tsn, uint32_t offset, uint32_t len);

/* DataACK SNACK (RFC 7143 11.16): acknowledges Data-In below begrun. */
void tcp_pdu_dataack(uint8_t *out, const uint8_t *lun, uint32_t ttt,
		     uint32_t exp_statsn, uint32_t begrun);

/* Final Login Response that moves to full feature phase with success. */
static inline bool tcp_pdu_login_final_ok(const uint8_t *bhs)
{
	return idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_LOGIN_RSP &&
	       (bhs[1] & IDM_ISCSI_LOGIN_TRANSIT) &&
	       (bhs[1] & IDM_ISCSI_LOGIN_NSG_MASK) == IDM_ISCSI_STAGE_FULL_FEATURE &&
	       bhs[36] == 0;
}

#endif
