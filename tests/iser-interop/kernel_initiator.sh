#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The Linux kernel's iSER initiator (open-iscsi + ib_iser) against
# idm-target --provider iser:
#  1. default keys: sendtargets discovery over iSER, login, a 32 MiB
#     O_DIRECT write and read-back of a random pattern on the raw block
#     device (no filesystem, no page cache), 1 MiB more in 4 KiB I/Os,
#     then a clean logout (session and disk gone, idm-target running).
#     The 1 MiB writes must reach the target as large commands (at least
#     256 KiB on average: idm-target's Block Limits let sd use ib_iser's
#     512 KiB), part of whose data idm-target pulls with RDMA Reads, and
#     no receiver-not-ready NAK or PSN sequence error may happen (rxe's
#     hw_counters: the target posts receives for its whole window), also
#     with 16 such commands in flight (8 MiB writes);
#  2. a target that answers InitialR2T=Yes ImmediateData=No, so every
#     written byte moves by RDMA Read from the kernel's Write STag:
#     login, 8 MiB O_DIRECT write/read-back, logout.
# With ISER_SHARED_RECV=yes idm-target runs with --shared-recv yes (one
# shared receive queue for its connections): the same checks, RNR NAKs
# included (iser-kernel-initiator-srq-vs-idm-target).
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

# rxe_counters: "name=value ..." of the RNR and sequence-error counters
# of the device (both ends of every connection here), or "" without them.
HWC=/sys/class/infiniband/$RDMA_DEV/ports/1/hw_counters
rxe_counters() {
	local c out=
	for c in rcvd_rnr_err send_rnr_err rcvd_seq_err out_of_seq_request; do
		[ -r "$HWC/$c" ] && out+="$c=$(cat "$HWC/$c") "
	done
	echo "$out"
}
# rxe_check BEFORE: no RNR NAK or sequence error since BEFORE.
rxe_check() {
	local now
	now=$(rxe_counters)
	if [ -z "$1" ]; then
		log "rxe hw_counters not available ($HWC): RNR not checked"
		return 0
	fi
	log "rxe counters: before $1; after $now"
	[ "$1" = "$now" ] ||
		fail "receiver-not-ready NAKs or sequence errors during the transfer"
}
# blk_writes: "ios sectors" written to $BLK so far (block layer stat).
blk_writes() {
	local f
	read -r -a f <"$BLK/stat"
	echo "${f[4]} ${f[6]}"
}

log "pass 1: default keys"
IQN=iqn.2026-11.org.libidm:kernel-iser
RXE0=$(rxe_counters)
SHARED_RECV=${ISER_SHARED_RECV:-no}
log "idm-target --shared-recv $SHARED_RECV"
start_idm_target "$IQN" ram:64M -v --shared-recv "$SHARED_RECV"
login_disk "$IQN"
[ "$(($(cat "$BLK/size") * 512))" = $((64 << 20)) ] || fail "disk size is not 64 MiB"
log "queue limits: max_sectors_kb $(cat "$BLK/queue/max_sectors_kb")," \
	"max_hw_sectors_kb $(cat "$BLK/queue/max_hw_sectors_kb")," \
	"optimal_io_size $(cat "$BLK/queue/optimal_io_size")"
read -r w0 s0 <<<"$(blk_writes)"
rw_verify 32 1048576 0
read -r w1 s1 <<<"$(blk_writes)"
[ "$w1" -gt "$w0" ] || fail "no write reached $DEV"
avg=$((((s1 - s0) * 512 / (w1 - w0)) >> 10))
log "32 MiB in 1 MiB writes: $((w1 - w0)) write commands, $avg KiB on average"
[ "$avg" -ge 256 ] ||
	fail "the kernel split 1 MiB writes into $avg KiB commands (Block Limits?)"
iscsiadm -m session -s 2>/dev/null | grep -E 'scsicmd_pdus|dataout_pdus|txdata_octets' |
	tr -s ' \t' ' ' | tr '\n' ';' | sed 's/^/   | initiator session stats:/; s/$/\n/'
