#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The Linux kernel's iSER initiator (open-iscsi + ib_iser) against
# idm-target --provider iser:
#  1. default keys: sendtargets discovery over iSER, login, a 32 MiB
#     O_DIRECT write and read-back of a random pattern on the raw block
#     device (no filesystem, no page cache), 1 MiB more in 4 KiB I/Os,
#     then a clean logout (session and disk gone, idm-target running);
#  2. a target that answers InitialR2T=Yes ImmediateData=No, so every
#     written byte moves by RDMA Read from the kernel's Write STag:
#     login, 8 MiB O_DIRECT write/read-back, logout.
# Usage: kernel_initiator.sh PATH/TO/idm-target
IDM_TEST_NAME=idm-iser-kernel
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
IDM_TARGET=${1:?usage: $0 idm-target}
# shellcheck source-path=SCRIPTDIR source=open-iscsi.sh
. "$(dirname "$0")/open-iscsi.sh"
need_rdma

iscsid_start

# rw_verify MIB BS SEEK_MIB: O_DIRECT write of MIB MiB of random data in
# BS-byte I/Os at SEEK_MIB, read back, compare. Every byte crosses the
# iSER connection (no page cache in between).
rw_verify() {
	local mib=$1 bs=$2 seek=$3 n t tw tr
	n=$(((mib << 20) / bs))
	head -c $((mib << 20)) /dev/urandom >"$TMP/pat"
	t=$(date +%s.%N)
	timeout 120 dd if="$TMP/pat" of="$DEV" bs="$bs" seek=$(((seek << 20) / bs)) \
		oflag=direct conv=fsync status=none || fail "O_DIRECT write to $DEV"
	tw=$(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	t=$(date +%s.%N)
	timeout 120 dd if="$DEV" of="$TMP/back" bs="$bs" skip=$(((seek << 20) / bs)) count="$n" \
		iflag=direct status=none || fail "O_DIRECT read from $DEV"
	tr=$(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	cmp "$TMP/pat" "$TMP/back" || fail "$mib MiB read back differs from what was written"
	log "$mib MiB at $seek MiB in $bs-byte O_DIRECT I/Os verified: write $tw s, read $tr s"
	target_alive
}

log "pass 1: default keys"
IQN=iqn.2026-11.org.libidm:kernel-iser
start_idm_target "$IQN" ram:64M
login_disk "$IQN"
[ "$(($(cat "$BLK/size") * 512))" = $((64 << 20)) ] || fail "disk size is not 64 MiB"
rw_verify 32 1048576 0
cp "$TMP/pat" "$TMP/pat32"
rw_verify 1 4096 40
# the 4 KiB writes went past the first pattern: it must be intact
timeout 120 dd if="$DEV" of="$TMP/back" bs=1M count=32 iflag=direct status=none ||
	fail "O_DIRECT read from $DEV"
cmp "$TMP/pat32" "$TMP/back" || fail "first 32 MiB changed after the second write"
logout_disk "$IQN"
grep -E 'logout|session' "$TMP/target.log" | tail -n 3 | sed 's/^/   | /'
stop_pid "$TGT_PID"

log "pass 2: InitialR2T=Yes ImmediateData=No (all write data by RDMA Read)"
IQN=iqn.2026-11.org.libidm:kernel-iser-r2t
start_idm_target "$IQN" ram:16M --key InitialR2T=Yes --key ImmediateData=No
login_disk "$IQN"
grep -q 'ImmediateData=No InitialR2T=Yes' "$TMP/target.log" ||
	fail "idm-target did not negotiate InitialR2T=Yes ImmediateData=No"
rw_verify 8 1048576 0
logout_disk "$IQN"
dmesg | grep -iE 'iser' | tail -n 4 | sed 's/^/   | dmesg: /'
log "PASS"
