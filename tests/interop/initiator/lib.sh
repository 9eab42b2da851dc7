# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Shared by the idm-initiator interop tests: temp dir, cleanup, free
# loopback ports, bounded waits. Source it; set IDM_TEST_NAME first.

set -u
TMP=$(mktemp -d "/tmp/${IDM_TEST_NAME:-idm-ini}.XXXXXX")
CLEANUP_CMDS=()
cleanup() {
	local i
	for ((i = ${#CLEANUP_CMDS[@]} - 1; i >= 0; i--)); do
		eval "${CLEANUP_CMDS[i]}" >/dev/null 2>&1 || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 1' INT TERM

log() { echo "== $*"; }
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

# Is something listening on 127.0.0.1:$1?
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A loopback port nobody listens on (the peer is started right after).
free_port() {
	local p i
	for ((i = 0; i < 200; i++)); do
		p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		port_open "$p" || { echo "$p"; return 0; }
	done
	return 1
}

# Wait up to $2 seconds (default 10) for 127.0.0.1:$1 to accept.
wait_port() {
	local i n=$(( ${2:-10} * 10 ))
	for ((i = 0; i < n; i++)); do
		port_open "$1" && return 0
		sleep 0.1
	done
	return 1
}

# Stop a process we started: TERM, then KILL after 3 s.
stop_pid() {
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 30; i++)); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# start_target PORTAL WAIT_S [idm-target args...]: start $TGT on PORTAL
# (port 0: it picks one), its log in $TMP/target.log; sets TGT_PID and
# PORT (from --port-file), or fails with the log's tail after WAIT_S s.
start_target() {
	local portal=$1 wait_s=$2 i
	shift 2
	"$TGT" --portal "$portal" --port-file "$TMP/port" "$@" >"$TMP/target.log" 2>&1 &
	TGT_PID=$!
	CLEANUP_CMDS+=("stop_pid $TGT_PID")
	for ((i = 0; i < wait_s * 10; i++)); do
		[ -s "$TMP/port" ] && break
		kill -0 "$TGT_PID" 2>/dev/null || break
		sleep 0.1
	done
	PORT=$(cat "$TMP/port" 2>/dev/null)
	[ -n "$PORT" ] || { tail -n 20 "$TMP/target.log"; fail "idm-target did not start on $portal"; }
}

# Run the initiator with a time bound; output to $TMP/out.txt and stdout.
run_ini() {
	local rc
	timeout -k 5 "${INI_TIMEOUT:-60}" "$INI" "$@" >"$TMP/out.txt" 2>"$TMP/err.txt"
	rc=$?
	cat "$TMP/out.txt"
	if [ $rc -ne 0 ]; then
		echo "--- idm-initiator $* exited $rc; stderr:"
		tail -n 30 "$TMP/err.txt"
	fi
	return $rc
}

expect_out() { grep -q -- "$1" "$TMP/out.txt" || fail "output lacks '$1'"; }
