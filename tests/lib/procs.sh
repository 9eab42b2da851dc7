# SPDX-License-Identifier: BSD-2-Clause
# Process helpers shared by the shell tests on the host (tests/cli,
# tests/interop/target); sourced, not run.

# stop_pids PID...: SIGTERM to each, then up to 2 s for each to go before
# SIGKILL, so that no peer a test started outlives it.
stop_pids() {
	local p
	for p in "$@"; do
		kill "$p" 2>/dev/null
	done
	for p in "$@"; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.2
		done
		kill -9 "$p" 2>/dev/null
	done
}

# skip WHY...: meson's "skipped" (exit status 77), saying why.
skip() {
	echo "SKIP: $*"
	exit 77
}
