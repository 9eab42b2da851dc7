/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The shape of the iSCSI definitions an existing stack carries: the names
 * the Linux kernel's include/scsi/iscsi_proto.h defines (tgt and open-iscsi
 * ship copies of it), written here as that file writes them, as macros and
 * inline functions. The namespace test (check_namespace.py) includes this
 * before and after libidm's public headers: a libidm header that defined
 * any of these names, or used one of them as an identifier, would fail to
 * compile or would warn about a redefinition.
 *
 * This is not a copy of the kernel header; it lists names and values from
 * RFC 7143 the way the kernel spells them.
 */
#ifndef LINUX_ISCSI_NAMES_H
#define LINUX_ISCSI_NAMES_H

#include <stdint.h>

#define ISCSI_DRAFT20_VERSION 0x00
#define ISCSI_LISTEN_PORT 3260
#define ISCSI_HDR_LEN 48
#define ISCSI_DIGEST_SIZE 4
#define ISCSI_RESERVED_TAG 0xffffffffU
#define ISCSI_OPCODE_MASK 0x3F

/* Initiator opcodes */
#define ISCSI_OP_NOOP_OUT 0x00
#define ISCSI_OP_SCSI_CMD 0x01
#define ISCSI_OP_SCSI_TMFUNC 0x02
#define ISCSI_OP_LOGIN 0x03
#define ISCSI_OP_TEXT 0x04
#define ISCSI_OP_SCSI_DATA_OUT 0x05
#define ISCSI_OP_LOGOUT 0x06
#define ISCSI_OP_SNACK 0x10
/* Target opcodes */
#define ISCSI_OP_NOOP_IN 0x20
#define ISCSI_OP_SCSI_CMD_RSP 0x21
#define ISCSI_OP_SCSI_TMFUNC_RSP 0x22
#define ISCSI_OP_LOGIN_RSP 0x23
#define ISCSI_OP_TEXT_RSP 0x24
#define ISCSI_OP_SCSI_DATA_IN 0x25
#define ISCSI_OP_LOGOUT_RSP 0x26
#define ISCSI_OP_R2T 0x31
#define ISCSI_OP_ASYNC_EVENT 0x32
#define ISCSI_OP_REJECT 0x3f
#define ISCSI_OP_RETRY 0x80
#define ISCSI_OP_IMMEDIATE 0x40

/* Flags */
#define ISCSI_FLAG_CMD_FINAL 0x80
#define ISCSI_FLAG_CMD_READ 0x40
#define ISCSI_FLAG_CMD_WRITE 0x20
#define ISCSI_FLAG_CMD_ATTR_MASK 0x07
#define ISCSI_ATTR_UNTAGGED 0
#define ISCSI_ATTR_SIMPLE 1
#define ISCSI_ATTR_ORDERED 2
#define ISCSI_ATTR_HEAD_OF_QUEUE 3
#define ISCSI_ATTR_ACA 4
#define ISCSI_FLAG_DATA_ACK 0x40
#define ISCSI_FLAG_DATA_OVERFLOW 0x04
#define ISCSI_FLAG_DATA_UNDERFLOW 0x02
#define ISCSI_FLAG_DATA_STATUS 0x01
#define ISCSI_FLAG_LOGIN_TRANSIT 0x80
#define ISCSI_FLAG_LOGIN_CONTINUE 0x40
#define ISCSI_FLAG_LOGIN_CURRENT_STAGE_MASK 0x0C
#define ISCSI_FLAG_LOGIN_NEXT_STAGE_MASK 0x03
#define ISCSI_FLAG_TEXT_CONTINUE 0x40
#define ISCSI_FLAG_LOGOUT_REASON_MASK 0x7F
#define ISCSI_FLAG_SNACK_TYPE_DATA 0
#define ISCSI_FLAG_SNACK_TYPE_R2T 0
#define ISCSI_FLAG_SNACK_TYPE_STATUS 1
#define ISCSI_FLAG_SNACK_TYPE_DATA_ACK 2
#define ISCSI_FLAG_SNACK_TYPE_RDATA 3
#define ISCSI_FLAG_TM_FUNC_MASK 0x7F

