# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# What the idm-initiator interop tests share beyond tests/lib (sourced,
# not run; set IDM_TEST_NAME first): idm-target ($TGT) as their peer, the
# initiator ($INI) run with a time bound, checks of its output.
: "${IDM_TEST_NAME:=idm-ini}"
# shellcheck source-path=SCRIPTDIR source=../../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../../lib/target.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/target.sh"

# start_target PORTAL WAIT_S [idm-target args...]: start $TGT on PORTAL
# (port 0: it picks one), its log in $TMP/target.log; sets TGT_PID and
# PORT, or fails with the log's tail after WAIT_S s.
start_target() {
	IDM_TARGET=$TGT idm_target_start "$TMP/target.log" "$2" --portal "$1" "${@:3}"
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
