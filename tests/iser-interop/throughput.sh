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
# of anything real. Next to each idm-target run it reports the payload
# copies both sides counted (idm_conn_get_stats(): the target's from its
# SIGUSR1 dump, the initiator's from its --json) and fails when a run of
# solicited data only (the READs, the writes with InitialR2T=Yes
# ImmediateData=No) copied any. A third run with immediate data shows the
# copies iSER's design asks for (RFC 7145: immediate data comes in the
# Send, the target copies it out of the receive buffer), and proves the
# counter counts. Fails otherwise only when a run fails or moves no data.
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
BS=65536
# shellcheck source-path=SCRIPTDIR source=bandwidth.sh
. "$(dirname "$0")/bandwidth.sh"
SECS=$BW_SECS

# bench URL READPCT ARGS...: idm-initiator at QD 16, 64 KiB
bench() {
	local url=$1 pct=$2
	shift 2
	ini_bw "$INI" "$url" "$pct" $BS 16 "$@"
}

# copies_bench NAME URL READPCT ARGS...: bench against idm-target while
# asking it for its counters (SIGUSR1) twice a second: the connections
# are gone once the run ended, so the last dump taken while they lived
# holds the counts (of all but the last half second, which on a run of
# solicited data is no different). Sets BW_<NAME>, and COPIES_<NAME> to
# "TARGET_COPIES TARGET_BYTES INITIATOR_COPIES INITIATOR_BYTES".
copies_bench() {
	local name=$1 url=$2 pct=$3 mark bw kpid tc ic
	shift 3
	mark=$(wc -l <"$TMP/target.log")
	(while kill -USR1 "$TGT_PID" 2>/dev/null; do sleep 0.5; done) &
	kpid=$!
	bw=$(bench "$url" "$pct" "$@") || { kill "$kpid"; fail "${bw#FAIL: }"; }
	kill "$kpid"
	wait "$kpid" 2>/dev/null
	target_alive
	# each dump: "stats PEER PROV STATE: k=v ..." lines, then "stats: N
	# connections"; sum over the connections of a dump, keep the largest
	tc=$(tail -n +$((mark + 1)) "$TMP/target.log" | awk '
		/^stats: [0-9]+ connection/ {
			if (c > bc || (c == bc && b > bb)) { bc = c; bb = b }
			c = 0; b = 0; next
		}
		/^stats / {
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^payload_copies=/) { sub(/.*=/, "", $i); c += $i }
				else if ($i ~ /^payload_copy_bytes=/) { sub(/.*=/, "", $i); b += $i }
			}
		}
		END { print bc + 0, bb + 0 }')
	ic="$(json_sum payload_copies "$TMP/bench.json") $(json_sum payload_copy_bytes "$TMP/bench.json")"
	printf -v "BW_$name" '%s' "$bw"
	printf -v "COPIES_$name" '%s' "$tc $ic"
}

log "perftest ib_write_bw / ib_read_bw: rxe $RDMA_DEV, GID index $GID, $BS bytes, $SECS s"
# (a function run in $(...) that fails exits only that subshell, its
# FAIL line captured as the value: pass it on)
pw=$(perftest_bw write $BS) || fail "${pw#FAIL: }"
pr=$(perftest_bw read $BS) || fail "${pr#FAIL: }"

IQN=iqn.2026-11.org.libidm:bw
start_idm_target "$IQN" ram:256M
log "idm-initiator -> idm-target: reads, writes, writes with immediate data"
copies_bench R "iser://$IP:$PORT/$IQN/1" 100
copies_bench W "iser://$IP:$PORT/$IQN/1" 0 --initial-r2t yes --immediate-data no
copies_bench I "iser://$IP:$PORT/$IQN/1" 0 --initial-r2t yes --immediate-data yes
ir=$BW_R iw=$BW_W
grep -q '^stats .*payload_copies=' "$TMP/target.log" ||
	fail "idm-target printed no payload_copies on SIGUSR1"

LIO_IQN=iqn.2026-11.org.libidm:bw-lio
lio_start "$LIO_IQN" 256 "${IDM_LIO_PORT:-3260}"
# (idm-initiator's default TargetRecvDataSegmentLength on iSER, 8 KiB, is
# the most LIO's isert can receive in one Send: see lio_target.sh)
log "idm-initiator -> LIO: reads, then writes"
lr=$(bench "iser://$IP:${IDM_LIO_PORT:-3260}/$LIO_IQN/0" 100) || fail "${lr#FAIL: }"
lw=$(bench "iser://$IP:${IDM_LIO_PORT:-3260}/$LIO_IQN/0" 0 \
	--initial-r2t yes --immediate-data no) || fail "${lw#FAIL: }"

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
	awk -v a="$ir" -v b="$pw" -v c="$iw" -v d="$pr" 'BEGIN {
		printf "idm-target / perftest: READ %.0f%%, WRITE %.0f%%\n",
			100 * a / b, 100 * c / d }'
	echo
	echo "payload copies (copies/bytes) counted by idm_conn_get_stats(), idm-initiator -> idm-target:"
	printf '%-52s %21s %21s\n' "run" "target" "initiator"
	for r in "R:READ (solicited: RDMA Write)" "W:WRITE, InitialR2T=Yes ImmediateData=No" \
		"I:WRITE, ImmediateData=Yes ($BW_I MB/s)"; do
		v=COPIES_${r%%:*}
		read -r a b c d <<<"${!v}"
		printf '%-52s %21s %21s\n' "${r#*:}" "$a/$b" "$c/$d"
	done
} >"$TMP/table"
cat "$TMP/table"
if [ -n "$BUILD" ] && [ -d "$BUILD" ]; then
	mkdir -p "$BUILD/meson-logs" && cp "$TMP/table" "$BUILD/meson-logs/iser-throughput.txt"
fi
# zero copy of solicited data, on both sides; the immediate-data run must
# count its copies (else the counter does not count and the zeros above
# prove nothing), and the initiator never copies
for r in R W; do
	v=COPIES_$r
	read -r a b c d <<<"${!v}"
	if [ "$a" != 0 ] || [ "$c" != 0 ]; then
		fail "run $r of solicited data copied payload: target $a/$b, initiator $c/$d"
	fi
done
read -r a b c d <<<"$COPIES_I"
[ "$a" -gt 0 ] || fail "the immediate-data run counted no copy on the target"
[ "$c" = 0 ] || fail "the iSER initiator copied payload in the immediate-data run: $c/$d"
log "PASS"
