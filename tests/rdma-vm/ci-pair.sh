#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Run every meson test of suite 'rdma-pair' in guest B of ONE two-guest
# boot (vm-pair), then summarise what crossed the link.
#
#   tests/rdma-vm/ci-pair.sh [BUILD_DIR]        (default: build)
#
# Builds nothing: BUILD_DIR must already be built on the host. Results:
#   BUILD_DIR/meson-logs/testlog-rdma-pair.json (and .txt)  meson's log
#   BUILD_DIR/meson-logs/rdma-pair.pcap        every frame, snap length
#                                              IDM_PAIR_SNAPLEN (400: whole
#                                              CM MADs and iSER headers)
#   BUILD_DIR/meson-logs/rdma-pair-wire.txt    the capture's summary per RC
#                                              connection (pair-pcap-summary.sh)
# Exit status: meson's, or vm-pair's 124/125 when a guest itself failed.
# The guests are stopped after IDM_VM_TIMEOUT s (3300, about 2.5 times the
# suite's time beside CI's other lanes on a quiet host; inside CI's 3600).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd -P)
build=$(cd "${1:-build}" && pwd -P)
[ -f "$build/build.ninja" ] || { echo "ci-pair.sh: $build is not a meson build dir" >&2; exit 2; }
logs=$build/meson-logs
mkdir -p "$logs"
rm -f "$logs/testlog-rdma-pair.json" "$logs/testlog-rdma-pair.txt" "$logs/rdma-pair.pcap" \
	"$logs/rdma-pair-wire.txt"

# shellcheck source-path=SCRIPTDIR source=fault-lib.sh
. "$here/fault-lib.sh"
cd "$src"
start=$(date +%s)
FAULTS=$logs/guest-faults-rdma-pair.txt
FAULT_RUNNING=$(mktemp)
ffile=$(mktemp)
trap 'rm -f "$FAULT_RUNNING" "$ffile"' EXIT
: > "$FAULTS"
rm -f "$logs/testlog-rdma-pair-rerun.json" "$logs/rdma-pair-rerun.pcap" "$logs/rdma-pair-rerun-wire.txt"
# IDM_PAIR_TESTS: names instead of the whole suite (by hand)
read -r -a only <<< "${IDM_PAIR_TESTS:-}"
if [ "${#only[@]}" -gt 0 ]; then sel=$(IFS=,; echo "${only[*]}"); else sel=suite; fi
sfx= fault= kind=
guard=${IDM_VM_TIMEOUT:-3300}
total=${IDM_VM_TOTAL:-3500}
for boot in 1 2; do
	rec=$logs/rdma-pair-record$sfx
	rm -rf "$rec"; mkdir -p "$rec"
	rm -f "$ffile"
	if [ "$sel" = suite ]; then t=(--suite rdma-pair); else IFS=, read -r -a t <<< "$sel"; fi
	rc=0
	IDM_VM_RECORD=$rec IDM_VM_FAULT_FILE=$ffile "$here/vm-pair" --share "$build" --timeout "$guard" \
		--pcap "$logs/rdma-pair$sfx.pcap" --snaplen "${IDM_PAIR_SNAPLEN:-400}" -- \
		meson test -C "$build" --no-rebuild --print-errorlogs --wrapper "$here/test-record" \
		--logbase "testlog-rdma-pair$sfx" "${t[@]}" || rc=$?
	fault_lognames "$logs" "testlog-rdma-pair$sfx"
	if [ -s "$logs/rdma-pair$sfx.pcap" ]; then
		tt=$(date +%s)
		src_rc=0
		"$here/pair-pcap-summary.sh" "$logs/rdma-pair$sfx.pcap" > "$logs/rdma-pair$sfx-wire.txt" 2>&1 || src_rc=$?
		echo "ci-pair.sh: the link, from $logs/rdma-pair$sfx.pcap ($(du -h "$logs/rdma-pair$sfx.pcap" | cut -f1); summary took $(( $(date +%s) - tt )) s, status $src_rc):"
		sed 's/^/wire| /' "$logs/rdma-pair$sfx-wire.txt"
	fi
	if [ -n "$fault" ]; then
		if [ -s "$ffile" ]; then st=unrecovered; else st=recovered; fi
		fault_line rdma-pair "$fault" "$st" "$sel" >> "$FAULTS"
		: > "$FAULT_RUNNING"
	fi
	[ -s "$ffile" ] || break
	IFS=$'\t' read -r kind fault < "$ffile"
	left=$(( total - ($(date +%s) - start) ))
	final=
	if [ "$boot" = 2 ] || [ "$left" -lt 300 ]; then final=1; fi
	if [ "$sel" = suite ]; then g=suite:rdma-pair; else g=tests:$sel; fi
	new=$(fault_recover "$build" "$rec" "$logs/testlog-rdma-pair$sfx.json" "$g" "$fault" "$kind" "$final")
	if [ -n "$final" ]; then
		fault_line rdma-pair "$fault" unrecovered "" >> "$FAULTS"
		break
	fi
	if [ -z "$new" ]; then
		fault_line rdma-pair "$fault" recovered "" >> "$FAULTS"
		rc=0
		break
	fi
	echo "ci-pair.sh: WARNING: $fault; booting a fresh pair for the tests it had not completed: $new" >&2
	sel=$new sfx=-rerun guard=$left
	# fault injection (test-record) is for the first boot only, unless
	# IDM_VM_FAULT_AGAIN=1 asks for the unrecovered case
	[ -n "${IDM_VM_FAULT_AGAIN:-}" ] || unset IDM_VM_FAULT_AT
done
# After a recovery boot its status is meson's there; a test that failed
# in the first boot still fails the step.
if [ -n "$fault" ] && [ "$rc" = 0 ] && fault_log_failed "$logs"/testlog-rdma-pair*.json; then rc=1; fi
guest=$(( $(date +%s) - start ))

# One line with what recovery can hide: the capture's NAKs and 0-byte
# Sends (doc/iser.md), and the connections idm-initiator lost and
# recovered (the recoveries[...] lines of the tests, tests/rdma-pair/lib.sh).
if [ -s "$logs/testlog-rdma-pair.txt" ]; then
	# only the logs that exist: under pipefail a cat of a missing rerun log
	# would fail the assignment, and set -e then ends the script with 1
	txts=("$logs/testlog-rdma-pair.txt")
	if [ -s "$logs/testlog-rdma-pair-rerun.txt" ]; then txts+=("$logs/testlog-rdma-pair-rerun.txt"); fi
	lost=$(cat "${txts[@]}" |
		sed -n 's/^recoveries\[[^]]*\]: \([0-9]*\) connection(s) lost, \([0-9]*\) recovered$/\1 \2/p' | awk '{l += $1; r += $2} END {printf "%d lost, %d recovered", l, r}')
	wire=$(sed -n 's/^total: //p' "$logs/rdma-pair-wire.txt" 2>/dev/null || true)
	echo "ci-pair.sh: counted: idm-initiator connections ${lost}; capture: ${wire:-no summary}"
fi
while IFS=$'\t' read -r st what; do echo "ci-pair.sh: GUEST FAULT ($st): $what" >&2; done < "$FAULTS"
echo "ci-pair.sh: rdma-pair suite finished with status $rc in $(( $(date +%s) - start )) s (guests $guest s)" >&2
exit "$rc"
