#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Run every meson test of suite 'rdma' in ONE soft-RoCE guest boot, and
# optionally, before them, the iSER provider's own tests of an
# AddressSanitizer/UBSan build in the same boot.
#
#   tests/rdma-vm/ci.sh [BUILD_DIR [ASAN_BUILD_DIR]]   (default: build)
#
# Builds nothing: the build dirs must already be built (on the host, where
# the compiler is fast; the guest runs 15-30x slower under TCG). Results
# land in BUILD_DIR/meson-logs/testlog-rdma.json and
# ASAN_BUILD_DIR/meson-logs/testlog-rdma-asan.json (and .txt); the exit
# status is the first failing meson's (or vm-run's 124/125 when the guest
# itself failed).
#
# IDM_VM_TESTS: test names instead of the whole suite; IDM_VM_LOG: the name
# of this boot's logs instead of "rdma" (testlog-NAME.json, NAME-record,
# guest-faults-NAME.txt), so that a second guest may run another part of
# the suite beside the first (.ci/run does: suite rdma-second).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd -P)
build=$(cd "${1:-build}" && pwd -P)
[ -f "$build/build.ninja" ] || { echo "ci.sh: $build is not a meson build dir" >&2; exit 2; }
mkdir -p "$build/meson-logs"
lname=${IDM_VM_LOG:-rdma}
case "$lname" in *[!a-z0-9-]* | '') echo "ci.sh: IDM_VM_LOG=$lname: letters, digits and - only" >&2; exit 2 ;; esac
rm -f "$build/meson-logs/testlog-$lname.json"
asan=
shares=(--share "$build")
if [ -n "${2:-}" ]; then
	asan=$(cd "$2" && pwd -P)
	[ -f "$asan/build.ninja" ] || { echo "ci.sh: $asan is not a meson build dir" >&2; exit 2; }
	mkdir -p "$asan/meson-logs"
	rm -f "$asan/meson-logs/testlog-rdma-asan.json"
	shares+=(--share "$asan")
fi

# What runs inside the guest: $1 the build, $2 the sanitizer build or "",
# $3 the sanitizer pass's tests (comma-separated, "" none), $4 the gcc
# pass's: "suite" (all of suite rdma) or a comma-separated list ("" none),
# $5 the logs' suffix ("" first boot, "-rerun" the recovery boot), $6 and
# $7 the two passes' record dirs (test-record, fault-lib.sh), $8 the gcc
# pass's log name (IDM_VM_LOG).
# The sanitizer pass runs first and covers the provider's own tests
# (conformance, loopback, faults, STag hygiene, fallback), not the interop
# scripts whose peers are other people's programs, nor the destructive
# faults: those flap the link and kill processes, after which rxe refuses
# new connections for a while, so they run once, last, in the gcc suite
# (meson priority -100).
# shellcheck disable=SC2016 # expanded by the guest's bash
guest_script='rc=0
w=$(dirname "$0")/test-record
if [ -n "$3" ]; then
	IFS=, read -r -a t <<< "$3"
	IDM_VM_RECORD=$6 meson test -C "$2" --no-rebuild --print-errorlogs --wrapper "$w" \
		--timeout-multiplier 3 --logbase "testlog-rdma-asan$5" "${t[@]}" || rc=$?
fi
# IDM_CU_NO_LIO: iser-iscsi-test-cu-vs-idm-target without its LIO
# reference, which judges nothing and whose teardown has hung (why: the
# head of tests/iser-interop/iscsi_test_cu.sh)
if [ "$4" = suite ]; then t=(--suite rdma); else IFS=, read -r -a t <<< "$4"; fi
if [ "${#t[@]}" -gt 0 ]; then
	IDM_VM_RECORD=$7 IDM_CU_NO_LIO=1 meson test -C "$1" --no-rebuild --print-errorlogs \
		--wrapper "$w" --logbase "testlog-$8$5" "${t[@]}" || { r=$?; [ "$rc" -ne 0 ] || rc=$r; }
fi
exit "$rc"'

