#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Throughput idm-initiator measures over iSER, against idm-target and
# against LIO's isert, next to perftest's ib_write_bw / ib_read_bw on the
# same rxe device in the same guest, all with 64 KiB transfers:
#   SCSI READ  -> the target RDMA-Writes the data  ~ ib_write_bw
#   SCSI WRITE -> the target RDMA-Reads the data   ~ ib_read_bw
# (writes run with InitialR2T=Yes ImmediateData=No where the target
# allows it, so their data moves by RDMA Read, not in Sends). Prints the
# table and writes it to BUILD/meson-logs/iser-throughput.txt. The guest
# runs under TCG: the numbers compare the paths, they are not a benchmark
# of anything real. Fails only when a run fails or moves no data.
# Usage: throughput.sh PATH/TO/idm-initiator PATH/TO/idm-target [BUILD_DIR]
IDM_TEST_NAME=idm-iser-throughput
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lio.sh
. "$(dirname "$0")/lio.sh"
INI=${1:?usage: $0 idm-initiator idm-target [build-dir]}
IDM_TARGET=${2:?usage: $0 idm-initiator idm-target [build-dir]}
BUILD=${3:-}
need_rdma
need ib_write_bw perftest
need ib_read_bw perftest
SECS=${IDM_BW_SECONDS:-4}
BS=65536

# shellcheck source-path=SCRIPTDIR source=../rdma-vm/gid.sh
. "$(dirname "$0")/../rdma-vm/gid.sh"
# The RoCEv2 GID of $IP (rxe lists the IPv4-mapped one after fe80::).
GID=$(rdma_gid_index "$RDMA_DEV" "$IP")

# perftest NAME: server and client of ib_NAME_bw on rxe; prints the
# average MB/s (perftest's MB = 2^20 bytes).
perftest() {
	local tool=ib_$1_bw port=$((18515 + RANDOM % 1000)) spid bw
	timeout -k 5 $((SECS + 60)) "$tool" -d "$RDMA_DEV" -x "$GID" -s $BS -D "$SECS" -F \
		-p "$port" >"$TMP/$tool.srv" 2>&1 &
	spid=$!
	CLEANUP_CMDS+=("stop_pid $spid")
	sleep 1
	if ! timeout -k 5 $((SECS + 60)) "$tool" -d "$RDMA_DEV" -x "$GID" -s $BS -D "$SECS" -F \
		-p "$port" "$IP" >"$TMP/$tool.cli" 2>&1; then
		sed 's/^/   | /' "$TMP/$tool.cli" "$TMP/$tool.srv" >&2
		fail "$tool failed"
	fi
	wait "$spid" 2>/dev/null
	sed 's/^/   | /' "$TMP/$tool.cli" >&2
	bw=$(awk -v bs=$BS '$1 == bs && NF >= 4 { print $4; exit }' "$TMP/$tool.cli")
	[ -n "$bw" ] || fail "no result line in $tool output"
	echo "$bw"
}

# bench URL READPCT ARGS...: idm-initiator benchmark, QD 16, 64 KiB
# random I/O for $SECS s; prints the average MB/s from its JSON.
bench() {
	local url=$1 pct=$2 bw
	shift 2
	if ! timeout -k 5 $((SECS + 120)) "$INI" -q -t 30 --no-discovery --bench --json \
		--duration "$SECS" --bs $BS --qd 16 --read-pct "$pct" "$@" "$url" \
		>"$TMP/bench.json" 2>"$TMP/bench.err"; then
		sed 's/^/   | /' "$TMP/bench.err" >&2
		fail "idm-initiator benchmark of $url failed"
	fi
	grep -q '"errors": 0,' "$TMP/bench.json" || fail "benchmark of $url had errors"
	bw=$(grep -o '"bw_avg_mib_s": [0-9.]*' "$TMP/bench.json" | awk '{ print $2 }')
	awk -v b="${bw:-0}" 'BEGIN { exit !(b > 0) }' || fail "benchmark of $url moved no data"
	echo "$bw"
}

log "perftest ib_write_bw / ib_read_bw: rxe $RDMA_DEV, GID index $GID, $BS bytes, $SECS s"
pw=$(perftest write)
pr=$(perftest read)

IQN=iqn.2026-11.org.libidm:bw
start_idm_target "$IQN" ram:256M
log "idm-initiator -> idm-target: reads, then writes"
ir=$(bench "iser://$IP:$PORT/$IQN/1" 100)
iw=$(bench "iser://$IP:$PORT/$IQN/1" 0 --initial-r2t yes --immediate-data no)
target_alive

LIO_IQN=iqn.2026-11.org.libidm:bw-lio
lio_start "$LIO_IQN" 256 "${IDM_LIO_PORT:-3260}"
# (idm-initiator's default TargetRecvDataSegmentLength on iSER, 8 KiB, is
# the most LIO's isert can receive in one Send: see lio_target.sh)
log "idm-initiator -> LIO: reads, then writes"
lr=$(bench "iser://$IP:${IDM_LIO_PORT:-3260}/$LIO_IQN/0" 100)
lw=$(bench "iser://$IP:${IDM_LIO_PORT:-3260}/$LIO_IQN/0" 0 \
	--initial-r2t yes --immediate-data no)

{
	echo "iSER throughput in the soft-RoCE guest ($(uname -r), rxe, QEMU TCG)"
	echo "64 KiB transfers, $SECS s each; idm-initiator: QD 16, random; MB/s = 2^20 B/s"
	printf '%-52s %10s\n' "path" "MB/s"
	printf '%-52s %10s\n' "perftest ib_write_bw (RDMA Write)" "$pw"
	printf '%-52s %10s\n' "idm-initiator READ  <- idm-target (RDMA Write)" "$ir"
	printf '%-52s %10s\n' "idm-initiator READ  <- LIO isert (RDMA Write)" "$lr"
	printf '%-52s %10s\n' "perftest ib_read_bw (RDMA Read)" "$pr"
	printf '%-52s %10s\n' "idm-initiator WRITE -> idm-target (RDMA Read)" "$iw"
	printf '%-52s %10s\n' "idm-initiator WRITE -> LIO isert (RDMA Read)" "$lw"
} >"$TMP/table"
cat "$TMP/table"
if [ -n "$BUILD" ] && [ -d "$BUILD" ]; then
	mkdir -p "$BUILD/meson-logs" && cp "$TMP/table" "$BUILD/meson-logs/iser-throughput.txt"
fi
log "PASS"
