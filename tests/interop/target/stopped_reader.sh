#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A peer that stops reading is closed after IDM_TCP_ZERO_WINDOW_TIMEOUT_MS
# (issue #20, item 5). The client (slow_peer.py stop) sends NOP-Out pings
# until idm-target takes no more and never reads: its window stays zero
# while its kernel answers the target's window probes. With the timeout
# at 3 s the target must close the connection after 3 s and before 3 s
# plus two of the provider's checks (0.75 s each) plus slack, and say
# "peer stopped reading for 3 s".
# Usage: stopped_reader.sh IDM_TARGET
. "$(dirname "$0")/common.sh"
IDM_TARGET=$1
PEER="$(dirname "$0")/slow_peer.py"
need python3
export IDM_TCP_ZERO_WINDOW_TIMEOUT_MS=3000
unset IDM_TCP_USER_TIMEOUT_MS
LO=3.0 HI=7.5 # s after the login; 3 + 2 x 0.75 + 3 of slack for a loaded host

start_target "$TMP/target.log"
# shellcheck disable=SC2034 # for target_alive
TGT_LOG=$TMP/target.log
# shellcheck disable=SC2016 # expanded when a check fails
FAIL_DIAG='echo "--- idm-target log:"; tail -n 20 "$TMP/target.log"'
run_bounded 90 "$TMP/peer.out" python3 "$PEER" stop 127.0.0.1 "$PORT" "$IQN" 4096 ||
	fail "the target did not close the stopped reader"
S=$(sed -n 's/^closed after \([0-9.]*\) s.*/\1/p' "$TMP/peer.out")
[ -n "$S" ] || fail "the peer did not report"
awk -v s="$S" -v lo="$LO" -v hi="$HI" 'BEGIN { exit !(s >= lo - 0.05 && s <= hi) }' ||
	fail "closed after $S s, not within [$LO, $HI] s"
log "closed after $S s (bound [$LO, $HI] s)"
for _ in $(seq 50); do
	grep -q 'peer stopped reading for 3 s' "$TMP/target.log" && break
	sleep 0.1
done
grep 'peer stopped reading for 3 s' "$TMP/target.log" ||
	fail "idm-target did not say 'peer stopped reading for 3 s'"
target_alive
echo PASS
