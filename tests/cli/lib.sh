# SPDX-License-Identifier: BSD-2-Clause
# Shared helpers of the command-line tests (sourced, not run): a private
# temp dir, peers killed on exit, every step bounded by timeout(1).
set -u

# shellcheck source-path=SCRIPTDIR source=../lib/procs.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/procs.sh"

TMP=$(mktemp -d /tmp/idm-cli-test.XXXXXX)
PIDS=""
FAILS=0

cleanup() {
	# shellcheck disable=SC2086 # one PID per word
	stop_pids $PIDS
	# never follow a mount (the syslog check binds /dev in a namespace
	# of its own; should it ever leak out, leave it alone)
	if grep -q " $TMP/" /proc/self/mountinfo 2>/dev/null; then
		echo "warning: mounts under $TMP: not removed"
	else
		rm -rf --one-file-system "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "FAIL: $*"
	FAILS=$((FAILS + 1))
}

# expect_run NAME WANT_RC PATTERN CMD...: CMD exits WANT_RC and its
# stdout+stderr matches the extended regex PATTERN.
expect_run() {
	local name=$1 want=$2 pat=$3 rc
	shift 3
	timeout 20 "$@" >"$TMP/out" 2>&1
	rc=$?
	if [ "$rc" != "$want" ]; then
		fail "$name: exit $rc, want $want"
		sed 's/^/    /' "$TMP/out"
	elif ! grep -Eq -- "$pat" "$TMP/out"; then
		fail "$name: output does not match /$pat/"
		sed 's/^/    /' "$TMP/out"
	else
		echo "ok: $name: $(grep -E -m1 -- "$pat" "$TMP/out")"
	fi
}

# start_target LOG ARGS...: idm-target on 127.0.0.1 with a free port;
# sets PORT and TARGET_PID. The caller gives the LUNs (or a config).
start_target() {
	local log=$1
	shift
	rm -f "$TMP/port"
	"$IDM_TARGET" --port-file "$TMP/port" --log-target stderr "$@" >/dev/null 2>"$log" &
	TARGET_PID=$!
	PIDS="$PIDS $TARGET_PID"
	for _ in $(seq 100); do
		[ -s "$TMP/port" ] && break
		kill -0 "$TARGET_PID" 2>/dev/null || break
		sleep 0.1
	done
	[ -s "$TMP/port" ] || { echo "idm-target did not start:"; cat "$log"; exit 1; }
	PORT=$(cat "$TMP/port")
}

stop_target() {
	kill "$TARGET_PID" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$TARGET_PID" 2>/dev/null || break
		sleep 0.1
	done
	wait "$TARGET_PID"
}

finish() {
	if [ "$FAILS" -ne 0 ]; then
		echo "$FAILS check(s) failed"
		exit 1
	fi
	echo "all checks passed"
	exit 0
}