/* Task management functions and responses */
#define ISCSI_TM_FUNC_ABORT_TASK 1
#define ISCSI_TM_FUNC_ABORT_TASK_SET 2
#define ISCSI_TM_FUNC_CLEAR_ACA 3
#define ISCSI_TM_FUNC_CLEAR_TASK_SET 4
#define ISCSI_TM_FUNC_LOGICAL_UNIT_RESET 5
#define ISCSI_TM_FUNC_TARGET_WARM_RESET 6
#define ISCSI_TM_FUNC_TARGET_COLD_RESET 7
#define ISCSI_TM_FUNC_TASK_REASSIGN 8
#define ISCSI_TMF_RSP_COMPLETE 0x00
#define ISCSI_TMF_RSP_NO_TASK 0x01
#define ISCSI_TMF_RSP_NO_LUN 0x02
#define ISCSI_TMF_RSP_TASK_ALLEGIANT 0x03
#define ISCSI_TMF_RSP_NO_FAILOVER 0x04
#define ISCSI_TMF_RSP_NOT_SUPPORTED 0x05
#define ISCSI_TMF_RSP_AUTH_FAILED 0x06
#define ISCSI_TMF_RSP_REJECTED 0xff

/* Login stages and status */
#define ISCSI_SECURITY_NEGOTIATION_STAGE 0
#define ISCSI_OP_PARMS_NEGOTIATION_STAGE 1
#define ISCSI_FULL_FEATURE_PHASE 3
#define ISCSI_STATUS_CLS_SUCCESS 0x00
#define ISCSI_STATUS_CLS_TARGET_ERR 0x03

/* Reject reasons */
#define ISCSI_REASON_CMD_BEFORE_LOGIN 0x01
#define ISCSI_REASON_DATA_DIGEST_ERROR 0x02
#define ISCSI_REASON_DATA_SNACK_REJECT 0x03
#define ISCSI_REASON_PROTOCOL_ERROR 0x04
#define ISCSI_REASON_CMD_NOT_SUPPORTED 0x05
#define ISCSI_REASON_IMM_CMD_REJECT 0x06
#define ISCSI_REASON_TASK_IN_PROGRESS 0x07
#define ISCSI_REASON_INVALID_SNACK 0x08
#define ISCSI_REASON_BOOKMARK_INVALID 0x09
#define ISCSI_REASON_BOOKMARK_NO_RESOURCES 0x0a
#define ISCSI_REASON_NEGOTIATION_RESET 0x0b

/* Helpers as the kernel writes them */
#define hton24(p, v) do { \
	(p)[0] = (((v) >> 16) & 0xFF); \
	(p)[1] = (((v) >> 8) & 0xFF); \
	(p)[2] = ((v) & 0xFF); \
} while (0)
#define ntoh24(p) (((p)[0] << 16) | ((p)[1] << 8) | ((p)[2]))
#define zero_data(p) do { (p)[0] = 0; (p)[1] = 0; (p)[2] = 0; } while (0)

#define SNA32_CHECK 2147483648UL
static inline int iscsi_sna_lt(uint32_t n1, uint32_t n2)
{
	return (int32_t)(n1 - n2) < 0;
}
static inline int iscsi_sna_lte(uint32_t n1, uint32_t n2)
{
	return (int32_t)(n1 - n2) <= 0;
}

/* The BHS, as the kernel declares it */
struct iscsi_hdr {
	uint8_t opcode;
	uint8_t flags;
	uint8_t rsvd2[2];
	uint8_t hlength;
	uint8_t dlength[3];
	uint8_t lun[8];
	uint32_t itt;
	uint32_t ttt;
	uint32_t statsn;
	uint32_t exp_statsn;
	uint32_t max_statsn;
	uint8_t other[12];
};

#endif /* LINUX_ISCSI_NAMES_H */
