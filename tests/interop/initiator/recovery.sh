#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-initiator's failure detection and session recovery on 127.0.0.1,
# with no wire to cut: idm-target behind cut_proxy.py, a relay that resets
# the path or stops relaying ("cut") once a number of bytes went through,
# and hostile_target.py for targets that stop answering. Checks:
#   - a reset and a cut during --verify, and a cut during --bench, end with
#     the session recovered (same ISID: idm-target reinstates the session
#     and ends the old one), the data verified and no I/O error;
#   - the cause on the last line: connection reset, dead peer (NOP-Out
#     timeout), command timeout (--bench and single commands), recovery
#     given up (replacement timeout), login refused;
#   - a normal Logout is logged as such.
# Usage: recovery.sh PATH/TO/idm-initiator PATH/TO/idm-target
IDM_TEST_NAME=idm-ini-recovery
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
INI=${1:?usage: $0 idm-initiator idm-target}
TGT=${2:?usage: $0 idm-initiator idm-target}
[ -x "$TGT" ] || fail "$TGT is not built"
command -v python3 >/dev/null || skip "python3 not installed (it plays the relay)"
HERE=$(dirname "$0")
IQN=iqn.2026-11.org.libidm:ini-recovery
bad=0

log "starting idm-target on 127.0.0.1"
start_target 127.0.0.1:0 10 --target-name "$IQN" --lun ram:64M -v
wait_port "$PORT" 5 || { tail -n 20 "$TMP/target.log"; fail "idm-target does not listen"; }

# start_proxy MODE: a fresh relay to idm-target; sets PPORT and PROXY_PID
start_proxy() {
	rm -f "$TMP/pport"
	python3 "$HERE/cut_proxy.py" "$1" "$PORT" "$TMP/pport" "$TMP/proxy.log" &
	PROXY_PID=$!
	CLEANUP_CMDS+=("stop_pid $PROXY_PID")
	for ((i = 0; i < 50; i++)); do
		[ -s "$TMP/pport" ] && break
		sleep 0.1
	done
	PPORT=$(cat "$TMP/pport" 2>/dev/null)
	[ -n "$PPORT" ] || fail "cut_proxy.py did not start"
}

# case NAME WANT_RC 'REGEX...' -- ARGS: run the initiator (stderr to
# $TMP/err.txt); every REGEX must match its stdout+stderr, a leading '!'
# means must not match.
case_run() {
	local name=$1 want=$2 rc re start=$SECONDS
	shift 2
	local res=()
	while [ "$1" != "--" ]; do res+=("$1"); shift; done
	shift
	timeout -k 5 90 "$INI" -q --no-discovery "$@" >"$TMP/out.txt" 2>"$TMP/err.txt"
	rc=$?
	cat "$TMP/out.txt" "$TMP/err.txt" >"$TMP/all.txt"
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL $name: exit status $rc (want $want)"
		tail -n 20 "$TMP/all.txt"
		bad=$((bad + 1))
		return 1
	fi
	for re in "${res[@]}"; do
		if [ "${re:0:1}" = "!" ]; then
			if grep -Eq -- "${re:1}" "$TMP/all.txt"; then
				echo "FAIL $name: output has '${re:1}'"
				tail -n 20 "$TMP/all.txt"
				bad=$((bad + 1))
				return 1
			fi
		elif ! grep -Eq -- "$re" "$TMP/all.txt"; then
			echo "FAIL $name: output lacks '$re'"
			tail -n 20 "$TMP/all.txt"
			bad=$((bad + 1))
			return 1
		fi
	done
	echo "ok   $name ($((SECONDS - start)) s)"
	grep -E "connection lost|recovered in|failed:|verify:" "$TMP/err.txt" "$TMP/out.txt" -h |
		cut -c1-220 | sed 's/^/       /'
}

# the target must have ended the session it reinstated
check_reinstated() {
	if ! grep -q "closing connection: session reinstated" "$TMP/target.log" &&
		! grep -q "connection ended" "$TMP/target.log"; then
		echo "FAIL $1: idm-target did not close the old connection"
		bad=$((bad + 1))
	fi
	local opened ended
	opened=$(grep -c "normal session tsih" "$TMP/target.log")
	ended=$(grep -c "session tsih .* ended" "$TMP/target.log")
	if [ "$opened" -ne "$ended" ]; then
		echo "FAIL $1: idm-target opened $opened sessions, ended $ended"
		tail -n 20 "$TMP/target.log"
		bad=$((bad + 1))
	fi
}
NOP=(--noop-out-interval 1 --noop-out-timeout 2)
URL() { echo "iscsi://127.0.0.1:$PPORT/$IQN/1"; }

