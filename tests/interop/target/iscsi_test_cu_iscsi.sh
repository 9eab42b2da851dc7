#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# libiscsi's iscsi-test-cu, iSCSI family, against idm-target: must pass
# in full.
#
# The target answers ImmediateData=No and InitialR2T=Yes here. Reason:
# iSCSIDataSnInvalid injects bad DataSNs into Data-Out PDUs, but after its
# first (correctly) failed case libiscsi reconnects and its next one-block
# WRITE then travels as immediate data -- no Data-Out to corrupt, so the
# "must fail" WRITE succeeds. With solicited data only, every case sends
# Data-Out and the target (libidm's DataSN check) fails each one.
# AbortTaskSimpleAsync in turn needs the WRITE to be a single PDU
# (InitialR2T=Yes). The run with the default keys (ImmediateData=Yes) is
# printed too, for information.
. "$(dirname "$0")/common.sh"
IDM_TARGET=$1
need_libiscsi iscsi-test-cu

#
# The two runs go side by side, each against a target of its own (own
# port, own RAM LUN, one initiator): they mostly wait on timers, so
# together they take the wall time of one.
start_target "$TMP/target2.log"
URL2=$URL
timeout 60 iscsi-test-cu --dataloss --test=iSCSI "$URL2" >"$TMP/cu2.out" 2>&1 &
run2=$!
start_target "$TMP/target.log" --key ImmediateData=No --key InitialR2T=Yes
timeout 60 iscsi-test-cu --dataloss --test=iSCSI "$URL" >"$TMP/cu.out" 2>&1
read -r pass total < <(summary "$TMP/cu.out")
grep -E "Test:|FAILED|Run Summary|tests " "$TMP/cu.out"
echo "idm-target iSCSI family (solicited data): $pass of $total passed"

wait "$run2"
read -r pass2 total2 < <(summary "$TMP/cu2.out")
echo "idm-target iSCSI family (default keys, for information): $pass2 of $total2 passed"
failed_tests "$TMP/cu2.out"

if [ -z "$pass" ] || [ "$pass" != "$total" ] || [ "$total" -lt 15 ]; then
	echo "FAIL: the iSCSI family must pass in full"
	tail -50 "$TMP/target.log"
	exit 1
fi
echo "PASS"
