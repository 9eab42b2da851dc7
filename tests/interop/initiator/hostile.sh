#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-initiator against a deliberately broken target (hostile_target.py):
# every malformed answer must fail the connection with a reason, exit 1
# in bounded time, and never crash (run it in the ASan build too).
# Usage: hostile.sh PATH/TO/idm-initiator
IDM_TEST_NAME=idm-ini-hostile
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
INI=${1:?usage: $0 idm-initiator}
command -v python3 >/dev/null || skip "python3 not installed (it plays the broken target)"
HOSTILE="$(dirname "$0")/hostile_target.py"

# scenario  |  text the initiator's stderr must contain
CASES=(
	"login-bad-itt|Login Response for ITT"
	"login-refused|target not found"
	"login-bad-stage|bad Login Response stages"
	"login-garbage-text|malformed login text"
	"login-endless-continue|login does not converge|login text over"
	"login-bad-answer|target answered MaxBurstLength=99999999"
	"ffp-unknown-itt|for unknown ITT"
	"ffp-sense-overflow|SenseLength 200 beyond"
	"ffp-bad-opcode|unexpected opcode 0x3a"
	"ffp-reject-cmd|target rejected opcode 0x01 ITT 0x[0-9a-f]+, reason 0x05"
	"ffp-datain-overflow|connection lost"
	"ffp-huge-dsl|connection lost"
	"ffp-close|connection lost"
	"ffp-silent|command timeout: REPORT LUNS .* not answered within 2 s"
)
INI_TIMEOUT=20
bad=0
for c in "${CASES[@]}"; do
	sc=${c%%|*}
	want=${c#*|}
	peer_start "$sc" python3 "$HOSTILE" "$sc" "$TMP/port"
	start=$SECONDS
	# a lost connection is retried for --replacement-timeout: this
	# target accepts one connection only, so keep that short
	timeout -k 2 "$INI_TIMEOUT" "$INI" -t 2 --replacement-timeout 2 \
		--no-discovery \
		"iscsi://127.0.0.1:$PEER_PORT/iqn.2026-11.org.libidm:hostile/1" \
		>"$TMP/out.txt" 2>"$TMP/err.txt"
	rc=$?
	stop_pid "$PEER_PID"
	expect_refused "$sc ($((SECONDS - start)) s)" "$rc" "$want" || bad=$((bad + 1))
done
[ $bad -eq 0 ] || fail "$bad scenario(s)"
log "PASS"
