# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Shared by the link-cut tests of tests/rdma-pair/ (suite rdma-pair, run in
# guest B by tests/rdma-vm/ci-pair.sh; guest A is driven through
# tests/rdma-vm/pair-lib.sh). Source it after setting CUT_NAME.
#
# Times printed: "detection" is from the cut to the initiator declaring
# the connection lost; "recovery" from the link coming back to the session
# being usable again (idm-initiator: "recovered in"; kernel: iscsid's
# "operational after recovery"). Both are measurements, not assertions.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PAIR_LIB=$HERE/../rdma-vm/pair-lib.sh
say() { echo "${CUT_NAME:-cut}: $*"; }
fail() { say "FAIL: $*"; exit 1; }
skip() { say "SKIP: $*"; exit 77; }
[ -r "$PAIR_LIB" ] || skip "tests/rdma-vm/pair-lib.sh is missing (two-guest rig)"
# shellcheck source=/dev/null
. "$PAIR_LIB"
pair_require || skip "not inside the two-guest rig"
: "${IDM_PAIR_A_IP:?}" "${IDM_PAIR_B_IP:?}"
CUT_S=${CUT_S:-30}
TMP=$(mktemp -d "/tmp/${CUT_NAME:-cut}.XXXXXX")
CLEANUP_CMDS=()
cleanup() {
	local i
	for ((i = ${#CLEANUP_CMDS[@]} - 1; i >= 0; i--)); do
		eval "${CLEANUP_CMDS[i]}" >/dev/null 2>&1 || true
	done
	pair_link restore >/dev/null 2>&1 || true
	rm -rf "$TMP"
}
trap cleanup EXIT
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
# epoch of an "HH:MM:SS.mmm" stamp of today (idm-initiator's log lines)
stamp_epoch() { date -d "$(date +%F) $1" +%s.%N; }

# start_idm_target IQN PROVIDER: idm-target in guest A on $IDM_PAIR_A_IP
start_idm_target() {
	local tgt=$1 iqn=$2 prov=$3
	pair_a_start tgt "$tgt" --portal "$IDM_PAIR_A_IP:3260" \
		--provider "$prov" --target-name "$iqn" --lun ram:256M -v
	CLEANUP_CMDS+=("pair_a_stop tgt")
	pair_a_wait_log tgt "listening|portal" 60 ||
		fail "idm-target did not start in guest A"
}

# cut_during PID WAIT_FILE REGEX: once REGEX shows in WAIT_FILE (the
# I/O runs), wait 2 s, cut the link for CUT_S seconds, restore it.
# Sets CUT_AT and RESTORE_AT (epoch seconds).
cut_during() {
	local pid=$1 file=$2 re=$3 i
	for ((i = 0; i < 600; i++)); do
		grep -Eq -- "$re" "$file" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || fail "the I/O ended before the cut"
		sleep 0.1
	done
	sleep 2
	kill -0 "$pid" 2>/dev/null || fail "the I/O ended before the cut"
	CUT_AT=$(now)
	pair_link cut || fail "pair_link cut"
	say "link cut for $CUT_S s"
	sleep "$CUT_S"
	RESTORE_AT=$(now)
	pair_link restore || fail "pair_link restore"
	say "link restored"
}

# report_idm ERRFILE: detection and recovery times from idm-initiator's log
report_idm() {
	local lost rec
	lost=$(grep -m1 -E "connection lost" "$1" | cut -d' ' -f1)
	rec=$(grep -m1 -E "recovered in" "$1" | cut -d' ' -f1)
	grep -E "connection lost|recovered in|failed:" "$1" | cut -c1-200 | sed 's/^/  | /'
	[ -n "$lost" ] || fail "the initiator never noticed the cut"
	[ -n "$rec" ] || fail "the session did not recover"
	say "detection $(since "$CUT_AT" "$(stamp_epoch "$lost")") s after the cut;" \
		"recovery $(since "$RESTORE_AT" "$(stamp_epoch "$rec")") s after the link came back"
}
