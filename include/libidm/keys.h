/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Default values of the iSCSI login keys (RFC 7143 section 13) and of the
 * iSER keys (RFC 7145 section 6): the value each side assumes for a key
 * that was not negotiated. The core's idm_conn_params defaults, the
 * example target and initiator and the test harnesses all take them from
 * here, so one definition holds them. Header-only: no symbols, no ABI.
 */
#ifndef LIBIDM_KEYS_H
#define LIBIDM_KEYS_H

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