log "logout: logged as such"
start_proxy cut:999999999999:1
case_run logout 0 "logged out \(Logout Response\)" "!peer disconnected" \
	"!Connection reset" "!connection lost" -- -v "$(URL)"
stop_pid "$PROXY_PID"

log "reset during --verify: recovered, data verified"
start_proxy reset:20000000
case_run verify-reset 0 "connection lost: connection reset" "recovered in" \
	"verify: .*: OK" "!error" -- --verify 48M "$(URL)"
stop_pid "$PROXY_PID"
check_reinstated verify-reset

log "cut during --verify: NOP-Out timeout, recovered, data verified"
start_proxy cut:20000000:4
case_run verify-cut 0 "dead peer: NOP-Out ping not answered within 2 s" \
	"recovered in" "verify: .*: OK" "!error" -- "${NOP[@]}" --verify 48M "$(URL)"
stop_pid "$PROXY_PID"
check_reinstated verify-cut

log "cut during --bench: recovered, no I/O error"
start_proxy cut:8000000:4
case_run bench-cut 0 "dead peer: NOP-Out" "recovered in" "!error" -- \
	"${NOP[@]}" --bench --duration 8 --read-pct 50 "$(URL)"
stop_pid "$PROXY_PID"
check_reinstated bench-cut

log "reset without recovery (--replacement-timeout 0): the cause on the last line"
start_proxy reset:20000000
case_run no-recovery 1 "failed: connection lost: connection reset" -- \
	--replacement-timeout 0 --verify 48M "$(URL)"
stop_pid "$PROXY_PID"

log "a cut longer than --replacement-timeout: recovery given up"
start_proxy cut:20000000:60
case_run give-up 1 "failed: session recovery failed: no new session within the replacement timeout \(3 s\)" \
	-- "${NOP[@]}" -t 2 --replacement-timeout 3 --verify 48M "$(URL)"
stop_pid "$PROXY_PID"

log "--bench with pings off: the per-command timeout"
start_proxy cut:8000000:60
case_run bench-timeout 1 "failed: command timeout: (READ|WRITE)\(10\) .* not answered within 2 s" -- \
	--noop-out-interval 0 -t 2 --bench --duration 10 --read-pct 50 "$(URL)"
stop_pid "$PROXY_PID"

# hostile_target.py SCENARIO: sets HPORT and HOSTILE_PID
start_hostile() {
	rm -f "$TMP/hport"
	python3 "$HERE/hostile_target.py" "$1" "$TMP/hport" &
	HOSTILE_PID=$!
	CLEANUP_CMDS+=("stop_pid $HOSTILE_PID")
	for ((i = 0; i < 50; i++)); do
		[ -s "$TMP/hport" ] && break
		sleep 0.1
	done
	HPORT=$(cat "$TMP/hport" 2>/dev/null)
	[ -n "$HPORT" ] || fail "hostile_target.py did not start"
}
HURL() { echo "iscsi://127.0.0.1:$HPORT/iqn.2026-11.org.libidm:hostile/1"; }

log "a target that stops answering: command timeout (single command)"
start_hostile ffp-silent
case_run cmd-timeout 1 "failed: command timeout: REPORT LUNS .* not answered within 2 s" -- \
	--noop-out-interval 0 -t 2 "$(HURL)"
stop_pid "$HOSTILE_PID"

log "a target that stops answering: dead peer by NOP-Out timeout"
start_hostile ffp-silent
case_run nop-timeout 1 "dead peer: NOP-Out ping not answered within 1 s" \
	"failed: session recovery failed" -- \
	--noop-out-interval 1 --noop-out-timeout 1 -t 30 --replacement-timeout 2 "$(HURL)"
stop_pid "$HOSTILE_PID"

log "Asynchronous Message (the target drops the connection): the cause"
start_hostile ffp-async-drop
case_run async-drop 1 "connection lost: target dropped the connection \(Asynchronous Message event 2\)" -- \
	-t 30 --replacement-timeout 1 "$(HURL)"
stop_pid "$HOSTILE_PID"

log "Asynchronous Message (the target requests a logout): the cause"
start_hostile ffp-async-logout
case_run async-logout 1 "failed: session recovery failed: .* after connection lost: target requested a logout within 0 s" -- \
	-t 30 --replacement-timeout 1 "$(HURL)"
stop_pid "$HOSTILE_PID"

log "login refused: the cause on the last line"
start_hostile login-refused
case_run login-refused 1 "failed: login refused" -- "$(HURL)"
stop_pid "$HOSTILE_PID"

kill -0 "$TGT_PID" 2>/dev/null || { tail -n 20 "$TMP/target.log"; fail "idm-target died"; }
[ $bad -eq 0 ] || fail "$bad case(s)"
log "PASS"
