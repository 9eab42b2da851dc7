/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iSCSI wire definitions (RFC 7143 section 11) for callers building and
 * reading Basic Header Segments. Header-only: no symbols, no ABI.
 * All multi-byte fields are big-endian on the wire; use the accessors.
 *
 * Every name here is IDM_ISCSI_* or idm_iscsi_*: RFC 7143's names with
 * libidm's prefix. The Linux kernel (iscsi_proto.h), open-iscsi, tgt and
 * libiscsi define ISCSI_OP_* and friends themselves, so a source file of
 * such a stack can include this header beside its own.
 */
#ifndef LIBIDM_ISCSI_H
#define LIBIDM_ISCSI_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IDM_ISCSI_BHS_LEN 48
#define IDM_ISCSI_DIGEST_LEN 4
#define IDM_ISCSI_RESERVED_TAG 0xffffffffu

/* Opcodes (byte 0, low 6 bits). Byte 0 bit 6 is the Immediate bit. */
enum idm_iscsi_opcode {
	/* initiator */
	IDM_ISCSI_OP_NOP_OUT = 0x00,
	IDM_ISCSI_OP_SCSI_CMD = 0x01,
	IDM_ISCSI_OP_TASK_MGMT_REQ = 0x02,
	IDM_ISCSI_OP_LOGIN_REQ = 0x03,
	IDM_ISCSI_OP_TEXT_REQ = 0x04,
	IDM_ISCSI_OP_DATA_OUT = 0x05,
	IDM_ISCSI_OP_LOGOUT_REQ = 0x06,
	IDM_ISCSI_OP_SNACK_REQ = 0x10,
	/* target */
	IDM_ISCSI_OP_NOP_IN = 0x20,
	IDM_ISCSI_OP_SCSI_RSP = 0x21,
	IDM_ISCSI_OP_TASK_MGMT_RSP = 0x22,
	IDM_ISCSI_OP_LOGIN_RSP = 0x23,
	IDM_ISCSI_OP_TEXT_RSP = 0x24,
	IDM_ISCSI_OP_DATA_IN = 0x25,
	IDM_ISCSI_OP_LOGOUT_RSP = 0x26,
	IDM_ISCSI_OP_R2T = 0x31,
	IDM_ISCSI_OP_ASYNC_MSG = 0x32,
	IDM_ISCSI_OP_REJECT = 0x3f,
};

#define IDM_ISCSI_OPCODE_MASK 0x3f
#define IDM_ISCSI_OP_IMMEDIATE 0x40

/* byte 1 flags */
#define IDM_ISCSI_FLAG_FINAL 0x80
/* SCSI Command */
#define IDM_ISCSI_CMD_READ 0x40
#define IDM_ISCSI_CMD_WRITE 0x20
#define IDM_ISCSI_CMD_ATTR_MASK 0x07
#define IDM_ISCSI_ATTR_UNTAGGED 0
#define IDM_ISCSI_ATTR_SIMPLE 1
#define IDM_ISCSI_ATTR_ORDERED 2
#define IDM_ISCSI_ATTR_HEAD_OF_QUEUE 3
#define IDM_ISCSI_ATTR_ACA 4
/* Data-In */
#define IDM_ISCSI_DATAIN_ACK 0x40
#define IDM_ISCSI_DATAIN_OVERFLOW 0x04
#define IDM_ISCSI_DATAIN_UNDERFLOW 0x02
#define IDM_ISCSI_DATAIN_STATUS 0x01
/* SCSI Response */
#define IDM_ISCSI_RSP_BIDI_OVERFLOW 0x10
#define IDM_ISCSI_RSP_BIDI_UNDERFLOW 0x08
#define IDM_ISCSI_RSP_OVERFLOW 0x04
#define IDM_ISCSI_RSP_UNDERFLOW 0x02
/* Login */
#define IDM_ISCSI_LOGIN_TRANSIT 0x80
#define IDM_ISCSI_LOGIN_CONTINUE 0x40
#define IDM_ISCSI_LOGIN_CSG_SHIFT 2
#define IDM_ISCSI_LOGIN_CSG_MASK 0x0c
#define IDM_ISCSI_LOGIN_NSG_MASK 0x03
#define IDM_ISCSI_STAGE_SECURITY 0
#define IDM_ISCSI_STAGE_OPERATIONAL 1
#define IDM_ISCSI_STAGE_FULL_FEATURE 3
/* Text */
#define IDM_ISCSI_TEXT_CONTINUE 0x40

/* SCSI Response "Response" byte */
#define IDM_ISCSI_RESPONSE_COMPLETED 0x00
#define IDM_ISCSI_RESPONSE_TARGET_FAILURE 0x01

