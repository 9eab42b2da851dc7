#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-initiator against Debian's tgtd on 127.0.0.1: discovery, login,
# LUN listing, 64 MiB random-pattern write + read-back verification
# (plain and with CRC32C digests), and a short benchmark.
# Usage: tgtd.sh PATH/TO/idm-initiator
IDM_TEST_NAME=idm-ini-tgtd
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
INI=${1:?usage: $0 idm-initiator}

command -v tgtd >/dev/null && command -v tgtadm >/dev/null ||
	skip "tgtd/tgtadm not installed (Debian package 'tgt')"

IQN=iqn.2024-01.test.libidm:ini-tgtd
# A private IPC socket so that we neither need nor disturb a system tgtd.
export TGT_IPC_SOCKET=$TMP/tgtd.socket
# A port picked as free can be taken by another test before tgtd binds it
# (tests run in parallel): try a few.
for attempt in 1 2 3 4 5; do
	PORT=$(free_port) || fail "no free loopback port"
	log "starting tgtd on 127.0.0.1:$PORT (attempt $attempt)"
	tgtd -f --iscsi "portal=127.0.0.1:$PORT" >"$TMP/tgtd.log" 2>&1 &
	TGT_PID=$!
	wait_port "$PORT" 10 && break
	cat "$TMP/tgtd.log"
	stop_pid "$TGT_PID"
	TGT_PID=
done
[ -n "$TGT_PID" ] || fail "tgtd does not listen"
CLEANUP_CMDS+=("stop_pid $TGT_PID" "tgtadm --op delete --mode system")
wait_until 30 tgtadm --op show --mode target >/dev/null 2>&1
tgtadm --op new --mode target --tid 1 -T "$IQN" || fail "tgtadm new target"
tgtadm --op bind --mode target --tid 1 -I ALL || fail "tgtadm bind"
truncate --size=100M "$TMP/lun1.img"
tgtadm --op new --mode logicalunit --tid 1 --lun 1 -b "$TMP/lun1.img" \
	--blocksize=512 || fail "tgtadm new lun"

URL=iscsi://127.0.0.1:$PORT

log "discovery and listing"
run_ini -v "$URL" || fail "discovery/listing"
expect_out "Target: $IQN"
expect_out "LUNs: 0 1"
expect_out "LUN 1: type 0x00 (disk)"
expect_out "204800 blocks of 512 bytes"

log "64 MiB random-pattern write and read-back"
run_ini --verify 64M "$URL/$IQN/1" || fail "64 MiB verify"
expect_out "verify: wrote 64.0 MiB.*: OK"

log "16 MiB verify with CRC32C header and data digests, 16-byte CDBs"
# tgtd offers only None unless told otherwise (it then answers None even to
# a CRC32C-only offer).
tgtadm --lld iscsi --op update --mode target --tid 1 -n HeaderDigest -v CRC32C,None &&
	tgtadm --lld iscsi --op update --mode target --tid 1 -n DataDigest -v CRC32C,None ||
	fail "tgtadm digests"
run_ini --header-digest crc32c --data-digest crc32c --cdb16 --verify 16M \
	--verify-io 1m "$URL/$IQN/1" || fail "verify with digests"
expect_out "HeaderDigest=CRC32C DataDigest=CRC32C"
expect_out ": OK"

log "16 MiB verify with InitialR2T=Yes ImmediateData=No (all data by R2T)"
run_ini --initial-r2t yes --immediate-data no --max-burst 64k --verify 16M \
	"$URL/$IQN/1" || fail "verify with R2T only"
expect_out "ImmediateData=No InitialR2T=Yes"
expect_out ": OK"

log "16 MiB verify with InitialR2T=No (unsolicited Data-Out up to FirstBurstLength)"
tgtadm --lld iscsi --op update --mode target --tid 1 -n InitialR2T -v No ||
	fail "tgtadm InitialR2T"
run_ini --initial-r2t no --immediate-data yes --first-burst 64k --verify 16M \
	--verify-io 1m "$URL/$IQN/1" || fail "verify with unsolicited data"
expect_out "ImmediateData=Yes InitialR2T=No"
expect_out ": OK"

log "benchmark: 2 s, 4 KiB, QD 8, 70% reads"
run_ini -q --bench --duration 2 --bs 4k --qd 8 --read-pct 70 "$URL/$IQN/1" ||
	fail "benchmark"
expect_out "BW average\[MB/sec\]"
expect_out "t_p99.9\[usec\]"

log "benchmark: 1 s, 64 KiB, 2 sessions, JSON"
run_ini -q --bench --json --duration 1 --bs 64k --qd 4 --sessions 2 \
	--read-pct 50 "$URL/$IQN/1" || fail "JSON benchmark"
expect_out '"iops": '
expect_out '"p99_9": '
expect_out '"errors": 0'
if command -v python3 >/dev/null; then
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMP/out.txt" ||
		fail "--json output does not parse as JSON"
fi

log "NOP-In pings from tgtd every second, answered during a 3 s benchmark"
tgtadm --lld iscsi --op update --mode target --tid 1 -n nop_interval -v 1 &&
	tgtadm --lld iscsi --op update --mode target --tid 1 -n nop_count -v 2 ||
	fail "tgtadm nop_interval"
run_ini -vv -q --bench --duration 3 --qd 1 "$URL/$IQN/1" >/dev/null ||
	fail "benchmark with NOP-In pings"
grep -q "answering NOP-In TTT" "$TMP/err.txt" || fail "no NOP-In was answered"
grep -c "answering NOP-In TTT" "$TMP/err.txt" | sed 's/^/NOP-In answered: /'

log "PASS"
exit 0
