#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The Linux kernel's iSER initiator (open-iscsi + ib_iser) in B against
# idm-target in A, across the link, with a filesystem on top: mkfs.ext4,
# mount, copy a tree of files of mixed sizes (1 B .. 4 MiB), sync, umount,
# fsck -n, mount again and compare every file's SHA-256. Reports whether
# the kernel's writes moved by RDMA Read (target pulls from the Write
# STag) or all went as immediate/unsolicited data in Sends: B captures the
# RDMA Read Requests that reach its NIC (BTH opcode 12).
# With --tgt, the target in A is tgtd on libidm (contrib/tgt) instead.
# Usage: kernel_fs.sh PATH/TO/idm-target | --tgt TGT-IDM-WORKDIR
IDM_TEST_NAME=idm-pair-kernel-fs
IDM_TARGET=${1:?usage: $0 idm-target | --tgt workdir}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../iser-interop/open-iscsi.sh
. "$(dirname "$0")/../iser-interop/open-iscsi.sh"
# shellcheck source-path=SCRIPTDIR source=../iser-interop/fs_workload.sh
. "$(dirname "$0")/../iser-interop/fs_workload.sh"
fs_need
[ "$1" != --tgt ] || pair_tgtd_need "${2:-}"
iscsid_start
PORTAL_IP=$A_IP
target_alive() { pair_a_alive tgt; }

IQN=iqn.2026-11.org.libidm:pair-kernel-fs
if [ "$1" = --tgt ]; then
	pair_tgtd tgt "$IQN" tcp,iser
else
	pair_idm_target tgt "$IQN" ram:256M
fi
login_disk "$IQN"

# RDMA Read Requests from A to B: a capture of only those (the filter looks
# at the BTH opcode, the first byte of the RoCEv2 UDP payload).
CAP=
if command -v dumpcap >/dev/null; then
	CAP=$TMP/rdma-read.pcapng
	dumpcap -q -i "$IDM_PAIR_NETDEV" -s 64 -f 'udp dst port 4791 and udp[8] == 12' -w "$CAP" \
		>"$TMP/dumpcap.log" 2>&1 &
	CAP_PID=$!
	CLEANUP_CMDS+=("stop_pid $CAP_PID")
fi

pair_wire_begin
fs_workload "$DEV"
pair_wire_end kernel-fs

if [ -n "$CAP" ]; then
	stop_pid "$CAP_PID"
	reads=$(capinfos -c -M "$CAP" 2>/dev/null | awk -F: '/Number of packets/ { gsub(/ /, "", $2); print $2 }')
	if [ "${reads:-0}" -gt 0 ]; then
		log "the kernel's writes: $reads RDMA Read Requests from the target (data pulled by RDMA Read)"
	else
		log "the kernel's writes: NO RDMA Read Request on the wire (all write data went in Sends: immediate/unsolicited)"
	fi
else
	log "dumpcap not installed (Debian package tshark): RDMA Read use not measured"
fi
logout_disk "$IQN"
log "PASS"
