#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Backpressure (issue #12): one connection floods idm-target with up to
# 10,000,000 NOP-Outs, each asking for a NOP-In, and never reads
# (nop_flood.py). The target must stop reading that connection once its
# send queue is full instead of queueing the answers without limit: its
# resident memory stays under baseline + 32 MiB, and a second connection
# (idm-initiator) writes, reads back and verifies data meanwhile and
# after. Before the bound, 10 million pings took the target from 2.3 MB
# to 2.26 GB.
# Usage: nop_flood.sh IDM_TARGET IDM_INITIATOR [SANITIZE]
# SANITIZE: meson's b_sanitize; other than "none", RSS is the
# sanitizer's (shadow memory, quarantine) and is shown but not checked.
. "$(dirname "$0")/common.sh"
IDM_TARGET=$1
IDM_INITIATOR=$2
SANITIZE=${3:-none}
FLOOD="$(dirname "$0")/nop_flood.py"
need python3
COUNT=10000000
BUDGET=${NOP_FLOOD_SECONDS:-20}
BOUND_KIB=$((32 * 1024))

IDM_TARGET_STDOUT=/dev/null idm_target_start "$TMP/target.log" 5 --portal 127.0.0.1:0 \
	--target-name "$IQN" --lun ram:4M --log-target stderr
TARGET_PID=$TGT_PID
# shellcheck disable=SC2034 # for target_alive
TGT_LOG=$TMP/target.log
URL="iscsi://127.0.0.1:$PORT/$IQN/1"
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$TARGET_PID/status"; }
verify() {
	timeout 60 "$IDM_INITIATOR" -q --timeout 20 --replacement-timeout 0 --no-discovery \
		--verify 4M "$URL" >"$TMP/ini.$1.out" 2>&1
}

# a first session allocates what later ones reuse: measure after it
verify first || { cat "$TMP/ini.first.out"; die "the first verified session failed"; }
RSS0=$(rss)
log "baseline: RSS $RSS0 KiB"
( while kill -0 "$TARGET_PID" 2>/dev/null; do rss; sleep 0.05; done ) >"$TMP/rss.samples" 2>/dev/null &
SAMPLER=$!
on_exit "kill $SAMPLER 2>/dev/null"

mkfifo "$TMP/flood.in"
python3 "$FLOOD" "$PORT" "$IQN" "$COUNT" "$BUDGET" <"$TMP/flood.in" >"$TMP/flood.out" 2>&1 &
FLOOD_PID=$!
PIDS="$PIDS $FLOOD_PID"
exec {FLOOD_FD}>"$TMP/flood.in"

# the other connection, while the flood runs (once it logged in)
flood_started() { grep -q '^flooding' "$TMP/flood.out" || ! kill -0 "$FLOOD_PID" 2>/dev/null; }
wait_until 30 flood_started
grep -q '^flooding' "$TMP/flood.out" || { cat "$TMP/flood.out"; die "the flood did not log in"; }
verify during || { cat "$TMP/ini.during.out"; fail "verified I/O during the flood failed"; }
log "verified I/O on a second connection during the flood: ok"
for _ in $(seq $(((BUDGET + 10) * 10))); do
	grep -q '^sent' "$TMP/flood.out" && break
	kill -0 "$FLOOD_PID" 2>/dev/null || break
	sleep 0.1
done
grep -q '^sent' "$TMP/flood.out" || { cat "$TMP/flood.out"; die "the flood did not report"; }
log "flood: $(grep '^sent' "$TMP/flood.out")"
target_alive
# the flooding connection is still open and unread: the target holds it
verify after || { cat "$TMP/ini.after.out"; fail "verified I/O after the flood failed"; }
log "verified I/O on a second connection after the flood: ok"
kill "$SAMPLER" 2>/dev/null
PEAK=$(sort -n "$TMP/rss.samples" | tail -n 1)
echo quit >&"$FLOOD_FD"
exec {FLOOD_FD}>&-
wait "$FLOOD_PID" 2>/dev/null
log "RSS: baseline $RSS0 KiB, peak during the flood $PEAK KiB (bound: +$BOUND_KIB KiB)"
if [ "$SANITIZE" != none ]; then
	log "built with -Db_sanitize=$SANITIZE: RSS not checked"
else
	[ "$PEAK" -le $((RSS0 + BOUND_KIB)) ] ||
		fail "peak RSS $PEAK KiB above baseline $RSS0 KiB + $BOUND_KIB KiB"
fi
target_alive
echo PASS
