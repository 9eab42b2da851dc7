#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Login budgets of idm-target under a storm of half-open logins
# (login_storm.py): 5,000 connections that send one Login Request, a
# continued one, half a header or nothing, and stall. The target must
# refuse what is over its caps at accept time, keep its resident memory
# under a fixed bound, log in a normal initiator during the storm, close
# the stalled connections at the login timeout and give their memory and
# descriptors back. A second, small target checks each cap on its own:
# per address, in login in total (a normal login is refused while it is
# full, and succeeds after the timeout), and connections in total (full
# feature phase connections are not touched by the login timeout).
# Usage: login_storm.sh IDM_TARGET IDM_INITIATOR [SANITIZE [PART]]
# SANITIZE: meson's b_sanitize; other than "none", the RSS figures are
# the sanitizer's (shadow memory, a quarantine that keeps freed memory)
# and are shown but not checked.
# PART: "storm" (1. the 5,000 half-open logins), "caps" (2. each cap on
# its own) or "all" (default). meson runs them as two tests: the storm
# alone, the caps beside other tests (tests/interop/target/meson.build).
. "$(dirname "$0")/common.sh"
IDM_TARGET=$1
IDM_INITIATOR=$2
SANITIZE=${3:-none}
PART=${4:-all}
case $PART in storm | caps | all) ;; *) die "PART: storm, caps or all, not $PART" ;; esac
STORM="$(dirname "$0")/login_storm.py"
need python3
# 5,000 sockets on the storm's side, the target's cap on its side
ulimit -n 8192 2>/dev/null || skip "cannot raise the open-file limit to 8192 (hard limit $(ulimit -Hn))"

# start_budget_target LOG ARGS...: idm-target on 127.0.0.1 with a small
# RAM LUN (its pages count in RSS once touched); sets PORT, TARGET_PID
# and URL
start_budget_target() {
	IDM_TARGET_STDOUT=/dev/null idm_target_start "$1" 5 --portal 127.0.0.1:0 \
		--target-name "$IQN" --lun ram:4M --log-target stderr "${@:2}"
	PIDS="$PIDS $TGT_PID"
	TARGET_PID=$TGT_PID URL="iscsi://127.0.0.1:$PORT/$IQN/1"
}
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$TARGET_PID/status"; }
fds() { find "/proc/$TARGET_PID/fd" -mindepth 1 -maxdepth 1 | wc -l; }
# normal_login: idm-initiator from 127.0.0.1 logs in and reads INQUIRY
normal_login() {
	timeout 20 "$IDM_INITIATOR" -q --timeout "${NORMAL_TIMEOUT:-5}" --replacement-timeout 0 --no-discovery \
		"$URL" >"$TMP/ini.out" 2>&1
}

# storm_start NAME COUNT SOURCES MODES: login_storm.py in the
# background, its stdin on a fifo; waits for "opened OPEN CLOSED" and
# sets OPENED and CLOSED. STORM_FIRST and STORM_WINDOW pass through.
declare -A STORM_PIDS STORM_FDS
storm_start() {
	local name=$1 i fd
	mkfifo "$TMP/$name.in"
	python3 "$STORM" "$PORT" "$IQN" "$2" "$3" "$4" <"$TMP/$name.in" >"$TMP/$name.out" 2>&1 &
	STORM_PIDS[$name]=$!
	PIDS="$PIDS $!"
	exec {fd}>"$TMP/$name.in"
	STORM_FDS[$name]=$fd
	for ((i = 0; i < 600; i++)); do
		grep -q '^opened' "$TMP/$name.out" && break
		kill -0 "${STORM_PIDS[$name]}" 2>/dev/null || break
		sleep 0.1
	done
	grep -q '^SKIP' "$TMP/$name.out" && skip "$(cat "$TMP/$name.out")"
	grep -q '^opened' "$TMP/$name.out" || { cat "$TMP/$name.out"; die "$name: the storm did not open"; }
	read -r _ OPENED CLOSED < <(grep '^opened' "$TMP/$name.out")
}
# storm_count NAME: sets OPENED and CLOSED from a "count" now
storm_count() {
	local n
	n=$(grep -c '^open ' "$TMP/$1.out")
	echo count >&"${STORM_FDS[$1]}"
	for _ in $(seq 100); do
		[ "$(grep -c '^open ' "$TMP/$1.out")" -gt "$n" ] && break
		sleep 0.1
	done
	read -r _ OPENED _ CLOSED < <(grep '^open ' "$TMP/$1.out" | tail -n 1)
}
# storm_settled NAME OPEN CLOSED: the target refuses over its caps right
# after accepting, and the storm's first count ("opened") may come before
# the last refusal has arrived on a loaded machine: count again until the
# figures are OPEN and CLOSED, for 5 s at most. OPENED and CLOSED hold the
# last count either way, for the caller's assertion.
storm_settled() {
	[ "$OPENED/$CLOSED" = "$2/$3" ] && return 0
	storm_count "$1"
	[ "$OPENED/$CLOSED" = "$2/$3" ]
}
# storm_stop NAME: it closes its connections and exits
storm_stop() {
	local fd=${STORM_FDS[$1]}
	echo quit >&"$fd"
	exec {fd}>&-
	wait "${STORM_PIDS[$1]}" 2>/dev/null
}
# wait_fds N SECS: the target's descriptors back to N within SECS
wait_fds() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ "$(fds)" -le "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
# budget_lines PATTERN: how many of the target's log lines match
budget_lines() { grep -Ec -- "$1" "$TMP/target.log"; }

