# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# What the command-line tests share beyond tests/lib (sourced, not run):
# checks that count failures and go on to the next (fail, expect_run,
# finish), idm-target started from its options or a config file.
: "${IDM_TEST_NAME:=idm-cli-test}"
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/target.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/target.sh"

FAILS=0

# fail WHY: count a failed check and go on; finish reports them all.
fail() {
	echo "FAIL: $*"
	FAILS=$((FAILS + 1))
}

# expect_run NAME WANT_RC PATTERN CMD...: run_expect (tests/lib), a
# mismatch counted in FAILS.
expect_run() {
	run_expect "$@" || FAILS=$((FAILS + 1))
}

# start_target LOG ARGS...: idm-target on 127.0.0.1 with a free port;
# sets PORT and TARGET_PID. The caller gives the LUNs (or a config).
start_target() {
	IDM_TARGET_STDOUT=/dev/null idm_target_start "$1" 30 --log-target stderr "${@:2}"
	TARGET_PID=$TGT_PID
}

target_gone() { ! kill -0 "$TARGET_PID" 2>/dev/null; }
# stop_target: SIGTERM, and idm-target's exit status.
stop_target() {
	kill "$TARGET_PID" 2>/dev/null
	wait_until 30 target_gone
	wait "$TARGET_PID"
}

# log_has N PATTERN: the target's log ($TMP/t.log) has at least N lines
# matching the extended regex PATTERN (for wait_until).
log_has() { [ "$(grep -Ec -- "$2" "$TMP/t.log")" -ge "$1" ]; }

finish() {
	if [ "$FAILS" -ne 0 ]; then
		echo "$FAILS check(s) failed"
		exit 1
	fi
	echo "all checks passed"
	exit 0
}
