#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# libiscsi's iscsi-test-cu --test=ALL against idm-target and, in the same
# run, against tgtd (the reference), printed side by side. Passes when
# idm-target reaches THRESHOLD passed tests (iscsi-test-cu exits 1 on any
# failure, so the CUnit "Run Summary" is parsed).
. "$(dirname "$0")/common.sh"
IDM_TARGET=$1
THRESHOLD=${2:-229}
need_libiscsi iscsi-test-cu

# Both targets at once, one iscsi-test-cu run each: the runs mostly wait
# on timers, each target has its own port and LUN and sees one initiator,
# so side by side they take the wall time of the longer one.
start_target "$TMP/target.log"
have_tgt=0
start_tgt && have_tgt=1
if [ "$have_tgt" = 1 ]; then
	timeout 60 iscsi-test-cu --dataloss --test=ALL "$TGT_URL" >"$TMP/tgt.out" 2>&1 &
	run_tgt=$!
fi
timeout 90 iscsi-test-cu --dataloss --test=ALL "$URL" >"$TMP/idm.out" 2>&1
read -r pass total < <(summary "$TMP/idm.out")
echo "idm-target failures:"
failed_tests "$TMP/idm.out"

skipped=$(skipped_tests "$TMP/idm.out")
tpass=-; ttotal=-; tskipped=-
if [ "$have_tgt" = 1 ]; then
	wait "$run_tgt"
	read -r tpass ttotal < <(summary "$TMP/tgt.out")
	tskipped=$(skipped_tests "$TMP/tgt.out")
	echo "tgt failures:"
	failed_tests "$TMP/tgt.out"
else
	echo "tgtd not available: reference run skipped"
fi

echo "iscsi-test-cu --test=ALL (CUnit counts a test that skips itself as passed):"
printf '%-12s %8s %8s %18s\n' "target" "passed" "total" "logged a skip"
printf '%-12s %8s %8s %18s\n' "idm-target" "${pass:-?}" "${total:-?}" "$skipped"
printf '%-12s %8s %8s %18s\n' "tgt" "$tpass" "$ttotal" "$tskipped"

if [ -z "$pass" ] || [ "$pass" -lt "$THRESHOLD" ]; then
	echo "FAIL: idm-target passed ${pass:-none}, threshold $THRESHOLD"
	tail -40 "$TMP/target.log"
	exit 1
fi
echo "PASS"
