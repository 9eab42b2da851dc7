# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Host side of a guest fault, shared by ci.sh and ci-pair.sh: a guest that
# stopped without a result (vm-run/vm-pair wrote IDM_VM_FAULT_FILE) has its
# meson log rebuilt from tests/rdma-vm/test-record's records, and the tests
# it never ran are run once more in a freshly booted guest. A test that
# ended (passed or failed) is never rerun. The test that was running then
# is rerun only when the guest's kernel log shows a panic or Oops (the
# guest's own fault, not our test's); after a guard stop or an unexplained
# QEMU exit it counts as an ERROR naming the fault. A second fault is not
# recovered: what it left unrun counts as ERROR.
#
# The CI summary learns of each fault from FAULTS (one line per fault:
# "recovered|unrecovered<TAB>LANE: WHAT during TEST; ..."), which
# .ci/summarize.py --faults prints apart from the test counts.

# fault_recover BUILD RECORD LOG SEL FAULT KIND FINAL: SEL is suite:NAME or
# tests:A,B,...; prints the tests to rerun, comma-separated; appends the
# running ones to $FAULT_RUNNING.
fault_recover() {
	local build=$1 record=$2 log=$3 sel=$4 fault=$5 kind=$6 final=$7 args=()
	[ "$kind" = kernel ] && args+=(--rerun-running)
	[ -z "$final" ] || args+=(--final)
	case "$sel" in
	suite:*) args+=(--suite "${sel#suite:}") ;;
	tests:*) args+=(--tests "${sel#tests:}") ;;
	esac
	python3 "$(dirname "${BASH_SOURCE[0]}")/recover.py" --build "$build" --record "$record" \
		--log "$log" --fault "$fault" --running-file "$FAULT_RUNNING" "${args[@]}" | paste -sd,
}

# fault_line LANE FAULT RECOVERED RERUN_LIST: the FAULTS line.
fault_line() {
	local what=$2 during n
	during=$(sort -u "$FAULT_RUNNING" | paste -sd, | sed 's/,/, /g')
	# grep -c exits 1 when it counts 0 (no test list): not a failure here
	n=$(echo "$4" | tr ',' '\n' | grep -c . || true)
	printf '%s\t%s: %s%s; %s\n' "$3" "$1" "$what" "${during:+ during test $during}" \
		"$(if [ "$3" = recovered ]; then
			echo "$n test(s) it had not completed ran in a fresh guest"
		else
			echo "not recovered: what it had not completed counts as ERROR"
		fi)"
}

# fault_log_failed LOG...: true when a rebuilt log holds a failed test
fault_log_failed() {
	grep -qhE '"result": "(FAIL|ERROR|TIMEOUT|UNEXPECTEDPASS)"' "$@" 2>/dev/null
}

# fault_lognames DIR BASE...: meson names its logs BASE-test-record.* when
# it runs with the wrapper: give them back the names CI counts (BASE.*).
fault_lognames() {
	local d=$1 b x
	shift
	for b in "$@"; do
		for x in json txt; do
			[ ! -e "$d/$b-test-record.$x" ] || mv -f "$d/$b-test-record.$x" "$d/$b.$x"
		done
	done
}
