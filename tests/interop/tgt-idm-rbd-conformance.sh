#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# libiscsi's iscsi-test-cu against stock tgtd and tgtd on libidm
# (contrib/tgt), each serving an RBD image of its own through tgt's rbd
# backing store (bs_rbd.so, built with both by build-tgt-idm.sh), on the
# one-node Ceph of tests/lib/ceph.sh. The tests are those of the suites
# in IDM_RBD_CU_SUITES (FAMILY.SUITE ...; by default the SBC suites:
# reads, writes, verify, write same, unmap, capacity, ..., a few SPC ones
# and iSCSI's), each test in a run of its own against both tgtds at once
# (iscsi-test-cu 1.19 takes one pattern per run and none to leave out):
# some tests kill or wedge tgtd on an rbd LUN, stock tgtd as much as the
# port, and a run must not take the rest down with it. A tgtd that dies
# under a test is started again and the test is listed as killing it;
# a test that kills stock tgtd too is tgt's defect (contrib/tgt/README.md:
# bs_rbd calls rbd_read() with no buffer for a READ that expects no data,
# and librbd aborts the process), one that kills the port alone fails the
# test. Two suites are not run at all because they wedge both tgtds rather
# than kill them: SCSI.GetLBAStatus (tgt answers GET LBA STATUS from
# lseek(SEEK_DATA/SEEK_HOLE) on a descriptor bs_rbd does not have, and
# loops for ever in tgtd's main thread) and iSCSI.iSCSIResiduals (whose
# Read10Invalid aborts both, as above, before the rest of the suite).
# Fails if a test stock tgtd passes fails (or does not run) on
# tgtd-on-libidm; prints both results side by side and names the tests
# that differ (tgt-idm-conformance does the same on file LUNs).
# Usage: tgt-idm-rbd-conformance.sh [WORKDIR of build-tgt-idm.sh]
# shellcheck disable=SC2034,SC2154 # IDM_TEST_NAME is read by the lib; URL_*, PID_* set by start_tgtd
IDM_TEST_NAME=tgt-idm-rbd-conformance
# shellcheck source-path=SCRIPTDIR source=tgt-idm-lib.sh
. "$(dirname "$0")/tgt-idm-lib.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/ceph.sh
. "$(dirname "$0")/../lib/ceph.sh"
need iscsi-test-cu libiscsi-bin
find_tgt_idm "${1:-}"
[ -x "${TGTD_STOCK:-}" ] ||
	skip "no stock tgtd built (contrib/build-ports.sh BUILDDIR tgt builds one)"
[ "${TGT_RBD:-0}" = 1 ] ||
	skip "the tgtds were built without tgt's rbd backing store (install librbd-dev and librados-dev, then contrib/build-ports.sh BUILDDIR tgt)"
SUITES=${IDM_RBD_CU_SUITES:-$(printf 'SCSI.%s ' TestUnitReady Inquiry ReadCapacity10 \
	ReadCapacity16 Read6 Read10 Read12 Read16 Write10 Write12 Write16 \
	WriteVerify10 WriteVerify16 Verify10 Verify16 WriteSame10 WriteSame16 \
	Unmap CompareAndWrite OrWrite Prefetch10 ModeSense6 \
	ReportSupportedOpcodes)iSCSI.iSCSIcmdsn iSCSI.iSCSIdatasn iSCSI.iSCSITMF}