rxe_check "$RXE0"
# 8 MiB O_DIRECT writes: sd splits each into 16 commands of 512 KiB that
# are in flight at once, 32 Sends each (immediate data + 31 Data-Out):
# 512 Sends, more than the 280 receives a target provisioning for 8
# commands posted (RNR NAKs then), well within a 128-command window.
read -r w0 s0 <<<"$(blk_writes)"
rw_verify 32 8388608 0
read -r w1 s1 <<<"$(blk_writes)"
log "32 MiB in 8 MiB writes: $((w1 - w0)) write commands," \
	"$((((s1 - s0) * 512 / (w1 - w0)) >> 10)) KiB on average"
rxe_check "$RXE0"
cp "$TMP/pat" "$TMP/pat32"
rw_verify 1 4096 40
# the 4 KiB writes went past the first pattern: it must be intact
timeout 120 dd if="$DEV" of="$TMP/back" bs=1M count=32 iflag=direct status=none ||
	fail "O_DIRECT read from $DEV"
cmp "$TMP/pat32" "$TMP/back" || fail "first 32 MiB changed after the second write"
logout_disk "$IQN"
grep -E 'logout|session' "$TMP/target.log" | tail -n 3 | sed 's/^/   | /'
stop_pid "$TGT_PID"
rxe_check "$RXE0"
# the provider's account of the normal session (idm-target -v): receive
# buffers posted, and the data it pulled with RDMA Reads
grep -E 'iser: full feature phase|iser: [0-9]+ write commands|iser: shared receive queue' "$TMP/target.log" |
	sed 's/^/   | /'
# receives posted: at least what 16 of Linux's 512 KiB writes bring at
# once (32 Sends each); rxe in one guest drains fast enough that the old
# 280 drew no RNR NAK here, so check the provisioning itself
rx=$(grep -Eo 'full feature phase: [0-9]+ receive buffers' "$TMP/target.log" |
	awk '$4 > m { m = $4 } END { print m + 0 }')
log "target: $rx receive buffers posted for the normal session"
[ "$rx" -ge $((16 * 32 + 16)) ] ||
	fail "idm-target posted $rx receive buffers, fewer than 16 writes in flight need"
stats=$(grep -Eo 'iser: [0-9]+ write commands \(largest [0-9]+ bytes\), [0-9]+ Sends of unsolicited data, [0-9]+ RDMA Reads of [0-9]+ bytes' \
	"$TMP/target.log" | tail -n 1)
[ -n "$stats" ] || fail "idm-target logged no iSER data-path counters"
read -r _ _ _ _ _ largest _ _ _ _ _ _ reads _ _ _ rbytes _ <<<"${stats//[(),]/ }"
log "target: largest write $largest bytes, $reads RDMA Reads of $rbytes bytes"
[ "$largest" -ge $((512 << 10)) ] || fail "no write command of 512 KiB reached idm-target"
if [ "$reads" -eq 0 ] || [ "$rbytes" -lt $((8 << 20)) ]; then
	fail "idm-target pulled too little write data with RDMA Reads"
fi

log "pass 2: InitialR2T=Yes ImmediateData=No (all write data by RDMA Read)"
IQN=iqn.2026-11.org.libidm:kernel-iser-r2t
start_idm_target "$IQN" ram:16M --key InitialR2T=Yes --key ImmediateData=No \
	--shared-recv "$SHARED_RECV"
login_disk "$IQN"
grep -q 'ImmediateData=No InitialR2T=Yes' "$TMP/target.log" ||
	fail "idm-target did not negotiate InitialR2T=Yes ImmediateData=No"
rw_verify 8 1048576 0
logout_disk "$IQN"
rxe_check "$RXE0"
dmesg | grep -iE 'iser' | tail -n 4 | sed 's/^/   | dmesg: /'
log "PASS"
