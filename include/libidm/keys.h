/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Names and default values of the iSCSI login keys (RFC 7143 section 13)
 * and of the iSER keys (RFC 7145 section 6): the value each side assumes
 * for a key that was not negotiated. The core's idm_conn_params defaults, the
 * example target and initiator and the test harnesses all take them from
 * here, so one definition holds them. Header-only: no symbols, no ABI.
 */
#ifndef LIBIDM_KEYS_H
#define LIBIDM_KEYS_H

/* The keys' names as they go on the wire, one definition for the core's
 * parser, the examples and any caller that builds or reads key=value text
 * (Notice_Key_Values takes it): RFC 7143 sections 12 and 13 (the obsolete
 * marker keys of RFC 3720 among them, which a peer may still send), then
 * RFC 7145 section 6. */
#define IDM_KEY_HEADER_DIGEST "HeaderDigest"
#define IDM_KEY_DATA_DIGEST "DataDigest"
#define IDM_KEY_MAX_CONNECTIONS "MaxConnections"
#define IDM_KEY_SEND_TARGETS "SendTargets"
#define IDM_KEY_TARGET_NAME "TargetName"
#define IDM_KEY_INITIATOR_NAME "InitiatorName"
#define IDM_KEY_TARGET_ALIAS "TargetAlias"
#define IDM_KEY_INITIATOR_ALIAS "InitiatorAlias"
#define IDM_KEY_TARGET_ADDRESS "TargetAddress"
#define IDM_KEY_TARGET_PORTAL_GROUP_TAG "TargetPortalGroupTag"
#define IDM_KEY_INITIAL_R2T "InitialR2T"
#define IDM_KEY_IMMEDIATE_DATA "ImmediateData"
#define IDM_KEY_MAX_RECV_DATA_SEGMENT_LENGTH "MaxRecvDataSegmentLength"
#define IDM_KEY_MAX_BURST_LENGTH "MaxBurstLength"
#define IDM_KEY_FIRST_BURST_LENGTH "FirstBurstLength"
#define IDM_KEY_DEFAULT_TIME2WAIT "DefaultTime2Wait"
#define IDM_KEY_DEFAULT_TIME2RETAIN "DefaultTime2Retain"
#define IDM_KEY_MAX_OUTSTANDING_R2T "MaxOutstandingR2T"
#define IDM_KEY_DATA_PDU_IN_ORDER "DataPDUInOrder"
#define IDM_KEY_DATA_SEQUENCE_IN_ORDER "DataSequenceInOrder"
#define IDM_KEY_ERROR_RECOVERY_LEVEL "ErrorRecoveryLevel"
#define IDM_KEY_SESSION_TYPE "SessionType"
#define IDM_KEY_AUTH_METHOD "AuthMethod"
#define IDM_KEY_TASK_REPORTING "TaskReporting"
#define IDM_KEY_ISCSI_PROTOCOL_LEVEL "iSCSIProtocolLevel"
#define IDM_KEY_OF_MARKER "OFMarker"
#define IDM_KEY_IF_MARKER "IFMarker"
#define IDM_KEY_OF_MARK_INT "OFMarkInt"
#define IDM_KEY_IF_MARK_INT "IFMarkInt"

#define IDM_KEY_RDMA_EXTENSIONS "RDMAExtensions"
#define IDM_KEY_TARGET_RECV_DATA_SEGMENT_LENGTH "TargetRecvDataSegmentLength"
#define IDM_KEY_INITIATOR_RECV_DATA_SEGMENT_LENGTH "InitiatorRecvDataSegmentLength"
#define IDM_KEY_MAX_OUTSTANDING_UNEXPECTED_PDUS "MaxOutstandingUnexpectedPDUs"
#define IDM_KEY_MAX_AHS_LENGTH "MaxAHSLength"
#define IDM_KEY_ISER_HELLO_REQUIRED "iSERHelloRequired"
#define IDM_KEY_TAGGED_BUFFER_FOR_SOLICITED_DATA_ONLY "TaggedBufferForSolicitedDataOnly"

/* RFC 7143 section 13: the operational keys */
#define IDM_ISCSI_DEFAULT_MAX_CONNECTIONS 1u              /* 13.2 */
#define IDM_ISCSI_DEFAULT_INITIAL_R2T 1                   /* 13.10, Yes */
#define IDM_ISCSI_DEFAULT_IMMEDIATE_DATA 1                /* 13.11, Yes */
#define IDM_ISCSI_DEFAULT_MAX_RECV_DATA_SEGMENT_LENGTH 8192u /* 13.12 */
#define IDM_ISCSI_DEFAULT_MAX_BURST_LENGTH 262144u        /* 13.13 */
#define IDM_ISCSI_DEFAULT_FIRST_BURST_LENGTH 65536u       /* 13.14 */
#define IDM_ISCSI_DEFAULT_TIME2WAIT 2u                    /* 13.15, seconds */
#define IDM_ISCSI_DEFAULT_TIME2RETAIN 20u                 /* 13.16, seconds */
#define IDM_ISCSI_DEFAULT_MAX_OUTSTANDING_R2T 1u          /* 13.17 */
#define IDM_ISCSI_DEFAULT_DATA_PDU_IN_ORDER 1             /* 13.18, Yes */
#define IDM_ISCSI_DEFAULT_DATA_SEQUENCE_IN_ORDER 1        /* 13.19, Yes */
#define IDM_ISCSI_DEFAULT_ERROR_RECOVERY_LEVEL 0u         /* 13.20 */

/* The largest data segment of a Login Request or Response: the login
 * phase runs on the default MaxRecvDataSegmentLength (RFC 7143 6.1,
 * 13.12), whatever the keys being negotiated will say. The providers
 * frame and check login PDUs with it. */
#define IDM_ISCSI_LOGIN_MAX_DATA_SEGMENT_LENGTH \
	IDM_ISCSI_DEFAULT_MAX_RECV_DATA_SEGMENT_LENGTH

/* RFC 7145 section 6: the iSER keys. The two RecvDataSegmentLength keys
 * replace MaxRecvDataSegmentLength when RDMAExtensions=Yes. */
#define IDM_ISER_DEFAULT_RDMA_EXTENSIONS 0 /* No */
#define IDM_ISER_DEFAULT_TARGET_RECV_DATA_SEGMENT_LENGTH 8192u
#define IDM_ISER_DEFAULT_INITIATOR_RECV_DATA_SEGMENT_LENGTH 8192u
#define IDM_ISER_DEFAULT_MAX_OUTSTANDING_UNEXPECTED_PDUS 0u /* no limit */
#define IDM_ISER_DEFAULT_MAX_AHS_LENGTH 256u

#endif /* LIBIDM_KEYS_H */