iscsi-test-cu -l >"$TMP/list" 2>&1 || fail "iscsi-test-cu -l"
TESTS=()
for suite in $SUITES; do
	mapfile -t -O ${#TESTS[@]} TESTS < <(grep -E "^${suite//./\\.}\\.[^.]+$" "$TMP/list")
done
[ ${#TESTS[@]} -gt 0 ] || fail "no test in $SUITES"

log "starting the one-node Ceph"
CEPH_IMAGE=stock
# small: WRITE SAME of 0 blocks writes to the end of the LUN
CEPH_IMAGE_SIZE=64M
ceph_up "$TMP/ceph"
run_bounded 60 "$TMP/create.out" rbd create --size "$CEPH_IMAGE_SIZE" "$CEPH_POOL/idm" ||
	fail "rbd create $CEPH_POOL/idm"

log "stock tgtd on rbd:$CEPH_POOL/stock, tgtd-on-libidm on rbd:$CEPH_POOL/idm"
# tgtd NAME on image NAME (again, after a test killed it: a new port)
start_rbd_tgtd() {
	local name=$1 bin=$TGTD_IDM cport=7
	[ "$name" = idm ] || { bin=$TGTD_STOCK; cport=6; }
	TGT_LUN_ARGS=(--bstype rbd --backing-store "$CEPH_POOL/$name"
		--bsopts "conf=$CEPH_CONF;id=$CEPH_USER")
	start_tgtd "$name" "$bin" "$cport" 0 >>"$TMP/starts.log" ||
		{ tail -20 "$TMP/tgtd-$name.log"; fail "$name tgtd did not start with an rbd LUN"; }
}
start_rbd_tgtd stock
start_rbd_tgtd idm

# cu_one NAME TEST: TEST against tgtd NAME, its output added to
# $TMP/NAME.out. Ends with the run, or as soon as that tgtd has died
# (libiscsi would try to log in again until the guard). Runs beside the
# other tgtd's (in a subshell: it changes nothing of this shell's).
cu_one() {
	local name=$1 t=$2 url=URL_$1 pid=PID_$1 cu
	timeout -k 5 "$(scaled 120)" iscsi-test-cu --dataloss --test="$t" "${!url}" \
		>"$TMP/one-$name.out" 2>&1 &
	cu=$!
	while kill -0 "$cu" 2>/dev/null; do
		kill -0 "${!pid}" 2>/dev/null || { kill "$cu"; break; }
		sleep 0.1
	done
	wait "$cu"
	cat "$TMP/one-$name.out" >>"$TMP/$name.out"
}
# restart_dead NAME TEST: if TEST killed tgtd NAME, name TEST in
# $TMP/NAME.killed and start that tgtd again
restart_dead() {
	local name=$1 t=$2 pid=PID_$1
	kill -0 "${!pid}" 2>/dev/null && return 0
	echo "$t" >>"$TMP/$name.killed"
	echo "   $t killed $name tgtd: $(grep -m1 -E 'FAILED ceph_assert|Aborted|Segmentation' "$TMP/tgtd-$name.log")"
	mv "$TMP/tgtd-$name.log" "$TMP/tgtd-$name.log.$(date +%s%N)"
	start_rbd_tgtd "$name"
}
log "iscsi-test-cu, ${#TESTS[@]} tests of: $SUITES"
: >"$TMP/stock.out"; : >"$TMP/idm.out"; : >"$TMP/stock.killed"; : >"$TMP/idm.killed"
for t in "${TESTS[@]}"; do
	cu_one stock "$t" &
	job=$!
	cu_one idm "$t"
	wait "$job"
	restart_dead stock "$t"
	restart_dead idm "$t"
done
log "done"

results "$TMP/stock.out" | sort >"$TMP/stock.res"
results "$TMP/idm.out" | sort >"$TMP/idm.res"
stotal=$(wc -l <"$TMP/stock.res")
spass=$(grep -c ' passed$' "$TMP/stock.res" || true)
itotal=$(wc -l <"$TMP/idm.res")
ipass=$(grep -c ' passed$' "$TMP/idm.res" || true)
compare_runs "iscsi-test-cu on RBD" "$spass/$stotal" "$ipass/$itotal"
echo "tests that killed stock tgtd: $(tr '\n' ' ' <"$TMP/stock.killed")"
echo "tests that killed tgtd-on-libidm: $(tr '\n' ' ' <"$TMP/idm.killed")"
port_only=$(sort "$TMP/idm.killed" | comm -23 - <(sort "$TMP/stock.killed"))
[ -z "$port_only" ] || fail "tests that killed tgtd-on-libidm but not stock tgtd: $port_only"
if [ "$stotal" -lt 50 ]; then
	tail -20 "$TMP/stock.out"
	fail "the reference run against stock tgtd did not complete"
fi
if [ -n "$WORSE" ]; then
	printf 'passing on stock tgtd, not on tgtd-on-libidm:\n%s\n' "$WORSE"
	tail -30 "$TMP/tgtd-idm.log"
	fail "tgtd-on-libidm on RBD fails tests stock tgtd on RBD passes"
fi
echo "PASS: tgtd-on-libidm with bs_rbd passes every test stock tgtd with bs_rbd passes"
