# SPDX-License-Identifier: BSD-2-Clause
# Shared helpers of the idm-target interop tests (sourced, not run).
# Every test: one private temp dir, processes it started killed on exit,
# every step that could hang bounded by `timeout` (meson adds its own).

set -u

# shellcheck source-path=SCRIPTDIR source=../../lib/procs.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/procs.sh"

IQN=iqn.2026-11.org.libidm:interop
TMP=$(mktemp -d /tmp/idm-target-test.XXXXXX)
PIDS=""

cleanup() {
	# tgtd ignores SIGTERM while targets exist: ask it to exit first
	if [ -n "${TGT_IPC_SOCKET:-}" ]; then
		timeout 5 tgtadm --op delete --force --mode target --tid 1 >/dev/null 2>&1
		timeout 5 tgtadm --op delete --mode system >/dev/null 2>&1
	fi
	# shellcheck disable=SC2086 # one PID per word
	stop_pids $PIDS
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

need() {
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || skip "$t not installed (Debian package libiscsi-bin)"
	done
}

# start_target LOG EXTRA_ARGS...: idm-target on 127.0.0.1, free port,
# RAM LUN 1; sets PORT and URL.
start_target() {
	local log=$1
	shift
	rm -f "$TMP/port"
	"$IDM_TARGET" --portal 127.0.0.1:0 --port-file "$TMP/port" \
		--target-name "$IQN" --lun ram:100M -v "$@" >/dev/null 2>"$log" &
	TARGET_PID=$!
	PIDS="$PIDS $TARGET_PID"
	for _ in $(seq 50); do
		[ -s "$TMP/port" ] && break
		sleep 0.1
	done
	[ -s "$TMP/port" ] || { echo "idm-target did not start:"; cat "$log"; exit 1; }
	PORT=$(cat "$TMP/port")
	URL="iscsi://127.0.0.1:$PORT/$IQN/1"
	echo "idm-target listening on 127.0.0.1:$PORT"
}

# free_port: a TCP port nobody listens on right now.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_tgt: tgtd with a private IPC socket on 127.0.0.1:free port,
# 100 MiB file LUN 1 (anchors.md section 5). Sets TGT_URL, or returns 1.
start_tgt() {
	command -v tgtd >/dev/null 2>&1 && command -v tgtadm >/dev/null 2>&1 || return 1
	local port attempt pid
	export TGT_IPC_SOCKET=$TMP/tgtd.socket
	# A port found free can be taken by a parallel test before tgtd binds
	# it: try a few.
	for attempt in 1 2 3 4 5; do
		port=$(free_port) || return 1
		tgtd -f --iscsi portal=127.0.0.1:"$port" >"$TMP/tgtd.log" 2>&1 &
		pid=$!
		for _ in $(seq 50); do
			tgtadm --op show --mode system >/dev/null 2>&1 && break
			sleep 0.1
		done
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			PIDS="$PIDS $pid"
			break
		fi
		echo "tgtd could not listen on $port (attempt $attempt)"
		kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
		pid=
	done
	[ -n "$pid" ] || return 1
	truncate --size=100M "$TMP/tgt-lun1.img" &&
	tgtadm --op new --mode target --tid 1 -T "$IQN:tgt" &&
	tgtadm --op bind --mode target --tid 1 -I ALL &&
	tgtadm --op new --mode logicalunit --tid 1 --lun 1 -b "$TMP/tgt-lun1.img" --blocksize=512 ||
		return 1
	TGT_URL="iscsi://127.0.0.1:$port/$IQN:tgt/1"
	echo "tgtd listening on 127.0.0.1:$port"
}

# failed_tests FILE: "Suite.Test" of every failed case of a CUnit run.
failed_tests() {
	awk '/^Suite: /{suite=$2} /^  Test: /{name=$2}
	     /(^|\.\.\.)FAILED$/ && name != "" && !seen[suite "." name]++ {print "  " suite "." name}' "$1"
}

# skipped_tests FILE: how many tests skipped themselves (CUnit counts
# them as passed): tests that logged "[SKIPPED]" and did not fail.
skipped_tests() {
	awk '/^Suite: /{suite=$2} /^  Test: /{name=suite "." $2}
	     /\[SKIPPED\]/ && name != "" {skip[name]=1}
	     /(^|\.\.\.)FAILED$/ && name != "" {failed[name]=1}
	     END {n=0; for (t in skip) if (!(t in failed)) n++; print n}' "$1"
}

# summary FILE: "passed total" of the CUnit tests line of a run.
summary() {
	awk '/^ *tests /{print $4, $2; exit}' "$1"
}
