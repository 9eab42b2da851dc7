# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-target as the peer of a shell test (sourced after common.sh).

# idm_target_start LOG SECS ARGS...: "$IDM_TARGET" ARGS with a port file,
# its stderr appended to LOG (stdout too unless IDM_TARGET_STDOUT names
# another file), stopped on exit. Sets TGT_PID and PORT once it listens;
# dies with the end of LOG when it did not within SECS seconds. ARGS give
# the portal (":0" for a free port), the names and the LUNs.
idm_target_start() {
	local log=$1 secs=$2 pf=$TMP/port
	shift 2
	rm -f "$pf"
	"$IDM_TARGET" --port-file "$pf" "$@" >>"${IDM_TARGET_STDOUT:-$log}" 2>>"$log" &
	TGT_PID=$!
	on_exit "stop_pid $TGT_PID"
	wait_file "$pf" "$TGT_PID" "$secs" ||
		{ tail -n 20 "$log"; die "idm-target did not start (${*:1:4} ...)"; }
	# shellcheck disable=SC2034 # for the caller
	PORT=$(cat "$pf")
}

# target_alive: idm-target (TGT_PID) must still run after each step.
target_alive() {
	kill -0 "$TGT_PID" 2>/dev/null && return 0
	echo "--- idm-target log:"
	tail -n 30 "${TGT_LOG:-$TMP/target.log}"
	die "idm-target died"
}
