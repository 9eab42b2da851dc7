# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Processes and loopback ports of the shell tests (sourced through
# common.sh, not run).

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

# stop_pid PID [SECS]: stop a child we started: TERM, KILL after SECS
# (default 5) seconds, and reap it.
stop_pid() {
	local pid=$1 n=$(( ${2:-5} * 10 )) i
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < n; i++)); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# scaled SECS: a hang guard of SECS seconds times IDM_TEST_TIME_SCALE
# (CI sets 4 for the sanitizer builds). Only guards scale: a wait for an
# event ends when the event comes.
scaled() {
	local s=${IDM_TEST_TIME_SCALE:-1}
	[[ $s =~ ^[1-9][0-9]{0,2}$ ]] || s=1
	echo $(($1 * s))
}

# wait_until SECS CMD...: run CMD every 0.1 s until it succeeds (0) or
# SECS (scaled) passed (1). For events: a log line, a count, a file.
# (Its locals have names of their own: CMD may be a function that reads
# the caller's variables.)
wait_until() {
	local _wu_n=$(($(scaled "$1") * 10)) _wu_i
	shift
	for ((_wu_i = 0; _wu_i < _wu_n; _wu_i++)); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}

# port_open PORT [HOST]: is something listening on HOST (127.0.0.1):PORT?
port_open() { (exec 3<>"/dev/tcp/${2:-127.0.0.1}/$1") 2>/dev/null; }

# free_port: a loopback port nobody listens on right now (the kernel's
# choice for a socket bound to port 0; the peer is started right after).
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_port PORT [SECS [HOST]]: wait up to SECS (default 10, scaled) for
# HOST (127.0.0.1):PORT to accept.
wait_port() {
	local i n=$(( $(scaled "${2:-10}") * 10 ))
	for ((i = 0; i < n; i++)); do
		port_open "$1" "${3:-}" && return 0
		sleep 0.1
	done
	return 1
}

# wait_file FILE PID SECS: wait until FILE is not empty, PID exited or
# SECS (scaled) passed; 0 iff FILE is not empty.
wait_file() {
	local f=$1 pid=$2 n=$(( $(scaled "$3") * 10 )) i
	for ((i = 0; i < n; i++)); do
		[ -s "$f" ] && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	[ -s "$f" ]
}
