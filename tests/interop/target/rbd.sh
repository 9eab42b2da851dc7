#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-target serving a Ceph RBD image (--lun rbd:POOL/IMAGE) from a
# one-node cluster the test starts (tests/lib/ceph.sh), beside a file LUN
# of the same size: idm-initiator --verify on each (writes, reads back,
# compares), an rbd: spec the target refuses with a reason, the cluster's
# view of what was written (rbd du), and, with MODE=cu, libiscsi's
# iscsi-test-cu SBC and iSCSI families on both LUNs side by side. The
# Ceph key comes from a keyring file (--rbd-keyring), never the command
# line.
# Usage: rbd.sh IDM_TARGET IDM_INITIATOR [cu]
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
IDM_TARGET=$1
IDM_INITIATOR=$2
MODE=${3:-verify}
CEPH_LIB="$(dirname "$0")/../../lib/ceph.sh"
[ -f "$CEPH_LIB" ] || skip "tests/lib/ceph.sh (the one-node cluster) is not in this tree"
# shellcheck source-path=SCRIPTDIR source=../../lib/ceph.sh
. "$CEPH_LIB"
timeout 60 "$IDM_TARGET" --portal 127.0.0.1:0 --rbd-conf /dev/null --rbd-timeout 1 \
	--lun rbd:p/i 2>&1 | grep -q "built without librbd" && skip "idm-target built without librbd"
if [ "$MODE" = cu ]; then
	# about 4 minutes on 2 cores: not in every run of the whole suite
	# (.ci/run's test-gcc and test-asan), on demand
	[ "${IDM_TEST_RBD_CU:-0}" = 1 ] ||
		skip "set IDM_TEST_RBD_CU=1 to run iscsi-test-cu on RBD (about 4 min)"
	need_libiscsi iscsi-test-cu
fi

CEPH_IMAGE_SIZE=${CEPH_IMAGE_SIZE:-128M}
ceph_up "$TMP/ceph"
echo "ceph: up in $CEPH_START_SECONDS s; $(ceph_rss)"
truncate -s "$CEPH_IMAGE_SIZE" "$TMP/disk.img"

# --- refusals: a clear message, exit 2, no hang
expect "rbd: without an image refused" "rbd: takes POOL/IMAGE" \
	"$IDM_TARGET" --portal 127.0.0.1:0 --lun rbd:justapool
expect "a missing image refused" "cannot open image nosuch in pool $CEPH_POOL" \
	"$IDM_TARGET" --portal 127.0.0.1:0 --rbd-conf "$CEPH_CONF" \
	--rbd-keyring "$CEPH_KEYRING" --lun "rbd:$CEPH_POOL/nosuch"

# --- the target: LUN 1 on RBD, LUN 2 on a file; the cluster through the
# options (the environment's CEPH_* must not be what makes it work).
# start LOG EXTRA_ARGS...
start() {
	IDM_TARGET_STDOUT=/dev/null idm_target_start "$1" 30 --portal 127.0.0.1:0 \
		--target-name "$IQN" -v --rbd-conf "$CEPH_CONF" --rbd-user "$CEPH_USER" \
		--rbd-keyring "$CEPH_KEYRING" --rbd-timeout 30 \
		--lun "1=rbd:$CEPH_POOL/$CEPH_IMAGE" --lun "2=file:$TMP/disk.img" "${@:2}"
	TARGET_PID=$TGT_PID
	URL="iscsi://127.0.0.1:$PORT/$IQN"
}
# stop: SIGTERM with the cluster still up: exit 0
stop() {
	kill -TERM "$TARGET_PID"
	if wait "$TARGET_PID"; then
		echo "ok   stopped cleanly"
	else
		echo "FAIL idm-target exited $? on SIGTERM"; tail -20 "$TMP/target.log"
		fails=$((fails + 1))
	fi
}
start "$TMP/target.log"
if grep -q "LUN 1: rbd:$CEPH_POOL/$CEPH_IMAGE, $(( $(numfmt --from=iec "$CEPH_IMAGE_SIZE") / 512 )) blocks" \
	"$TMP/target.log"; then
	echo "ok   the LUN has the image's size"
else
	echo "FAIL LUN 1's size"; grep "LUN 1" "$TMP/target.log"; fails=$((fails + 1))
fi

I=("$IDM_INITIATOR" --no-discovery -q)
for lun in 1 2; do
	t0=$(date +%s.%N)
	if timeout -k 5 "$(scaled 120)" "${I[@]}" --verify 32M --seed "$lun" "$URL/$lun" \
		>"$TMP/verify$lun.out" 2>&1; then
		echo "ok   verify 32M on LUN $lun ($(awk -v a="$t0" -v b="$(date +%s.%N)" \
			'BEGIN { printf "%.1f", b - a }') s)"
	else
		echo "FAIL verify on LUN $lun:"
		tail -20 "$TMP/verify$lun.out"
		fails=$((fails + 1))
	fi
	target_alive
done
# the cluster holds what was written through the target
used=$(rbd du "$CEPH_POOL/$CEPH_IMAGE" 2>/dev/null | awk -v i="$CEPH_IMAGE" '$1 == i {print $4, $5}')
echo "rbd du: $used used"
if [ -z "$used" ] || [ "${used%% *}" = 0 ]; then
	echo "FAIL rbd du shows nothing written"; fails=$((fails + 1))
fi