# ---- 1. 5,000 half-open logins, default caps -------------------------
if [ "$PART" != caps ]; then
TIMEOUT=5
START=$(date +%s)
start_budget_target "$TMP/target.log" --login-timeout "$TIMEOUT"
# shellcheck disable=SC2034 # for target_alive
TGT_LOG=$TMP/target.log
# a first session allocates what every later one reuses: measure after it
normal_login || { cat "$TMP/ini.out"; die "the first normal login failed"; }
RSS0=$(rss) FD0=$(fds)
log "baseline: RSS $RSS0 KiB, $FD0 descriptors"
# the peak, sampled while the storm runs
( while kill -0 "$TARGET_PID" 2>/dev/null; do rss; sleep 0.05; done ) >"$TMP/rss.samples" 2>/dev/null &
SAMPLER=$!
on_exit "kill $SAMPLER"

# 6 initiator addresses x 16 per address (--max-logins-per-address
# default): 96 in login at most, under the 256 of --max-logins, so a
# normal initiator from a seventh address still gets in
storm_start storm 5000 6 login,continue,nothing,partial
HELD=$(( $(fds) - FD0 ))
log "storm open: $OPENED connections held open, $CLOSED closed by the target; target: RSS $(rss) KiB, $HELD descriptors more"
[ "$HELD" -le 96 ] || fail "the target holds $HELD storm connections: more than 6 addresses x 16"
[ "$CLOSED" -ge 4800 ] || fail "only $CLOSED of 5000 storm connections were refused"
if normal_login; then
	log "a normal login during the storm: ok"
else
	cat "$TMP/ini.out"
	fail "a normal login during the storm failed"
fi
if command -v iscsi-inq >/dev/null 2>&1; then
	timeout 10 iscsi-inq "iscsi://127.0.0.1:$PORT/$IQN/1" | grep -q "Vendor:LIBIDM" ||
		fail "libiscsi iscsi-inq during the storm failed"
	log "libiscsi iscsi-inq during the storm: ok"
fi
target_alive
# the login timeout closes the stalled ones: descriptors back to the
# baseline (the storm still holds its end of every socket)
wait_fds "$FD0" $((TIMEOUT + 5)) || fail "$(( $(fds) - FD0 )) descriptors more than the baseline $((TIMEOUT + 5)) s after the storm"
kill "$SAMPLER" 2>/dev/null
PEAK=$(sort -n "$TMP/rss.samples" | tail -n 1)
# the freed heap goes back after a quiet second: allow 3
for _ in $(seq 30); do
	[ "$(rss)" -le $((RSS0 + 1024)) ] && break
	sleep 0.1
