#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Throughput of tgtd on libidm over iSER, next to perftest on the same rxe
# device in the same guest, at 64 KiB, 512 KiB and 1 MiB transfers:
#   SCSI READ  -> tgtd's Put_Data RDMA-Writes the data   ~ ib_write_bw
#   SCSI WRITE -> tgtd's Get_Data RDMA-Reads the data    ~ ib_read_bw
# idm-initiator drives it (random I/O, QD 16 at 64 KiB and QD 4 above:
# 1-4 MiB in flight), perftest with as many messages in flight; writes run with ImmediateData=No (InitialR2T=Yes is
# tgt's default), so every written byte is solicited. tgtd's debug log is
# off while the throughput is measured; a 1 s run after each, with it on,
# gives the connection's idm_conn_get_stats() counters that tgtd logs at
# its end, which must show no payload copy: libidm moved every byte by
# RDMA between the wire and tgt's registered buffers. Prints the table and
# writes it to BUILD/meson-logs/tgt-iser-throughput.txt. The guest runs
# under TCG: the figures compare the paths, they are not a benchmark of
# anything real. Fails when a run fails, moves nothing, or copied.
# Usage: throughput.sh TGT-IDM-WORKDIR PATH/TO/idm-initiator [BUILD_DIR]
IDM_TEST_NAME=tgt-iser-throughput
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
tgt_iser_setup "${1:-}"
INI=${2:?usage: $0 tgt-idm-workdir idm-initiator [build-dir]}
BUILD=${3:-}
need ib_write_bw perftest
need ib_read_bw perftest
# shellcheck source-path=SCRIPTDIR source=../iser-interop/bandwidth.sh
. "$(dirname "$0")/../iser-interop/bandwidth.sh"
SIZES="65536 524288 1048576"

start_tgtd_iser idm 3 256M || fail "tgtd on libidm did not start"
TLOG=$TMP/tgtd-idm.log
adm=("$TGTADM" -C 3 --lld iscsi)
# every written byte solicited: moved by RDMA Read, never copied
timeout 5 "${adm[@]}" --op update --mode target --tid 1 -n ImmediateData -v No ||
	fail "tgtadm could not set ImmediateData=No"
# shellcheck disable=SC2154 # set by start_tgtd
URL=$URL_idm

# copies_since LINE: "COPIES BYTES CONNS" summed over the iSER connections
# whose counters tgtd logged from LINE on (waits up to 10 s for the one
# of the run that just ended: it logs them when the connection is gone).
copies_since() {
	counters_wait "$TLOG" "$1" '^conn ' || true
	conn_counters "$TLOG" "$1" | awk '/^conn / { c += $5; b += $6; n++ }
		END { print c + 0, b + 0, n + 0 }'
}

# qd BS: the transfers in flight at size BS, for idm-initiator and
# perftest alike: 16 at 64 KiB, 4 above (1-4 MiB)
qd() { if [ "$1" -gt 65536 ]; then echo 4; else echo 16; fi; }

# debug on|off: tgtd's debug log, which carries the connections'
# counters but also lines per command: off while the throughput is
# measured, on for a short second run whose counters are read
debug() {
	timeout 5 "${adm[@]}" --op update --mode sys --name debug --value "$1" ||
		fail "tgtadm could not turn tgtd's debug log $1"
}

# run NAME READPCT BS: idm-initiator against tgtd for BW_SECS s with
# tgtd's debug log off, then for 1 s with it on; sets BW_NAME_BS and
# COPIES_NAME_BS ("COPIES BYTES CONNS" tgtd counted in the second run,
# then the initiator's "COPIES BYTES" in it).
run() {
	local name=$1 pct=$2 bs=$3 mark bw
	debug off
	bw=$(ini_bw "$INI" "$URL" "$pct" "$bs" "$(qd "$bs")" --immediate-data no) || fail "${bw#FAIL: }"
	printf -v "BW_${name}_$bs" '%s' "$bw"
	debug on
	mark=$(($(wc -l <"$TLOG") + 1))
	bw=$(BW_SECS=1 ini_bw "$INI" "$URL" "$pct" "$bs" "$(qd "$bs")" --immediate-data no) ||
		fail "${bw#FAIL: }"
	tgtd_alive idm
	printf -v "COPIES_${name}_$bs" '%s' "$(copies_since "$mark") \
$(json_sum payload_copies "$TMP/bench.json") $(json_sum payload_copy_bytes "$TMP/bench.json")"
}

log "rxe $RDMA_DEV, GID index $GID; $BW_SECS s per run; sizes $SIZES"
for bs in $SIZES; do
	# (a function run in $(...) that fails exits only that subshell, its
	# FAIL line captured as the value: pass it on)
	v=$(perftest_bw write "$bs" "$(qd "$bs")") || fail "${v#FAIL: }"
	printf -v "PW_$bs" '%s' "$v"
	v=$(perftest_bw read "$bs" "$(qd "$bs")") || fail "${v#FAIL: }"
	printf -v "PR_$bs" '%s' "$v"
	run R 100 "$bs"
	run W 0 "$bs"
done

{
	echo "tgtd on libidm over iSER in the soft-RoCE guest ($(uname -r), rxe, QEMU TCG)"
	echo "$BW_SECS s per run; 16 transfers in flight at 64 KiB, 4 above (idm-initiator's" \
		"random I/O and perftest alike); ImmediateData=No; MB/s = 2^20 B/s"
	printf '%-9s %12s %12s %6s %12s %12s %6s\n' "size" "ib_write_bw" "tgtd READ" "%" \
		"ib_read_bw" "tgtd WRITE" "%"
	for bs in $SIZES; do
		pw=PW_$bs pr=PR_$bs r=BW_R_$bs w=BW_W_$bs
		awk -v s="$((bs >> 10)) KiB" -v a="${!pw}" -v b="${!r}" -v c="${!pr}" -v d="${!w}" \
			'BEGIN { printf "%-9s %12.1f %12.1f %5.0f%% %12.1f %12.1f %5.0f%%\n",
				s, a, b, 100 * b / a, c, d, 100 * d / c }'
	done
	echo
	echo "payload copies (copies/bytes) counted by idm_conn_get_stats() in the 1 s runs:"
	printf '%-22s %24s %16s\n' "run" "tgtd (connections)" "idm-initiator"
	for bs in $SIZES; do
		for n in R W; do
			v=COPIES_${n}_$bs
			read -r a b k c d <<<"${!v}"
			printf '%-22s %24s %16s\n' "$([ $n = R ] && echo READ || echo WRITE) $((bs >> 10)) KiB" \
				"$a/$b ($k)" "$c/$d"
		done
	done
} >"$TMP/table"
cat "$TMP/table"
if [ -n "$BUILD" ] && [ -d "$BUILD" ]; then
	mkdir -p "$BUILD/meson-logs" && cp "$TMP/table" "$BUILD/meson-logs/tgt-iser-throughput.txt"
fi
for bs in $SIZES; do
	for n in R W; do
		v=COPIES_${n}_$bs
		read -r a b k c d <<<"${!v}"
		[ "$k" -gt 0 ] || fail "tgtd logged no iSER connection counters for run $n at $bs bytes"
		if [ "$a" != 0 ] || [ "$c" != 0 ]; then
			fail "run $n at $bs bytes copied payload: tgtd $a/$b, initiator $c/$d"
		fi
	done
done
log "PASS"
