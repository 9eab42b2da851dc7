#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-target --shared-recv yes (one shared receive queue per device) under
# idm-initiator over iSER: a verified write/read-back with immediate and
# unsolicited data, then a burst of unsolicited data over many sessions
# at once (16 sessions, QD 4, 256 KiB writes: 32 Sends of 8 KiB a
# command, up to 2048 Sends in flight, half the queue's cap of 4096),
# which must find the shared queue never empty: the provider's account at
# the end says it never ran dry, and rxe counted no receiver-not-ready
# NAK. Suite 'rdma', in the soft-RoCE guest.
# Usage: iser_srq.sh PATH/TO/idm-initiator PATH/TO/idm-target
IDM_TEST_NAME=idm-ini-iser-srq
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
INI=${1:?usage: $0 idm-initiator idm-target}
TGT=${2:?usage: $0 idm-initiator idm-target}
[ -n "${IDM_RDMA_IP:-}" ] ||
	skip "no RDMA device: IDM_RDMA_IP is set only in the soft-RoCE guest (tests/rdma-vm/ci.sh)"

HWC=/sys/class/infiniband/${IDM_RDMA_DEV:-rxe0}/ports/1/hw_counters
rnr_counters() {
	local c out=
	for c in rcvd_rnr_err send_rnr_err; do
		[ -r "$HWC/$c" ] && out+="$c=$(cat "$HWC/$c") "
	done
	echo "$out"
}

IQN=iqn.2026-11.org.libidm:ini-iser-srq
KEYS=(--immediate-data yes --initial-r2t no --first-burst 256k --target-recv-dsl 256k)
start_target "$IDM_RDMA_IP:0" 30 --provider iser --target-name "$IQN" --lun ram:64M \
	--allow-all --shared-recv yes -v
URL=iser://$IDM_RDMA_IP:$PORT/$IQN/1
INI_TIMEOUT=${IDM_ISER_TIMEOUT:-300}
RNR0=$(rnr_counters)

log "8 MiB verify with immediate and unsolicited data"
run_ini -t 30 --no-discovery "${KEYS[@]}" --verify 8M --verify-io 1m "$URL" ||
	fail "iSER verify with a shared receive queue"
expect_out ": OK"
# the target offers no more than its shared buffers take
expect_out "TargetRecvDataSegmentLength=8192"

log "burst: 16 sessions, QD 4, 256 KiB writes, all first bursts unsolicited"
run_ini -t 60 -q --no-discovery "${KEYS[@]}" --bench --sessions 16 --qd 4 --bs 256k \
	--read-pct 0 --duration 3 "$URL" || fail "iSER burst over 16 sessions"
stop_pid "$TGT_PID"
srq=$(grep -Eo 'shared receive queue: [0-9]+ buffers of [0-9]+ bytes at most, ran dry [0-9]+ times' \
	"$TMP/target.log" | tail -n 1)
log "target: $srq"
[ -n "$srq" ] || fail "idm-target logged no shared receive queue"
[[ $srq == *"ran dry 0 times" ]] || fail "the shared receive queue ran dry: $srq"
RNR1=$(rnr_counters)
if [ -n "$RNR0" ]; then
	log "rxe RNR counters: before $RNR0; after $RNR1"
	[ "$RNR0" = "$RNR1" ] || fail "receiver-not-ready NAKs during the burst"
else
	log "rxe hw_counters not available ($HWC): RNR not checked"
fi
log "PASS"