done
RSS2=$(rss)
log "after the login timeout: RSS $RSS2 KiB, $(fds) descriptors"
storm_stop storm
log "RSS: baseline $RSS0 KiB, peak during the storm $PEAK KiB, after $RSS2 KiB"
# 96 connections in login at 64 KiB each (the TCP provider's buffers and
# the target's login state take about 37 KiB) and 2 MiB for the rest: a
# target that kept 64 KiB of login text per connection, or one without
# the per-address cap, is well above
BOUND=$((RSS0 + 96 * 64 + 2048))
if [ "$SANITIZE" != none ]; then
	log "built with -Db_sanitize=$SANITIZE: RSS not checked (bound $BOUND KiB)"
else
	[ "$PEAK" -le "$BOUND" ] || fail "peak RSS $PEAK KiB above the bound $BOUND KiB"
	[ "$RSS2" -le $((RSS0 + 1024)) ] ||
		fail "RSS $RSS2 KiB after the storm: not back to the baseline $RSS0 KiB + 1 MiB"
fi
# one line per limit and second, not one per connection
N=$(budget_lines 'cap$|--login-timeout\)$')
SECS=$(( $(date +%s) - START + 1 ))
[ "$(budget_lines 'the --max-logins-per-address cap$')" -ge 1 ] || fail "no line for the per-address cap"
[ "$(budget_lines 'closed [0-9]+ connection\(s\).*--login-timeout')" -ge 1 ] || fail "no line for the login timeout"
[ "$N" -le $((2 * SECS)) ] || fail "$N budget lines in $SECS s: not rate-limited"
log "budget lines in the log: $N in $SECS s"
stop_pid "$TARGET_PID"
fi
[ "$PART" != storm ] || { echo PASS; exit 0; }

# ---- 2. each cap on its own, small caps ------------------------------
# The login timeout must outlast starting both storms, counting their
# refusals and the refused normal login, or storm a's connections leave
# login early and the normal login gets in (CI runs this beside two
# emulated guests and the fuzzers: on 2026-12-07 the storm of part 1
# took 20 s there against 7 s on a quiet machine, and 10 s were not
# enough for this part). 20 s; the sleep below waits it out once more.
TIMEOUT=20
start_budget_target "$TMP/target2.log" --login-timeout "$TIMEOUT" --max-connections 12 \
	--max-logins 6 --max-logins-per-address 4
# shellcheck disable=SC2034 # for target_alive
TGT_LOG=$TMP/target2.log
FD0=$(fds)
# per address: 4 of 10 from one address
STORM_FIRST=10 storm_start a 10 1 login
wait_until 5 storm_settled a 4 6 || true
[ "$OPENED/$CLOSED" = 4/6 ] || fail "one address: $OPENED held, $CLOSED refused; want 4 and 6"
grep -q 'the --max-logins-per-address cap' "$TMP/target2.log" || fail "no line for the per-address cap"
# in login in total: 2 more of 10 from 5 other addresses
STORM_FIRST=20 storm_start b 10 5 login
wait_until 5 storm_settled b 2 8 || true
[ "$OPENED/$CLOSED" = 2/8 ] || fail "in login: $OPENED held, $CLOSED refused; want 2 and 8"
grep -q 'the --max-logins cap' "$TMP/target2.log" || fail "no line for the --max-logins cap"
! NORMAL_TIMEOUT=2 normal_login || fail "a normal login got in while --max-logins was full"
log "caps per address and in login: 4 + 2 held, a normal login refused while full"
wait_fds "$FD0" $((TIMEOUT + 3)) || fail "login timeout: $(( $(fds) - FD0 )) descriptors left"
normal_login || { cat "$TMP/ini.out"; fail "a normal login after the login timeout failed"; }
storm_stop a
storm_stop b
# in total: 12 of 14 complete logins, opened one after the other
STORM_WINDOW=1 STORM_FIRST=30 storm_start c 14 3 ffp
wait_until 5 storm_settled c 12 2 || true
[ "$OPENED/$CLOSED" = 12/2 ] || fail "in total: $OPENED held, $CLOSED refused; want 12 and 2"
grep -q 'the --max-connections cap' "$TMP/target2.log" || fail "no line for the --max-connections cap"
sleep $((TIMEOUT + 1))
storm_count c
[ "$OPENED" = 12 ] || fail "the login timeout closed sessions in full feature phase ($OPENED of 12 left)"
log "connections in total: 12 held, 2 refused, sessions outlive the login timeout"
storm_stop c
target_alive
echo PASS
