#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Throughput across the link, 64 KiB transfers, one table, no thresholds:
#   perftest ib_write_bw / ib_read_bw (rdma_cm, -R): server in A, client in B
#   idm-initiator --bench in B against idm-target in A, READ (the target
#   RDMA-Writes) and WRITE with InitialR2T=Yes ImmediateData=No (the target
#   RDMA-Reads), with IDM_ISER_STAG=mw and =mr.
# A run that fails or stalls shows as such in the table; the test fails
# after printing the whole table if any run failed. Under TCG the figures
# compare paths; they measure nothing real. The table also goes to
# BUILD/meson-logs/rdma-pair-throughput.txt.
# Usage: throughput.sh PATH/TO/idm-initiator PATH/TO/idm-target [BUILD_DIR]
IDM_TEST_NAME=idm-pair-throughput
INI=${1:?usage: $0 idm-initiator idm-target [build-dir]}
IDM_TARGET=${2:?}
BUILD=${3:-}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
need ib_write_bw perftest
need ib_read_bw perftest
SECS=${IDM_BW_SECONDS:-4}
BS=65536

# perftest_once NAME PORT: one server in A and one client here; prints
# the average MB/s, or nothing.
perftest_once() {
	local tool=ib_$1_bw port=$2 i
	pair_a_start "pt-$1" timeout $((SECS + 60)) "$tool" -d rxe0 -R -s $BS -D "$SECS" -F -p "$port"
	CLEANUP_CMDS+=("pair_a_stop pt-$1 KILL")
	: >"$TMP/$tool.cli"
	for ((i = 0; i < 20; i++)); do
		if timeout -k 5 $((SECS + 60)) "$tool" -d "$IDM_RDMA_DEV" -R -s $BS -D "$SECS" -F \
			-p "$port" "$A_IP" >"$TMP/$tool.cli" 2>&1; then
			break
		fi
		grep -qiE "Couldn't connect|Unable to perform rdma_client|Failed to connect|rdma_connect" \
			"$TMP/$tool.cli" || break # not a server still starting
		_pair_sleep 1
	done
	pair_a_stop "pt-$1" >/dev/null
	sed 's/^/   | /' "$TMP/$tool.cli" >&2
	awk -v bs=$BS '$1 == bs && NF >= 4 { print $4; exit }' "$TMP/$tool.cli"
}

# perftest NAME PORT: prints the average MB/s, or "failed" (for the
# table). perftest is the reference here, not what is tested: a run that
# gave no result (under a loaded host a client of the 1-vCPU guests has
# hung until its timeout) is tried once more, and the table says so.
perftest() {
	local bw
	bw=$(perftest_once "$1" "$2")
	if [ -z "$bw" ]; then
		echo "ib_$1_bw gave no result; once more" >&2
		bw=$(perftest_once "$1" "$2")
		[ -z "$bw" ] || bw="$bw (2nd try)"
	fi
	echo "${bw:-failed}"
}

# bench MODE READPCT ARGS...: idm-initiator benchmark against idm-target
# in A with IDM_ISER_STAG=MODE, QD 16, 64 KiB random I/O; prints MB/s.
bench() {
	local mode=$1 pct=$2 bw rc=0
	shift 2
	timeout -k 5 $((SECS + 90)) env IDM_ISER_STAG="$mode" "$INI" -q -t 30 --no-discovery --bench \
		--json --duration "$SECS" --bs $BS --qd 16 --read-pct "$pct" "$@" "$URL" \
		>"$TMP/bench.json" 2>"$TMP/bench.err" || rc=$?
	sed 's/^/   | /' "$TMP/bench.err" | tail -n 5 >&2
	bw=$(grep -o '"bw_avg_mib_s": [0-9.]*' "$TMP/bench.json" | awk '{ print $2 }')
	if [ $rc -ne 0 ] || ! grep -q '"errors": 0,' "$TMP/bench.json" ||
		! awk -v b="${bw:-0}" 'BEGIN { exit !(b > 0) }'; then
		echo "failed (status $rc${bw:+, $bw MB/s})"
	else
		echo "$bw"
	fi
}

pair_wire_begin
log "perftest ib_write_bw / ib_read_bw -R across the link: $BS bytes, $SECS s"
pw=$(perftest write 18515)
pr=$(perftest read 18516)

IQN=iqn.2026-11.org.libidm:pair-bw
row=()
for mode in mw mr; do
	export IDM_ISER_STAG=$mode # the target in A too
	pair_idm_target "tgt-$mode" "$IQN" ram:256M
	URL=iser://$A_IP:$PORT/$IQN/1
	log "idm-initiator -> idm-target, IDM_ISER_STAG=$mode: reads, then writes"
	row+=("$(bench "$mode" 100)")
	row+=("$(bench "$mode" 0 --initial-r2t yes --immediate-data no)")
	pair_a_stop "tgt-$mode" >/dev/null
done
pair_wire_end throughput

{
	echo "iSER throughput across the two-guest link ($(uname -r), rxe, QEMU TCG, 1 vCPU each)"
	echo "64 KiB transfers, $SECS s each; idm-initiator: QD 16, random; MB/s = 2^20 B/s"
	printf '%-56s %s\n' "path" "MB/s"
	printf '%-56s %s\n' "perftest ib_write_bw -R (RDMA Write)" "$pw"
	printf '%-56s %s\n' "idm-initiator READ  <- idm-target, STag mw (RDMA Write)" "${row[0]}"
	printf '%-56s %s\n' "idm-initiator READ  <- idm-target, STag mr (RDMA Write)" "${row[2]}"
	printf '%-56s %s\n' "perftest ib_read_bw -R (RDMA Read)" "$pr"
	printf '%-56s %s\n' "idm-initiator WRITE -> idm-target, STag mw (RDMA Read)" "${row[1]}"
	printf '%-56s %s\n' "idm-initiator WRITE -> idm-target, STag mr (RDMA Read)" "${row[3]}"
} >"$TMP/table"
cat "$TMP/table"
if [ -n "$BUILD" ] && [ -d "$BUILD" ]; then
	mkdir -p "$BUILD/meson-logs" && cp "$TMP/table" "$BUILD/meson-logs/rdma-pair-throughput.txt"
fi
# (the runs ran in subshells: their failures show in the table)
grep -q ' failed' "$TMP/table" && fail "some runs failed: $(grep ' failed' "$TMP/table" | cut -c1-56 | tr -s ' ' | paste -sd ';')"
log "PASS"