/* Task management functions (byte 1 & 0x7f) */
enum idm_iscsi_tmf {
	IDM_ISCSI_TMF_ABORT_TASK = 1,
	IDM_ISCSI_TMF_ABORT_TASK_SET = 2,
	IDM_ISCSI_TMF_CLEAR_ACA = 3,
	IDM_ISCSI_TMF_CLEAR_TASK_SET = 4,
	IDM_ISCSI_TMF_LUN_RESET = 5,
	IDM_ISCSI_TMF_TARGET_WARM_RESET = 6,
	IDM_ISCSI_TMF_TARGET_COLD_RESET = 7,
	IDM_ISCSI_TMF_TASK_REASSIGN = 8,
};
/* TMF responses */
#define IDM_ISCSI_TMF_RSP_COMPLETE 0
#define IDM_ISCSI_TMF_RSP_NO_TASK 1
#define IDM_ISCSI_TMF_RSP_NO_LUN 2
#define IDM_ISCSI_TMF_RSP_TASK_ALLEGIANT 3
#define IDM_ISCSI_TMF_RSP_NO_FAILOVER 4
#define IDM_ISCSI_TMF_RSP_NOT_SUPPORTED 5
#define IDM_ISCSI_TMF_RSP_AUTH_FAILED 6
#define IDM_ISCSI_TMF_RSP_REJECTED 255

/* Reject reasons */
#define IDM_ISCSI_REJECT_DIGEST_ERROR 0x02
#define IDM_ISCSI_REJECT_SNACK_REJECT 0x03
#define IDM_ISCSI_REJECT_PROTOCOL_ERROR 0x04
#define IDM_ISCSI_REJECT_CMD_NOT_SUPPORTED 0x05
#define IDM_ISCSI_REJECT_IMM_CMD_REJECT 0x06
#define IDM_ISCSI_REJECT_TASK_IN_PROGRESS 0x07
#define IDM_ISCSI_REJECT_INVALID_DATA_ACK 0x08
#define IDM_ISCSI_REJECT_INVALID_PDU_FIELD 0x09
#define IDM_ISCSI_REJECT_OUT_OF_RESOURCES 0x0a
#define IDM_ISCSI_REJECT_NEGOTIATION_RESET 0x0b
#define IDM_ISCSI_REJECT_WAITING_FOR_LOGOUT 0x0c

/* SNACK types (byte 1 & 0x0f) */
#define IDM_ISCSI_SNACK_DATA_R2T 0
#define IDM_ISCSI_SNACK_STATUS 1
#define IDM_ISCSI_SNACK_DATA_ACK 2
#define IDM_ISCSI_SNACK_RDATA 3

/* Field offsets common to most BHS */
#define IDM_ISCSI_BHS_OPCODE 0
#define IDM_ISCSI_BHS_FLAGS 1
#define IDM_ISCSI_BHS_TOTAL_AHS_LEN 4
#define IDM_ISCSI_BHS_DATA_SEG_LEN 5 /* 3 bytes */
#define IDM_ISCSI_BHS_LUN 8          /* 8 bytes */
#define IDM_ISCSI_BHS_ITT 16
#define IDM_ISCSI_BHS_TTT 20         /* also EDTL (SCSI Command), SNACK Tag */
#define IDM_ISCSI_BHS_CMDSN 24       /* StatSN in target PDUs */
#define IDM_ISCSI_BHS_EXP_STATSN 28  /* ExpCmdSN in target PDUs */
#define IDM_ISCSI_BHS_MAX_CMDSN 32
#define IDM_ISCSI_BHS_DATASN 36      /* DataSN / R2TSN / ExpDataSN */
#define IDM_ISCSI_BHS_BUF_OFFSET 40
#define IDM_ISCSI_BHS_DESIRED_LEN 44 /* R2T; Residual Count in Data-In / Rsp */
#define IDM_ISCSI_BHS_RESIDUAL 44
/* SCSI Command */
#define IDM_ISCSI_CMD_EDTL 20
#define IDM_ISCSI_CMD_CDB 32 /* 16 bytes */
/* Responses (since 1.2) */
#define IDM_ISCSI_BHS_RESPONSE 2 /* SCSI, Task Management, Logout Response;
				    Reject: Reason */