# shellcheck source-path=SCRIPTDIR source=fault-lib.sh
. "$here/fault-lib.sh"
cd "$src"
start=$(date +%s)
FAULTS=$build/meson-logs/guest-faults-$lname.txt
FAULT_RUNNING=$(mktemp)
ffile=$(mktemp)
trap 'rm -f "$FAULT_RUNNING" "$ffile"' EXIT
: > "$FAULTS"
rm -f "$build/meson-logs/testlog-$lname-rerun.json"
[ -z "$asan" ] || rm -f "$asan/meson-logs/testlog-rdma-asan-rerun.json"
sel_a='' sel_g=suite sfx='' fault='' kind=''
vmname=rdma-vm
[ "$lname" = rdma ] || vmname=$lname
# IDM_VM_TESTS: names instead of the whole suite (by hand, e.g. the rig's
# self-test, tests/rdma-vm/meson.build)
read -r -a only <<< "${IDM_VM_TESTS:-}"
[ "${#only[@]}" -eq 0 ] || sel_g=$(IFS=,; echo "${only[*]}")
[ -z "$asan" ] || sel_a=test_loopback_iser,test_iser_loopback,test_iser_faults,test_iser_stag,test_iser_fallback_rdma,test_iser_move
# The guard: about twice what the whole suite takes with CI's other lanes
# beside it on a quiet 2-core host (2200 s), since a loaded host starves
# the emulated CPU first; CI's own timeout (4500) is above it. A recovery
# boot gets what is left of IDM_VM_TOTAL (4400), if that is 300 s or more.
guard=${IDM_VM_TIMEOUT:-4200}
total=${IDM_VM_TOTAL:-4400}
for boot in 1 2; do
	rec_a=${asan:-$build}/meson-logs/rdma-asan-record$sfx
	rec_g=$build/meson-logs/$lname-record$sfx
	rm -rf "$rec_a" "$rec_g"
	mkdir -p "$rec_a" "$rec_g"
	rm -f "$ffile"
	rc=0
	IDM_VM_FAULT_FILE=$ffile "$here/vm-run" "${shares[@]}" --timeout "$guard" -- \
		bash -c "$guest_script" "$here/rdma-ci" "$build" "$asan" "$sel_a" "$sel_g" "$sfx" \
		"$rec_a" "$rec_g" "$lname" || rc=$?
	fault_lognames "$build/meson-logs" "testlog-$lname$sfx"
	[ -z "$asan" ] || fault_lognames "$asan/meson-logs" "testlog-rdma-asan$sfx"
	if [ -n "$fault" ]; then
		# the recovery boot's own outcome decides whether the fault was recovered
		if [ -s "$ffile" ]; then st=unrecovered; else st=recovered; fi
		fault_line "$vmname" "$fault" "$st" "$sel_a${sel_a:+,}$sel_g" >> "$FAULTS"
		: > "$FAULT_RUNNING"
	fi
	[ -s "$ffile" ] || break
	IFS=$'\t' read -r kind fault < "$ffile"
	left=$(( total - ($(date +%s) - start) ))
	final=
	if [ "$boot" = 2 ] || [ "$left" -lt 300 ]; then final=1; fi
	new_a='' new_g=''
	[ -z "$sel_a" ] || new_a=$(fault_recover "$asan" "$rec_a" "$asan/meson-logs/testlog-rdma-asan$sfx.json" \
		"tests:$sel_a" "$fault" "$kind" "$final")
	if [ "$sel_g" = suite ]; then g=suite:rdma; else g=tests:$sel_g; fi
	[ -z "$sel_g" ] || new_g=$(fault_recover "$build" "$rec_g" "$build/meson-logs/testlog-$lname$sfx.json" \
		"$g" "$fault" "$kind" "$final")
	if [ -n "$final" ]; then
		fault_line "$vmname" "$fault" unrecovered "" >> "$FAULTS"
		break
	fi
	if [ -z "$new_a$new_g" ]; then
		fault_line "$vmname" "$fault" recovered "" >> "$FAULTS"
		rc=0
		fault_log_failed "$build"/meson-logs/testlog-"$lname"{,-rerun}.json ${asan:+"$asan"/meson-logs/testlog-rdma-asan*.json} && rc=1
		break
	fi
	echo "ci.sh: WARNING: $fault; booting a fresh guest for the tests it had not completed: ${new_a}${new_a:+,}${new_g}" >&2
	sel_a=$new_a sel_g=$new_g sfx=-rerun guard=$left
	# fault injection (test-record) is for the first boot only, unless
	# IDM_VM_FAULT_AGAIN=1 asks for the unrecovered case
	[ -n "${IDM_VM_FAULT_AGAIN:-}" ] || unset IDM_VM_FAULT_AT
done
# After a recovery boot, its status is meson's there; a test that failed in
# the first boot still fails the step.
if [ -n "$fault" ] && [ "$rc" = 0 ] &&
	fault_log_failed "$build"/meson-logs/testlog-"$lname"{,-rerun}.json ${asan:+"$asan"/meson-logs/testlog-rdma-asan*.json}; then
	rc=1
fi
while IFS=$'\t' read -r st what; do echo "ci.sh: GUEST FAULT ($st): $what" >&2; done < "$FAULTS"
echo "ci.sh: $lname tests finished with status $rc in $(( $(date +%s) - start )) s" >&2
exit "$rc"
