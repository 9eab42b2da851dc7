#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The Linux kernel's iSER initiator (open-iscsi + ib_iser) against
# idm-target --provider iser: sendtargets discovery over iSER, login,
# a 32 MiB O_DIRECT write and read-back of a random pattern on the raw
# block device (no filesystem, no page cache), a second pass with 4 KiB
# I/Os, then a clean logout (session gone, idm-target still running).
# Usage: kernel_initiator.sh PATH/TO/idm-target
IDM_TEST_NAME=idm-iser-kernel
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
IDM_TARGET=${1:?usage: $0 idm-target}
need_rdma
need iscsiadm open-iscsi
need iscsid open-iscsi
need_module ib_iser
need_module sd_mod

IQN=iqn.2026-11.org.libidm:kernel-iser
start_idm_target "$IQN" ram:64M

# iscsid: the guest boots without it. A private one, stopped at the end.
mkdir -p /run/lock/iscsi /var/lib/iscsi /etc/iscsi
[ -s /etc/iscsi/initiatorname.iscsi ] ||
	echo "InitiatorName=iqn.2026-11.org.libidm:kernel-ini" >/etc/iscsi/initiatorname.iscsi
if ! pgrep -x iscsid >/dev/null; then
	iscsid -f >"$TMP/iscsid.log" 2>&1 &
	ISCSID_PID=$!
	CLEANUP_CMDS+=("stop_pid $ISCSID_PID")
	sleep 1
	kill -0 "$ISCSID_PID" 2>/dev/null || { cat "$TMP/iscsid.log"; fail "iscsid did not start"; }
fi
PORTAL=$IP:$PORT
CLEANUP_CMDS+=("timeout 30 iscsiadm -m discoverydb -t st -p $PORTAL -I iser -o delete")
CLEANUP_CMDS+=("timeout 30 iscsiadm -m node -T $IQN -p $PORTAL -o delete")
CLEANUP_CMDS+=("timeout 60 iscsiadm -m node -T $IQN -p $PORTAL --logout")

log "discovery (sendtargets over iSER) at $PORTAL"
run_bounded 60 "$TMP/disc" iscsiadm -m discovery -t sendtargets -p "$PORTAL" -I iser ||
	fail "discovery"
grep -q "^$PORTAL,1 $IQN\$" "$TMP/disc" || fail "discovery did not report $IQN at $PORTAL"
target_alive

log "login over iface iser"
run_bounded 90 "$TMP/login" iscsiadm -m node -T "$IQN" -p "$PORTAL" -I iser --login ||
	fail "login"
iscsiadm -m session -P 1 >"$TMP/session" 2>&1
grep -E 'Target:|Iface Transport|iSCSI Connection State|iSCSI Session State' "$TMP/session" | sed 's/^/   | /'
grep -q 'Iface Transport: iser' "$TMP/session" || fail "session does not use the iser transport"
grep -q 'iSCSI Session State: LOGGED_IN' "$TMP/session" || fail "session is not LOGGED_IN"

blk=
for ((i = 0; i < 60; i++)); do
	blk=$(ls -d /sys/class/iscsi_session/session*/device/target*/*/block/* 2>/dev/null | head -1)
	[ -n "$blk" ] && break
	sleep 0.5
done
[ -n "$blk" ] || fail "no SCSI disk appeared after login"
DEV=/dev/${blk##*/}
for ((i = 0; i < 50; i++)); do [ -b "$DEV" ] && break; sleep 0.1; done
[ -b "$DEV" ] || fail "$DEV is not a block device"
size=$(( $(cat "$blk/size") * 512 ))
log "disk $DEV: $size bytes, vendor '$(cat "$blk/device/vendor")' model '$(cat "$blk/device/model")'"
[ "$size" = $((64 << 20)) ] || fail "disk size $size, expected 64 MiB"

# 32 MiB of random pattern, written and read with O_DIRECT so every byte
# crosses the iSER connection (no page cache in between).
head -c $((32 << 20)) /dev/urandom >"$TMP/pat"
log "32 MiB O_DIRECT write, 1 MiB I/Os"
t=$(date +%s.%N)
timeout 120 dd if="$TMP/pat" of="$DEV" bs=1M oflag=direct conv=fsync status=none ||
	fail "O_DIRECT write to $DEV"
tw=$(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
log "32 MiB O_DIRECT read-back, 1 MiB I/Os"
t=$(date +%s.%N)
timeout 120 dd if="$DEV" of="$TMP/back" bs=1M count=32 iflag=direct status=none ||
	fail "O_DIRECT read from $DEV"
tr=$(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
cmp "$TMP/pat" "$TMP/back" || fail "32 MiB read back differs from what was written"
log "32 MiB verified: write $tw s, read $tr s"
target_alive

# Small I/Os at an offset: many more commands, each with immediate data
# (writes) or a single RDMA Write (reads); 1 MiB past the first pattern.
log "1 MiB O_DIRECT write/read-back at offset 40 MiB, 4 KiB I/Os"
head -c $((1 << 20)) /dev/urandom >"$TMP/pat4k"
timeout 120 dd if="$TMP/pat4k" of="$DEV" bs=4k seek=$((40 << 8)) oflag=direct conv=fsync status=none ||
	fail "4 KiB O_DIRECT writes"
timeout 120 dd if="$DEV" of="$TMP/back4k" bs=4k skip=$((40 << 8)) count=256 iflag=direct status=none ||
	fail "4 KiB O_DIRECT reads"
cmp "$TMP/pat4k" "$TMP/back4k" || fail "4 KiB I/O read back differs"
# The first pattern must be untouched by the second write.
timeout 120 dd if="$DEV" of="$TMP/back" bs=1M count=32 iflag=direct status=none &&
	cmp "$TMP/pat" "$TMP/back" || fail "first 32 MiB changed after the second write"
log "4 KiB I/Os verified, first 32 MiB intact"
target_alive

log "logout"
run_bounded 60 "$TMP/logout" iscsiadm -m node -T "$IQN" -p "$PORTAL" --logout || fail "logout"
grep -q 'successful' "$TMP/logout" || fail "logout not reported successful"
if iscsiadm -m session >"$TMP/sessions" 2>&1; then
	cat "$TMP/sessions"
	fail "a session is still there after logout"
fi
for ((i = 0; i < 50; i++)); do [ -b "$DEV" ] || break; sleep 0.1; done
[ -b "$DEV" ] && fail "$DEV still exists after logout"
target_alive
sleep 0.5
grep -iE 'logout|error' "$TMP/target.log" | tail -n 5 | sed 's/^/   | /'
dmesg | grep -iE 'iser' | tail -n 5 | sed 's/^/   | dmesg: /'
log "PASS"
