# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Shared by the link-cut tests (idm_cut.sh, kernel_cut.sh; sourced after
# IDM_TEST_NAME is set). The link is cut with pair_link cut (frames dropped
# both ways, carriers up) for CUT_S (30) seconds while I/O runs.
# Times printed: "detection" from the cut to the initiator declaring the
# connection lost; "recovery" from the link coming back to the session
# being usable again. Measurements, never assertions.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
CUT_S=${CUT_S:-30}
CLEANUP_CMDS+=("pair_link restore")
now() { echo "${EPOCHREALTIME/,/.}"; }
since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
# epoch seconds of an "HH:MM:SS.mmm" stamp of today (idm-initiator's logs)
stamp_epoch() { date -d "$(date +%F) $1" +%s.%N; }

# cut_idm_target NAME IQN PROVIDER: idm-target in A on $A_IP, a free port,
# a 256 MiB RAM LUN; sets PORT. Stopped when the test ends; its log:
# pair_a_log NAME.
cut_idm_target() {
	PAIR_TGT_PROVIDER=$3 pair_idm_target "$1" "$2" ram:256M -v
}

# cut_during PID FILE REGEX: once REGEX shows in FILE (the I/O runs), wait
# 2 s, cut the link for CUT_S seconds, restore it. Sets CUT_AT, RESTORE_AT.
cut_during() {
	local pid=$1 file=$2 re=$3 i
	for ((i = 0; i < 600; i++)); do
		grep -Eq -- "$re" "$file" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || fail "the I/O ended before the cut"
		_pair_sleep 0.1
	done
	_pair_sleep 2
	kill -0 "$pid" 2>/dev/null || fail "the I/O ended before the cut"
	CUT_AT=$(now)
	pair_link cut || fail "pair_link cut"
	log "link cut for $CUT_S s"
	_pair_sleep "$CUT_S"
	RESTORE_AT=$(now)
	pair_link restore || fail "pair_link restore"
	log "link restored"
}

# report_idm ERRFILE: detection and recovery times from idm-initiator's log
report_idm() {
	local lost rec
	lost=$(grep -m1 "connection lost" "$1" | cut -d' ' -f1)
	rec=$(grep -m1 "recovered in" "$1" | cut -d' ' -f1)
	grep -E "connection lost|recovered in|failed:" "$1" | cut -c1-200 | sed 's/^/  | /'
	[ -n "$lost" ] || fail "the initiator never noticed the cut"
	[ -n "$rec" ] || fail "the session did not recover"
	log "detection $(since "$CUT_AT" "$(stamp_epoch "$lost")") s after the cut;" \
		"recovery $(since "$RESTORE_AT" "$(stamp_epoch "$rec")") s after the link came back"
}
