#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# libiscsi's user-space iSER initiator (iser:// URLs of Debian's
# libiscsi-bin) against idm-target --provider tcp,iser: iscsi-inq,
# iscsi-readcapacity16 must give the answers of the target's
# configuration; iscsi-perf (random reads, then 64 KiB reads) must run
# for its bounded time and report a rate. The same portal must serve
# iscsi:// too (one port, both RDMA CM and TCP port spaces).
# Usage: libiscsi_tools.sh PATH/TO/idm-target
IDM_TEST_NAME=idm-iser-libiscsi
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
IDM_TARGET=${1:?usage: $0 idm-target}
need_rdma
for t in iscsi-inq iscsi-readcapacity16 iscsi-perf; do
	need "$t" libiscsi-bin
done

IQN=iqn.2026-11.org.libidm:libiscsi-iser
# (the later --provider wins over start_idm_target's "iser")
start_idm_target "$IQN" ram:64M --provider tcp,iser
URL=iser://$IP:$PORT/$IQN/1

fails=0
# expect WHAT PATTERN SECS CMD...: CMD's output must match PATTERN.
expect() {
	local what=$1 pat=$2 secs=$3
	shift 3
	log "$what: $*"
	if run_bounded "$secs" "$TMP/out" "${PEER[@]}" "$@" && tr '\r' '\n' <"$TMP/out" | grep -Eq -- "$pat"; then
		echo "ok   $what"
	else
		echo "FAIL $what: wanted /$pat/"
		fails=$((fails + 1))
	fi
	target_alive
}

# (no iscsi-ls: libiscsi 1.19 takes only iscsi:// portal URLs there)
expect "iscsi-inq standard page" "Vendor:LIBIDM" 60 iscsi-inq "$URL"
expect "iscsi-inq VPD 0x83 target name" "Designator:\[$IQN\]" 60 iscsi-inq -e 1 -c 131 "$URL"
expect "iscsi-readcapacity16 size" "^Total size:67108864$" 60 iscsi-readcapacity16 "$URL"
expect "iscsi-readcapacity16 block size" "LOGICAL BLOCK LENGTH IN BYTES:512" 60 \
	iscsi-readcapacity16 "$URL"
expect "iscsi-inq over TCP on the same portal" "Vendor:LIBIDM" 60 \
	iscsi-inq "iscsi://$IP:$PORT/$IQN/1"
# iscsi-perf runs until -t seconds have passed and prints the average.
expect "iscsi-perf 5 s, random 4 KiB reads, 16 in flight" "iops average [1-9][0-9]*" 90 \
	iscsi-perf -t 5 -m 16 -r "$URL"
expect "iscsi-perf 5 s, 64 KiB reads, 16 in flight" "iops average [1-9][0-9]*" 90 \
	iscsi-perf -t 5 -m 16 -b 128 "$URL"
rate=$(tr '\r' '\n' <"$TMP/out" | grep -Eo 'iops average [0-9]+ \([0-9]+ MB/s\)' | tail -1)
log "libiscsi iscsi-perf over iSER, 64 KiB reads: ${rate:-?}"

if [ "$fails" -ne 0 ]; then
	echo "--- idm-target log:"
	tail -n 30 "$TMP/target.log"
	fail "$fails check(s) failed"
fi
log "PASS"
