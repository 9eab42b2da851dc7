#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The Linux kernel's iSER initiator (open-iscsi + ib_iser) against tgtd on
# libidm serving iSER through libidm's iser provider
# (TGT_IDM_PROVIDERS=tcp,iser), in the soft-RoCE guest:
#  1. tgt's default keys: sendtargets discovery and login over iface iser;
#     ext4 on the disk (fs_workload.sh: mkfs, a tree of 72 files copied,
#     umount, fsck -n, mounted again, every SHA-256 compared); 16 MiB
#     O_DIRECT writes and reads in 1 MiB and in 4 MiB I/Os, the SHA-256 of
#     what was written and of what came back compared; logout. The
#     connection's counters (tgtd -d 1) must show write data pulled by
#     RDMA Read and payload copies only of immediate data: at most one per
#     Send that carried some, at most FirstBurstLength bytes each;
#  2. ImmediateData=No on the target (InitialR2T=Yes is tgt's default):
#     every written byte is solicited and moves by RDMA Read; 16 MiB
#     O_DIRECT in 1 MiB I/Os verified; the connection's payload copies
#     must be 0 (no copy of solicited data).
# Usage: kernel.sh TGT-IDM-WORKDIR
IDM_TEST_NAME=tgt-iser-kernel
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
tgt_iser_setup "${1:-}"
# shellcheck source-path=SCRIPTDIR source=../iser-interop/open-iscsi.sh
. "$(dirname "$0")/../iser-interop/open-iscsi.sh"
# shellcheck source-path=SCRIPTDIR source=../iser-interop/fs_workload.sh
. "$(dirname "$0")/../iser-interop/fs_workload.sh"
fs_need
iscsid_start

start_tgtd_iser idm 3 256M || fail "tgtd on libidm did not start"
# shellcheck disable=SC2154 # set by start_tgtd
PORT=$PORT_idm
TLOG=$TMP/tgtd-idm.log
target_alive() { tgtd_alive idm; }
TIQN=$IQN:idm
adm=("$TGTADM" -C 3 --lld iscsi)

# direct_verify MIB BS: O_DIRECT write of MIB MiB of random data in
# BS-byte I/Os at offset 0, read back the same way, SHA-256 of both.
direct_verify() {
	local mib=$1 bs=$2 a b t
	head -c $((mib << 20)) /dev/urandom >"$TMP/pat"
	t=$(elapsed)
	timeout 120 dd if="$TMP/pat" of="$DEV" bs="$bs" oflag=direct conv=fsync status=none ||
		fail "O_DIRECT write to $DEV ($bs-byte I/Os)"
	timeout 120 dd if="$DEV" of="$TMP/back" bs="$bs" count=$(((mib << 20) / bs)) \
		iflag=direct status=none || fail "O_DIRECT read from $DEV ($bs-byte I/Os)"
	a=$(sha256sum <"$TMP/pat") b=$(sha256sum <"$TMP/back")
	log "$mib MiB in $bs-byte O_DIRECT I/Os ($(awk -v a="$t" -v b="$(elapsed)" 'BEGIN { printf "%.1f", b - a }') s):" \
		"written sha256 ${a:0:16}, read back ${b:0:16}"
	[ "$a" = "$b" ] || fail "$bs-byte O_DIRECT I/Os: what came back differs from what was written"
	target_alive
}

# session_keys: the negotiated keys iscsiadm reports, on one line
session_keys() {
	iscsiadm -m session -P 2 2>/dev/null |
		grep -E '^\s*(InitialR2T|ImmediateData|FirstBurstLength|MaxBurstLength|MaxRecvDataSegmentLength|MaxXmitDataSegmentLength):' |
		tr -d ' \t' | tr '\n' ' '
}

# counters_since LINE: wait (10 s) for the counters of the session that
# just logged out, then print the connections' counters from LINE on.
counters_since() {
	counters_wait "$TLOG" "$1" '^reads ' || true
	sleep 0.5
	conn_counters "$TLOG" "$1" | tee "$TMP/counters"
}

log "pass 1: tgt's default keys"
mark=$(($(wc -l <"$TLOG") + 1))
login_disk "$TIQN"
keys=$(session_keys)
log "negotiated: $keys"
fs_workload "$DEV"
direct_verify 16 1048576
direct_verify 16 4194304
logout_disk "$TIQN"
counters_since "$mark" | sed 's/^/   | /'
fbl=$(sed -n 's/.*FirstBurstLength:\([0-9]*\).*/\1/p' <<<"$keys")
read -r _ reads rbytes unsol writes <<<"$(grep '^reads ' "$TMP/counters" | tail -n 1)"
read -r _ peer _ _ copies cbytes <<<"$(grep '^conn ' "$TMP/counters" | sort -k3 -n | tail -n 1)"
if [ -z "${reads:-}" ] || [ -z "${copies:-}" ]; then fail "tgtd logged no iSER connection counters"; fi
log "pass 1 ($peer): $writes write commands, $reads RDMA Reads of $rbytes bytes;" \
	"$copies payload copies of $cbytes bytes, $unsol Sends with immediate data" \
	"(FirstBurstLength ${fbl:-?})"
[ "$reads" -gt 0 ] || fail "no write data moved by RDMA Read"
[ "$copies" -le "$unsol" ] || fail "more payload copies ($copies) than Sends with immediate data ($unsol)"
[ "$cbytes" -le $((unsol * ${fbl:-65536})) ] ||
	fail "payload copies of $cbytes bytes: more than the immediate data of $unsol commands"

log "pass 2: ImmediateData=No (every written byte solicited, by RDMA Read)"
timeout 5 "${adm[@]}" --op update --mode target --tid 1 -n ImmediateData -v No ||
	fail "tgtadm ImmediateData=No"
mark=$(($(wc -l <"$TLOG") + 1))
login_disk "$TIQN"
keys=$(session_keys)
log "negotiated: $keys"
[[ $keys == *ImmediateData:No* ]] || fail "ImmediateData=No was not negotiated"
direct_verify 16 1048576
logout_disk "$TIQN"
counters_since "$mark" | sed 's/^/   | /'
read -r _ reads rbytes unsol writes <<<"$(grep '^reads ' "$TMP/counters" | tail -n 1)"
read -r _ peer _ _ copies cbytes <<<"$(grep '^conn ' "$TMP/counters" | sort -k3 -n | tail -n 1)"
if [ -z "${reads:-}" ] || [ -z "${copies:-}" ]; then fail "tgtd logged no iSER connection counters"; fi
log "pass 2 ($peer): $writes write commands, $reads RDMA Reads of $rbytes bytes;" \
	"$copies payload copies of $cbytes bytes"
[ "$rbytes" -ge $((16 << 20)) ] || fail "less than the 16 MiB written moved by RDMA Read"
if [ "$copies" != 0 ] || [ "$cbytes" != 0 ]; then
	fail "solicited write data was copied ($copies copies, $cbytes bytes)"
fi
target_alive
log "PASS"
