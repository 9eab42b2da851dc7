#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A slow reader is not a dead peer (issue #20, item 5). A client with a
# 4 KiB receive buffer sends NOP-Out pings as fast as idm-target takes
# them and reads the answers at 20 PDUs a second, acknowledging all
# along, for 60 s (slow_peer.py slow); then it reads the rest at full
# speed. It must keep its connection and get every answer, in order,
# with the provider's default dead-peer knobs. Before the fix the
# kernel's TCP_USER_TIMEOUT (15 s) reset it after about 20 s: Linux counts
# the user timeout from the first retransmission into the peer's zero
# window, however much the peer acknowledged since.
# Usage: slow_reader.sh IDM_TARGET
# IDM_SLOW_READER_SECONDS: length of the slow phase (default 60, the
# issue's; a shorter one for a quick run).
. "$(dirname "$0")/common.sh"
IDM_TARGET=$1
PEER="$(dirname "$0")/slow_peer.py"
need python3
SECS=${IDM_SLOW_READER_SECONDS:-60}
RATE=20
RCVBUF=4096
CAP=20000

# the provider's defaults, whatever the caller's environment says
unset IDM_TCP_USER_TIMEOUT_MS IDM_TCP_ZERO_WINDOW_TIMEOUT_MS
start_target "$TMP/target.log"
# shellcheck disable=SC2034 # for target_alive
TGT_LOG=$TMP/target.log
# shellcheck disable=SC2016 # expanded when a check fails
FAIL_DIAG='echo "--- idm-target log:"; tail -n 20 "$TMP/target.log"'
log "slow reader: ${SECS} s at $RATE PDUs/s, SO_RCVBUF $RCVBUF, up to $CAP pings unanswered"
run_bounded $((SECS + 150)) "$TMP/peer.out" python3 "$PEER" slow 127.0.0.1 "$PORT" "$IQN" \
	"$SECS" "$RATE" "$RCVBUF" "$CAP" ||
	fail "the slow reader lost its connection or an answer"
grep -q '^slow reader: [0-9]* pings, [0-9]* answers in order, alive after' "$TMP/peer.out" ||
	fail "the slow reader did not report"
target_alive
if grep -E 'no acknowledgement|stopped reading|dead peer|timed out' "$TMP/target.log"; then
	fail "idm-target called the slow reader dead"
fi
log "target log: no dead-peer verdict"
echo PASS
