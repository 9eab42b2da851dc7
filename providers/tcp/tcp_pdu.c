/* SPDX-License-Identifier: BSD-2-Clause */
/* PDU framing; see tcp_pdu.h. */
#include "tcp_pdu.h"

#include <errno.h>
#include <string.h>

int tcp_pdu_lens(const uint8_t *bhs, bool hdigest, bool ddigest,
		 uint32_t max_dsl, struct tcp_pdu_lens *l)
{
	l->ahs = idm_iscsi_bhs_ahs_len(bhs);
	l->dsl = idm_iscsi_bhs_data_len(bhs);
	l->pad = idm_iscsi_pad4(l->dsl);
	l->hdr = IDM_ISCSI_BHS_LEN + l->ahs + (hdigest ? IDM_ISCSI_DIGEST_LEN : 0);
	l->trailer = l->dsl ? l->pad + (ddigest ? IDM_ISCSI_DIGEST_LEN : 0) : 0;
	l->total = (uint64_t)l->hdr + l->dsl + l->trailer;
	if (l->ahs > TCP_MAX_AHS_LEN || l->dsl > max_dsl)
		return -EMSGSIZE;
	return 0;
}

void tcp_pdu_datain(uint8_t *out, const uint8_t *tmpl, uint32_t len,
		    uint32_t ttt, uint32_t datasn, uint32_t offset, bool final,
		    bool ack, bool status)
{
	uint8_t flags;

	memcpy(out, tmpl, IDM_ISCSI_BHS_LEN);
	out[0] = IDM_ISCSI_OP_DATA_IN;
	flags = tmpl[1] & (IDM_ISCSI_DATAIN_OVERFLOW | IDM_ISCSI_DATAIN_UNDERFLOW |
			   IDM_ISCSI_DATAIN_STATUS);
	if (!status)
		flags = 0;
	if (final || status)
		flags |= IDM_ISCSI_FLAG_FINAL;
	if (ack)
		flags |= IDM_ISCSI_DATAIN_ACK;
	out[1] = flags;
	out[2] = 0;
	if (!status)
		out[3] = 0; /* Status is valid only with S */
	out[4] = 0;	    /* TotalAHSLength */
	idm_iscsi_bhs_set_data_len(out, len);
	idm_iscsi_put32(out + IDM_ISCSI_BHS_TTT, ttt);
	if (!status) {
		idm_iscsi_put32(out + IDM_ISCSI_BHS_CMDSN, 0); /* StatSN */
		idm_iscsi_put32(out + IDM_ISCSI_BHS_RESIDUAL, 0);
	}
	idm_iscsi_put32(out + IDM_ISCSI_BHS_DATASN, datasn);
	idm_iscsi_put32(out + IDM_ISCSI_BHS_BUF_OFFSET, offset);
}

void tcp_pdu_dataout(uint8_t *out, const uint8_t *lun, uint32_t itt,
		     uint32_t ttt, uint32_t exp_statsn, uint32_t datasn,
		     uint32_t offset, uint32_t len, bool final)
{
	memset(out, 0, IDM_ISCSI_BHS_LEN);
	out[0] = IDM_ISCSI_OP_DATA_OUT;
	out[1] = final ? IDM_ISCSI_FLAG_FINAL : 0;
	idm_iscsi_bhs_set_data_len(out, len);
	memcpy(out + IDM_ISCSI_BHS_LUN, lun, 8);
	idm_iscsi_put32(out + IDM_ISCSI_BHS_ITT, itt);
	idm_iscsi_put32(out + IDM_ISCSI_BHS_TTT, ttt);
	idm_iscsi_put32(out + IDM_ISCSI_BHS_EXP_STATSN, exp_statsn);
	idm_iscsi_put32(out + IDM_ISCSI_BHS_DATASN, datasn);
	idm_iscsi_put32(out + IDM_ISCSI_BHS_BUF_OFFSET, offset);
}

void tcp_pdu_r2t(uint8_t *out, const uint8_t *tmpl, uint32_t ttt,
		 uint32_t r2tsn, uint32_t offset, uint32_t len)
{
	memcpy(out, tmpl, IDM_ISCSI_BHS_LEN);
	out[0] = IDM_ISCSI_OP_R2T;
	out[1] = IDM_ISCSI_FLAG_FINAL;
	out[2] = out[3] = 0;
	out[4] = 0;
	idm_iscsi_bhs_set_data_len(out, 0);
	idm_iscsi_put32(out + IDM_ISCSI_BHS_TTT, ttt);
	idm_iscsi_put32(out + IDM_ISCSI_BHS_DATASN, r2tsn);
	idm_iscsi_put32(out + IDM_ISCSI_BHS_BUF_OFFSET, offset);
	idm_iscsi_put32(out + IDM_ISCSI_BHS_DESIRED_LEN, len);
}

void tcp_pdu_dataack(uint8_t *out, const uint8_t *lun, uint32_t ttt,
		     uint32_t exp_statsn, uint32_t begrun)
{
	memset(out, 0, IDM_ISCSI_BHS_LEN);
	out[0] = IDM_ISCSI_OP_SNACK_REQ;
	out[1] = IDM_ISCSI_FLAG_FINAL | IDM_ISCSI_SNACK_DATA_ACK;
	memcpy(out + IDM_ISCSI_BHS_LUN, lun, 8);
	idm_iscsi_put32(out + IDM_ISCSI_BHS_ITT, IDM_ISCSI_RESERVED_TAG);
	idm_iscsi_put32(out + IDM_ISCSI_BHS_TTT, ttt);
	idm_iscsi_put32(out + IDM_ISCSI_BHS_EXP_STATSN, exp_statsn);
	idm_iscsi_put32(out + IDM_ISCSI_BHS_BUF_OFFSET, begrun); /* BegRun */
	idm_iscsi_put32(out + IDM_ISCSI_BHS_DESIRED_LEN, 0);	 /* RunLength */
}
