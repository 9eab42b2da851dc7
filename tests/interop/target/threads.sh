#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-target --threads 2 under load: 16 bench sessions reading, two verified write-and-read-back runs, and session and
# connection reinstatements (reinstate.py) whose connections land on
# either loop and must finish on the loop owning their session, with the
# data of every round read back. The SIGUSR1 dump must show connections
# on both loops; the target must stop cleanly on SIGTERM (exit 0; under
# ThreadSanitizer any report fails it). Also: what --threads refuses,
# and initiator ACLs reloaded by SIGHUP with sessions on both loops.
# iSER with --threads: tests/iser-interop/kernel_initiator_threads.sh.
# Every LUN is written by one session at a time: writes from sessions on
# two loops to one RAM LUN race like writes from two hosts to one disk,
# which ThreadSanitizer would rightly report (the bench only reads).
# Usage: threads.sh IDM_TARGET IDM_INITIATOR
. "$(dirname "$0")/common.sh"
IDM_TARGET=$1
IDM_INITIATOR=$2
REINSTATE="$(dirname "$0")/reinstate.py"
need python3
I=("$IDM_INITIATOR" --no-discovery -q)

# --- refusals (exit 2, a reason)
expect "--threads 0 refused" "threads='0': must be a number from 1 to 64" \
	"$IDM_TARGET" --threads 0 --lun ram:1M --portal 127.0.0.1:0
expect "--threads 2 with a provider other than tcp and iser refused" \
	"--threads 2: serves tcp and iser only" \
	"$IDM_TARGET" --threads 2 -P nosuch --lun ram:1M --portal 127.0.0.1:0

# --- two loops under load
IDM_TARGET_STDOUT=/dev/null idm_target_start "$TMP/target.log" 5 --portal 127.0.0.1:0 \
	--target-name "$IQN" --threads 2 --block-size 4096 -v \
	--lun ram:64M --lun ram:16M --lun ram:16M --lun ram:1M
TARGET_PID=$TGT_PID
URL="iscsi://127.0.0.1:$PORT/$IQN"

timeout 60 "${I[@]}" --bench --sessions 16 --qd 8 --read-pct 100 --duration 6 \
	"$URL/1" >"$TMP/bench.out" 2>&1 &
bench=$!
timeout 60 "${I[@]}" --verify 8M "$URL/2" >"$TMP/verify2.out" 2>&1 &
v2=$!
timeout 60 "${I[@]}" --verify 8M "$URL/3" >"$TMP/verify3.out" 2>&1 &
v3=$!
timeout 60 python3 "$REINSTATE" "$PORT" "$IQN" 4 16 >"$TMP/reinstate.out" 2>&1 &
re=$!
# the dump once the bench's 16 sessions are in (each runs its 6 s from
# then): at least 16 sessions logged in and not ended
live() { echo $(( $(grep -c "normal session tsih" "$TMP/target.log") - $(grep -c "session tsih .* ended" "$TMP/target.log") )); }
live_16() { [ "$(live)" -ge 16 ]; }
dumped() { [ "$(grep -c "stats loop" "$TMP/target.log")" -gt "$1" ]; }
wait_until 30 live_16 || echo "note: $(live) live sessions at the dump"
ndump=$(grep -c "stats loop" "$TMP/target.log")
kill -USR1 "$TARGET_PID"
wait_until 30 dumped "$ndump"
for what in bench:$bench verify2:$v2 verify3:$v3 reinstate:$re; do
	if wait "${what#*:}"; then
		echo "ok: ${what%%:*}"
	else
		echo "FAIL: ${what%%:*} exited $?"
		fails=$((fails + 1))
	fi
done
for f in bench verify2 verify3 reinstate; do
	sed "s/^/    $f: /" "$TMP/$f.out" | tail -n 3
done
grep -Eq "verify: .*: OK" "$TMP/verify2.out" || { echo "FAIL: verify of LUN 2"; fails=$((fails + 1)); }
grep -Eq "verify: .*: OK" "$TMP/verify3.out" || { echo "FAIL: verify of LUN 3"; fails=$((fails + 1)); }

