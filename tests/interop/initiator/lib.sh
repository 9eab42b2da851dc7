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

# peer_start LABEL CMD...: start CMD, a Python peer that writes the port
# it listens on to $TMP/port, in the background; sets PEER_PID and
# PEER_PORT, or fails (after stopping it) if no port came within 5 s.
peer_start() {
	local label=$1 i
	shift
	rm -f "$TMP/port"
	"$@" &
	PEER_PID=$!
	for ((i = 0; i < 50; i++)); do
		[ -s "$TMP/port" ] && break
		sleep 0.1
	done
	PEER_PORT=$(cat "$TMP/port" 2>/dev/null)
	[ -n "$PEER_PORT" ] || { stop_pid "$PEER_PID"; fail "$label: the peer did not start"; }
}

# expect_refused LABEL RC WANT: idm-initiator exited RC after a run whose
# stderr is $TMP/err.txt; it must be 1 with a line matching the extended
# regex WANT. Prints ok or FAIL with the evidence; returns 1 on FAIL.
expect_refused() {
	local label=$1 rc=$2 want=$3
	if [ "$rc" -ne 1 ]; then
		echo "FAIL $label: exit status $rc (want 1)"
		tail -n 20 "$TMP/err.txt"
		return 1
	elif ! grep -Eq -- "$want" "$TMP/err.txt"; then
		echo "FAIL $label: stderr lacks '$want':"
		tail -n 10 "$TMP/err.txt"
		return 1
	fi
	echo "ok   $label: $(grep -Em1 -- "$want" "$TMP/err.txt" | cut -c14-)"
}
