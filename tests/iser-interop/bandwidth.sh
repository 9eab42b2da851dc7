# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Bandwidth in the soft-RoCE guest (sourced by the throughput tests):
# perftest's ib_write_bw / ib_read_bw on the rxe device, and
# idm-initiator's benchmark against an iSER target, with the same
# transfer size and duration so that the two can stand side by side.
# Needs lib.sh (need_rdma: RDMA_DEV, IP), $TMP, and sets GID (the RoCEv2
# GID index of $IP, the one perftest must use on rxe).
# shellcheck source-path=SCRIPTDIR source=../rdma-vm/gid.sh
. "$(dirname "${BASH_SOURCE[0]}")/../rdma-vm/gid.sh"
GID=$(rdma_gid_index "$RDMA_DEV" "$IP")
# seconds per run
BW_SECS=${IDM_BW_SECONDS:-4}

# perftest_bw write|read BS [DEPTH]: server and client of ib_write_bw or
# ib_read_bw with BS-byte messages for BW_SECS s, at most DEPTH of them in
# flight (default perftest's: 128 Writes, as many Reads as the device
# allows); prints the average MB/s (perftest's MB = 2^20 bytes).
perftest_bw() {
	local tool=ib_$1_bw bs=$2 port=$((18515 + RANDOM % 1000)) spid bw depth=()
	if [ -n "${3:-}" ]; then
		depth=(-t "$3")
		[ "$1" != read ] || depth+=(-o "$3")
	fi
	timeout -k 5 $((BW_SECS + 60)) "$tool" -d "$RDMA_DEV" -x "$GID" -s "$bs" -D "$BW_SECS" -F \
		"${depth[@]}" -p "$port" >"$TMP/$tool.srv" 2>&1 &
	spid=$!
	CLEANUP_CMDS+=("stop_pid $spid")
	# the client does not retry: wait until the server listens (a fixed
	# second was too short in a loaded guest: "Couldn't connect")
	for _ in $(seq 100); do
		ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.2
	done
	if ! timeout -k 5 $((BW_SECS + 60)) "$tool" -d "$RDMA_DEV" -x "$GID" -s "$bs" -D "$BW_SECS" -F \
		"${depth[@]}" -p "$port" "$IP" >"$TMP/$tool.cli" 2>&1; then
		sed 's/^/   | /' "$TMP/$tool.cli" "$TMP/$tool.srv" >&2
		fail "$tool failed"
	fi
	wait "$spid" 2>/dev/null
	sed 's/^/   | /' "$TMP/$tool.cli" >&2
	bw=$(awk -v bs="$bs" '$1 == bs && NF >= 4 { print $4; exit }' "$TMP/$tool.cli")
	[ -n "$bw" ] || fail "no result line in $tool output"
	echo "$bw"
}

# ini_bw INITIATOR URL READPCT BS QD ARGS...: idm-initiator's benchmark,
# BS-byte random I/O at queue depth QD for BW_SECS s; prints the average
# MB/s from its JSON, which stays in $TMP/bench.json (its per-connection
# counters). Fails when the run fails, reports errors or moves nothing.
ini_bw() {
	local ini=$1 url=$2 pct=$3 bs=$4 qd=$5 bw
	shift 5
	if ! timeout -k 5 $((BW_SECS + 120)) "$ini" -q -t 30 --no-discovery --bench --json \
		--duration "$BW_SECS" --bs "$bs" --qd "$qd" --read-pct "$pct" "$@" "$url" \
		>"$TMP/bench.json" 2>"$TMP/bench.err"; then
		sed 's/^/   | /' "$TMP/bench.err" >&2
		fail "idm-initiator benchmark of $url failed"
	fi
	grep -q '"errors": 0,' "$TMP/bench.json" || fail "benchmark of $url had errors"
	bw=$(grep -o '"bw_avg_mib_s": [0-9.]*' "$TMP/bench.json" | awk '{ print $2 }')
	awk -v b="${bw:-0}" 'BEGIN { exit !(b > 0) }' || fail "benchmark of $url moved no data"
	echo "$bw"
}

# json_sum FIELD FILE: the sum of FIELD over the JSON objects in FILE
# (the initiator's per-connection counters).
json_sum() {
	grep -o "\"$1\": [0-9]*" "$2" | awk '{ s += $2 } END { print s + 0 }'
}