# the dump: "stats loop N PEER ..." per connection, loops in order
target_alive
peers() { grep -o "stats loop $1 [^ ]* tcp full-feature" "$TMP/target.log" | sort -u | wc -l; }
n0=$(peers 0)
n1=$(peers 1)
echo "SIGUSR1: $n0 connection(s) on loop 0, $n1 on loop 1"
if [ "$n0" -lt 1 ] || [ "$n1" -lt 1 ]; then
	echo "FAIL: connections not spread over both loops"
	fails=$((fails + 1))
fi
if ! grep -q "stats: loop 0: .*stats: loop 1: " <(tr '\n' ' ' <"$TMP/target.log"); then
	echo "FAIL: the loops' dumps are not in loop order"
	fails=$((fails + 1))
fi
moved=$(grep -c "login continues on loop" "$TMP/target.log")
echo "logins finished on the session's loop after a move: $moved"
# 16 rounds, each landing on either loop: all on the owner's is 2^-15
if [ "$moved" -lt 1 ]; then
	echo "FAIL: no reinstatement crossed loops"
	fails=$((fails + 1))
fi

kill "$TARGET_PID"
wait "$TARGET_PID"
rc=$?
if [ "$rc" -ne 0 ] || grep -q "ThreadSanitizer\|AddressSanitizer" "$TMP/target.log"; then
	echo "FAIL: idm-target exited $rc"
	grep -A20 "Sanitizer" "$TMP/target.log" | head -n 60
	fails=$((fails + 1))
fi

# --- initiator ACLs reloaded with two loops: SIGHUP takes host1's rule
# away while 8 sessions of each initiator run; each loop asks its own
# sessions of host1 to log out (every one of the 8), host2's go on
H1=iqn.1994-05.com.example:host1
H2=iqn.1994-05.com.example:host2
printf 'acl = %s 127.0.0.1\nacl = %s 127.0.0.1\n' "$H1" "$H2" >"$TMP/acl.conf"
IDM_TARGET_STDOUT=/dev/null idm_target_start "$TMP/acl.log" 5 --portal 127.0.0.1:0 \
	--target-name "$IQN" --threads 2 -v --lun ram:16M --lun ram:16M -c "$TMP/acl.conf"
TARGET_PID=$TGT_PID
URL="iscsi://127.0.0.1:$PORT/$IQN"
timeout 60 "${I[@]}" -n "$H1" --replacement-timeout 0 --bench --sessions 8 --qd 2 \
	--duration 30 "$URL/1" >"$TMP/acl1.out" 2>&1 &
b1=$!
timeout 60 "${I[@]}" -n "$H2" --replacement-timeout 0 --bench --sessions 8 --qd 2 \
	--duration 8 "$URL/2" >"$TMP/acl2.out" 2>&1 &
b2=$!
# each bench: a session for its checks, then its 8
acl_sessions_18() { [ "$(grep -c "normal session" "$TMP/acl.log")" -ge 18 ]; }
wait_until 30 acl_sessions_18
printf 'acl = %s 127.0.0.1\n' "$H2" >"$TMP/acl.conf"
kill -HUP "$TARGET_PID"
wait "$b1"
rc1=$?
wait "$b2"
rc2=$?
lost=$(grep -c "lost access, logout requested" "$TMP/acl.log")
echo "ACL reload: $lost session(s) of host1 asked to log out; host1's bench exit $rc1, host2's $rc2"
if [ "$lost" -ne 8 ] || [ "$rc1" -ne 1 ] || [ "$rc2" -ne 0 ] ||
	! grep -q "target requested a logout" "$TMP/acl1.out"; then
	echo "FAIL: ACL reload with two loops"
	tail -n 5 "$TMP/acl1.out" "$TMP/acl2.out"
	fails=$((fails + 1))
fi
kill "$TARGET_PID"
wait "$TARGET_PID"
rc=$?
if [ "$rc" -ne 0 ] || grep -q "ThreadSanitizer\|AddressSanitizer" "$TMP/acl.log"; then
	echo "FAIL: idm-target (ACLs) exited $rc"
	grep -A20 "Sanitizer" "$TMP/acl.log" | head -n 60
	fails=$((fails + 1))
fi
if [ "$fails" -ne 0 ]; then
	echo "--- idm-target log (end):"
	tail -n 30 "$TMP/target.log"
	die "$fails check(s) failed"
fi
echo "all checks passed"