#define IDM_ISCSI_BHS_STATUS 3   /* SCSI Response; Data-In with the S bit */
/* Login Request and Response (since 1.2) */
#define IDM_ISCSI_LOGIN_VERSION_MAX 2 /* VersionMax */
#define IDM_ISCSI_LOGIN_VERSION_MIN 3 /* Request; VersionActive in the Response */
#define IDM_ISCSI_LOGIN_ISID 8        /* 6 bytes */
#define IDM_ISCSI_LOGIN_TSIH 14       /* 2 bytes */
#define IDM_ISCSI_LOGIN_CID 20        /* Request, 2 bytes; also Logout Request */
#define IDM_ISCSI_LOGIN_STATUS_CLASS 36  /* Response */
#define IDM_ISCSI_LOGIN_STATUS_DETAIL 37 /* Response */
/* Status-Class values (RFC 7143 11.13.5) */
#define IDM_ISCSI_LOGIN_CLASS_SUCCESS 0
#define IDM_ISCSI_LOGIN_CLASS_REDIRECT 1
#define IDM_ISCSI_LOGIN_CLASS_INITIATOR_ERROR 2
#define IDM_ISCSI_LOGIN_CLASS_TARGET_ERROR 3
/* Asynchronous Message (since 1.2) */
#define IDM_ISCSI_ASYNC_EVENT 36
#define IDM_ISCSI_ASYNC_VCODE 37
#define IDM_ISCSI_ASYNC_PARAM1 38 /* 2 bytes each */
#define IDM_ISCSI_ASYNC_PARAM2 40
#define IDM_ISCSI_ASYNC_PARAM3 42
/* AsyncEvent values (RFC 7143 11.9.1) */
#define IDM_ISCSI_ASYNC_SCSI_EVENT 0
#define IDM_ISCSI_ASYNC_LOGOUT_REQUEST 1 /* Parameter3: seconds to log out in */
#define IDM_ISCSI_ASYNC_DROP_CONNECTION 2
#define IDM_ISCSI_ASYNC_DROP_ALL_CONNECTIONS 3
#define IDM_ISCSI_ASYNC_NEGOTIATION_REQUEST 4
#define IDM_ISCSI_ASYNC_TASK_TERMINATION 5
#define IDM_ISCSI_ASYNC_VENDOR 255
/* Task Management Function Request (since 1.2) */
#define IDM_ISCSI_TMF_REF_CMDSN 32

static inline uint16_t idm_iscsi_get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}
static inline uint32_t idm_iscsi_get24(const uint8_t *p)
{
	return ((uint32_t)p[0] << 16) | ((uint32_t)p[1] << 8) | p[2];
}
static inline uint32_t idm_iscsi_get32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	       ((uint32_t)p[2] << 8) | p[3];
}
static inline uint64_t idm_iscsi_get64(const uint8_t *p)
{
	return ((uint64_t)idm_iscsi_get32(p) << 32) | idm_iscsi_get32(p + 4);
}
static inline void idm_iscsi_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void idm_iscsi_put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}
static inline void idm_iscsi_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}
static inline void idm_iscsi_put64(uint8_t *p, uint64_t v)
{
	idm_iscsi_put32(p, (uint32_t)(v >> 32));
	idm_iscsi_put32(p + 4, (uint32_t)v);
}

static inline uint8_t idm_iscsi_bhs_opcode(const uint8_t *bhs)
{
	return bhs[0] & IDM_ISCSI_OPCODE_MASK;
}
static inline uint32_t idm_iscsi_bhs_ahs_len(const uint8_t *bhs)
{
	return (uint32_t)bhs[IDM_ISCSI_BHS_TOTAL_AHS_LEN] * 4u;
}
static inline uint32_t idm_iscsi_bhs_data_len(const uint8_t *bhs)
{
	return idm_iscsi_get24(bhs + IDM_ISCSI_BHS_DATA_SEG_LEN);
}
static inline void idm_iscsi_bhs_set_data_len(uint8_t *bhs, uint32_t len)
{
	idm_iscsi_put24(bhs + IDM_ISCSI_BHS_DATA_SEG_LEN, len);
}
static inline uint32_t idm_iscsi_bhs_itt(const uint8_t *bhs)
{
	return idm_iscsi_get32(bhs + IDM_ISCSI_BHS_ITT);
}
static inline uint32_t idm_iscsi_pad4(uint32_t len)
{
	return (4u - (len & 3u)) & 3u;
}

/* Serial number arithmetic (RFC 1982, 32 bits) */
static inline int idm_iscsi_sn_lt(uint32_t a, uint32_t b)
{
	return a != b && (uint32_t)(b - a) < 0x80000000u;
}
static inline int idm_iscsi_sn_le(uint32_t a, uint32_t b)
{
	return a == b || idm_iscsi_sn_lt(a, b);
}

#ifdef __cplusplus
}
#endif
#endif /* LIBIDM_ISCSI_H */
