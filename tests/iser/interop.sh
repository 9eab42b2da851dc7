#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Interop in the soft-RoCE guest (suite 'rdma'): real iSER initiators
# against idm-target over iSER.
#   interop.sh libiscsi IDM_TARGET   libiscsi's user-space iSER initiator:
#                                    iscsi-inq, iscsi-readcapacity16,
#                                    iscsi-perf (10 s), over iser://
#   interop.sh kernel IDM_TARGET     Linux ib_iser + open-iscsi: discovery and
#                                    login over an iser iface, 32 MiB O_DIRECT
#                                    write + read back + compare, logout
# Exit 77 (skip) when there is no RDMA device or a tool is missing.
set -u
mode=$1 target=$2
ip=${IDM_RDMA_IP:-}
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; [ -f "$work/tgt.log" ] && tail -30 "$work/tgt.log"; exit 1; }
[ -n "$(ls /sys/class/infiniband 2>/dev/null)" ] || skip "no RDMA device (run through tests/rdma-vm/ci.sh)"
[ -n "$ip" ] || skip "no RDMA device address: set IDM_RDMA_IP"
[ -x "$target" ] || skip "no idm-target at $target"
work=$(mktemp -d)
iqn=iqn.2026-11.org.libidm:target
tpid=
cleanup() {
	[ -z "$tpid" ] || kill "$tpid" 2>/dev/null
	[ -z "$tpid" ] || wait "$tpid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# iSER and TCP on the same portal (different port spaces), port 3260 so
# that SendTargets answers with the portal the initiator can log in to.
"$target" -p "$ip:3260" -P tcp,iser -l 0=ram:64M -t "$iqn" \
	--port-file "$work/port" > "$work/tgt.log" 2>&1 &
tpid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || fail "idm-target did not start"
url=iser://$ip/$iqn/0
# meson sets MALLOC_PERTURB_ for tests; libiscsi's iSER code reads
# uninitialised malloc memory and crashes with it (idm-target above keeps it)
unset MALLOC_PERTURB_

case $mode in
libiscsi)
	command -v iscsi-inq > /dev/null || skip "libiscsi-bin not installed"
	timeout 60 iscsi-inq "$url" > "$work/inq" 2>&1 || { cat "$work/inq"; fail "iscsi-inq over iSER"; }
	grep -q "Vendor:LIBIDM" "$work/inq" || { cat "$work/inq"; fail "iscsi-inq: wrong vendor"; }
	echo "ok: iscsi-inq over iSER"
	timeout 60 iscsi-readcapacity16 "$url" > "$work/cap" 2>&1 || { cat "$work/cap"; fail "iscsi-readcapacity16"; }
	grep -q "Total size:67108864" "$work/cap" || { cat "$work/cap"; fail "readcapacity16: wrong size"; }
	echo "ok: iscsi-readcapacity16 over iSER: 64 MiB"
	# iscsi-perf runs until SIGINT, then logs out
	timeout -k 10 -s INT 10 iscsi-perf "$url" > "$work/perf" 2>&1
	tr '\r' '\n' < "$work/perf" | grep -q "^finished" || { tr '\r' '\n' < "$work/perf" | tail -5; fail "iscsi-perf"; }
	echo "ok: iscsi-perf over iSER: $(tr '\r' '\n' < "$work/perf" | grep 'iops average' | tail -1)"
	;;
kernel)
	command -v iscsiadm > /dev/null || skip "open-iscsi not installed"
	modprobe ib_iser 2> /dev/null && modprobe sd_mod 2> /dev/null || skip "no ib_iser module"
	mkdir -p /run/lock/iscsi /etc/iscsi
	[ -s /etc/iscsi/initiatorname.iscsi ] ||
		echo "InitiatorName=iqn.2026-11.test.libidm:kernel" > /etc/iscsi/initiatorname.iscsi
	iscsid || fail "iscsid did not start"
	sleep 1
	iscsiadm -m discovery -t sendtargets -p "$ip:3260" -I iser > "$work/disc" 2>&1 ||
		{ cat "$work/disc"; fail "discovery over iSER"; }
	grep -q "$iqn" "$work/disc" || { cat "$work/disc"; fail "discovery: target not listed"; }
	echo "ok: SendTargets discovery over iSER"
	iscsiadm -m node -T "$iqn" -p "$ip:3260" -I iser --login > "$work/login" 2>&1 ||
		{ cat "$work/login"; fail "login over iSER"; }
	echo "ok: login over iface iser"
	blk=
	for _ in $(seq 40); do
		blk=$(ls -d /sys/class/iscsi_session/session*/device/target*/*/block/* 2> /dev/null | head -1)
		[ -n "$blk" ] && break
		sleep 0.5
	done
	dev=/dev/${blk##*/}
	[ -n "$blk" ] && [ -b "$dev" ] || fail "no SCSI disk appeared"
	head -c 33554432 /dev/urandom > "$work/pat"
	t0=$(date +%s.%N)
	dd if="$work/pat" of="$dev" bs=1M oflag=direct status=none || fail "O_DIRECT write to $dev"
	dd if="$dev" of="$work/back" bs=1M count=32 iflag=direct status=none || fail "O_DIRECT read from $dev"
	cmp "$work/pat" "$work/back" || fail "data read back differs"
	echo "ok: 32 MiB O_DIRECT write + read back through $dev verified ($(echo "$(date +%s.%N) - $t0" | bc) s)"
	iscsiadm -m node -T "$iqn" -p "$ip:3260" -I iser --logout > "$work/logout" 2>&1 ||
		{ cat "$work/logout"; fail "logout"; }
	echo "ok: logout"
	iscsiadm -k 0 2> /dev/null
	;;
*)
	echo "usage: interop.sh libiscsi|kernel IDM_TARGET" >&2
	exit 2
	;;
esac
grep -E "warn|error" "$work/tgt.log" | grep -v "peer disconnected" | tail -5
exit 0