# cu FAMILY: iscsi-test-cu's FAMILY on LUN 1 (rbd) and LUN 2 (file),
# side by side; the image must do as well as the file
cu() {
	local lun pass total p=() t=()
	for lun in 1 2; do
		timeout -k 5 "$(scaled 300)" iscsi-test-cu --dataloss --test="$1" "$URL/$lun" \
			>"$TMP/cu-$1-$lun.out" 2>&1
		read -r pass total < <(summary "$TMP/cu-$1-$lun.out")
		p+=("${pass:-0}") t+=("${total:-0}")
		echo "$1 on LUN $lun: failures:"
		failed_tests "$TMP/cu-$1-$lun.out"
		target_alive
	done
	printf '%-8s %-6s %8s %8s\n' "$1" rbd "${p[0]}" "${t[0]}" "$1" file "${p[1]}" "${t[1]}"
	if [ "${p[0]}" -lt "${p[1]}" ] || [ "${t[0]}" = 0 ]; then
		echo "FAIL: $1 on rbd passed ${p[0]} of ${t[0]}, on the file ${p[1]} of ${t[1]}"
		fails=$((fails + 1))
	fi
}
# --- commands waiting for a cluster that does not answer (the OSD
# stopped) when their connection ends: the target keeps their buffers
# until librbd completes them, serves on, and frees them after
osd=$(echo "$CEPH_PIDS" | awk '{print $2}')
dumps() { grep -c "^stats: " "$TMP/target.log"; }
dumped() { [ "$(dumps)" -gt "$1" ]; }
usr1_says() { # REGEX: what the next SIGUSR1 dump's last line says
	local n
	n=$(dumps)
	kill -USR1 "$TARGET_PID"
	wait_until 10 dumped "$n" && grep "^stats: " "$TMP/target.log" | tail -1 | grep -Eq "$1"
}
kill -STOP "$osd"
"${I[@]}" --verify 8M --seed 9 "$URL/1" >"$TMP/stalled.out" 2>&1 &
ini=$!
if wait_until 30 usr1_says "[1-9][0-9]* LUN calls in flight"; then
	echo "ok   writes wait for the stopped OSD: $(grep "^stats: " "$TMP/target.log" | tail -1)"
else
	echo "FAIL no LUN call in flight with the OSD stopped"; fails=$((fails + 1))
fi
nended=$(grep -c "session tsih .* ended" "$TMP/target.log")
kill -KILL "$ini" 2>/dev/null; wait "$ini" 2>/dev/null
ended() { [ "$(grep -c "session tsih .* ended" "$TMP/target.log")" -gt "$nended" ]; }
if wait_until 30 ended; then
	echo "ok   the killed initiator's session ended with its calls in flight"
else
	echo "FAIL the killed initiator's session did not end"; fails=$((fails + 1))
fi
# the file LUN is served meanwhile
if timeout -k 5 "$(scaled 60)" "${I[@]}" --verify 4M --seed 10 "$URL/2" >"$TMP/beside.out" 2>&1; then
	echo "ok   the file LUN served while the image waits"
else
	echo "FAIL the file LUN while the image waits"; tail -5 "$TMP/beside.out"; fails=$((fails + 1))
fi
kill -CONT "$osd"
if wait_until 60 usr1_says " 0 LUN calls in flight"; then
	echo "ok   the stalled calls completed after the OSD came back"
else
	echo "FAIL LUN calls still in flight 60 s after the OSD came back"; fails=$((fails + 1))
fi
target_alive
if timeout -k 5 "$(scaled 60)" "${I[@]}" --verify 8M --seed 11 "$URL/1" >"$TMP/after.out" 2>&1; then
	echo "ok   verify on the image after the stall"
else
	echo "FAIL verify after the stall"; tail -5 "$TMP/after.out"; fails=$((fails + 1))
fi

# the image grows: READ CAPACITY follows (librbd's header watch); a
# session that was open gets CAPACITY DATA HAS CHANGED once
# (target-lun-cq-unit checks that part)
if command -v iscsi-readcapacity16 >/dev/null; then
	new=$(( $(numfmt --from=iec "$CEPH_IMAGE_SIZE") * 3 / 2 ))
	rbd resize --size "$((new / 1048576))M" "$CEPH_POOL/$CEPH_IMAGE" >/dev/null 2>&1 ||
		{ echo "FAIL rbd resize"; fails=$((fails + 1)); }
	cap_is() { [ "$(timeout 20 iscsi-readcapacity16 -s "$URL/1" 2>/dev/null)" = "$1" ]; }
	if wait_until 30 cap_is "$new"; then
		echo "ok   READ CAPACITY gives the resized image's $new bytes"
	else
		echo "FAIL READ CAPACITY after the resize: $(iscsi-readcapacity16 -s "$URL/1" 2>&1), wanted $new"
		fails=$((fails + 1))
	fi
	rbd resize --allow-shrink --size "$CEPH_IMAGE_SIZE" "$CEPH_POOL/$CEPH_IMAGE" >/dev/null 2>&1
	wait_until 30 cap_is "$(numfmt --from=iec "$CEPH_IMAGE_SIZE")" ||
		{ echo "FAIL READ CAPACITY after shrinking back"; fails=$((fails + 1)); }
fi

if [ "$MODE" = cu ]; then
	printf '%-8s %-6s %8s %8s\n' family LUN passed total
	cu SCSI
fi
stop
if [ "$MODE" = cu ]; then
	# the iSCSI family with solicited data only, as target-iscsi-test-cu-iscsi
	# runs it (iscsi_test_cu_iscsi.sh says why)
	start "$TMP/target2.log" --key ImmediateData=No --key InitialR2T=Yes
	cu iSCSI
	stop
fi
PIDS=""
echo "ceph at the end: $(ceph_rss)"
[ "$fails" = 0 ] || { tail -30 "$TMP/target.log"; exit 1; }
echo PASS
