# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# What the idm-target interop tests share beyond tests/lib (sourced, not
# run): the IQN, idm-target with a RAM LUN, tgtd as a second target, and
# the readers of a CUnit run. Every step that could hang is bounded by
# `timeout` (meson adds its own).

# The runtime (temp dir, cleanup, log/fail/skip/need, processes, ports)
# and idm-target's start are tests/lib's.
: "${IDM_TEST_NAME:=idm-target-test}"
# shellcheck source-path=SCRIPTDIR source=../../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../../lib/target.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/target.sh"

IQN=iqn.2026-11.org.libidm:interop

# need_libiscsi TOOL...: skip unless every libiscsi tool is installed.
need_libiscsi() {
	local t
	for t in "$@"; do
		need "$t" libiscsi-bin
	done
}

# start_target LOG EXTRA_ARGS...: idm-target on 127.0.0.1, free port,
# RAM LUN 1; sets PORT, TARGET_PID and URL.
start_target() {
	IDM_TARGET_STDOUT=/dev/null idm_target_start "$1" 5 --portal 127.0.0.1:0 \
		--target-name "$IQN" --lun ram:100M -v "${@:2}"
	# in PIDS too: the scripts stop and wait for what PIDS holds
	PIDS="$PIDS $TGT_PID"
	# shellcheck disable=SC2034 # for the scripts that source this
	TARGET_PID=$TGT_PID URL="iscsi://127.0.0.1:$PORT/$IQN/1"
	echo "idm-target listening on 127.0.0.1:$PORT"
}

# expect WHAT PATTERN CMD...: CMD's output (within 20 s) must match the
# extended regex PATTERN; a mismatch is counted in fails and shown.
fails=0
expect() {
	local what=$1 pat=$2 out
	shift 2
	out=$(timeout 20 "$@" 2>&1)
	if printf '%s\n' "$out" | grep -Eq -- "$pat"; then
		echo "ok   $what"
	else
		echo "FAIL $what: wanted /$pat/, got:"
		printf '%s\n' "$out" | sed 's/^/     /' | head -20
		fails=$((fails + 1))
	fi
}

# check WHAT [!] CMD...: CMD must succeed (with !: fail); counted in fails
check() {
	local what=$1 want=0 rc
	shift
	if [ "$1" = "!" ]; then
		want=1
		shift
	fi
	"$@"
	rc=$?
	if [ $((rc != 0)) = "$want" ]; then
		echo "ok   $what"
	else
		echo "FAIL $what"
		fails=$((fails + 1))
	fi
}
# expect_rc WHAT RC PATTERN CMD...: run_expect (tests/lib), a mismatch
# counted in fails.
expect_rc() {
	run_expect "$@" || fails=$((fails + 1))
}

# tgtd_answers PID: tgtd PID answers tgtadm, or has exited
tgtd_answers() { tgtadm --op show --mode system || ! kill -0 "$1"; }
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
		wait_until 30 tgtd_answers "$pid" >/dev/null 2>&1
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			PIDS="$PIDS $pid"
			break
		fi
		echo "tgtd could not listen on $port (attempt $attempt)"
		kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
		pid=
	done
	[ -n "$pid" ] || return 1
	# tgtd ignores SIGTERM while targets exist: ask it to exit first
	# (run before PIDS are stopped)
	on_exit "timeout 5 tgtadm --op delete --mode system" \
		"timeout 5 tgtadm --op delete --force --mode target --tid 1"
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
