#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-initiator in B -> idm-target in A over iSER across the link, with
# the initiator's STags as memory windows (IDM_ISER_STAG=mw, the default)
# or plain MR rkeys (=mr): 10,000 I/Os of mixed sizes (512 B .. 64 KiB,
# in turn: 5,000 writes, then 5,000 reads), every byte verified. Prints
# the wire counters the run caused (RNR NAKs, sequence NAKs, retries).
# Usage: idm_stag.sh mw|mr PATH/TO/idm-initiator PATH/TO/idm-target
IDM_TEST_NAME=idm-pair-stag
MODE=${1:?usage: $0 mw|mr idm-initiator idm-target}
INI=${2:?}
IDM_TARGET=${3:?}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# both sides: jobs in A carry this environment
export IDM_ISER_STAG=$MODE

SIZES=4k,512,16k,1k,64k,8k,2k,32k # 130,560 bytes per round
ROUNDS=625                        # x 8 sizes = 5,000 I/Os per pass
IQN=iqn.2026-11.org.libidm:pair-stag-$MODE
pair_idm_target tgt "$IQN" ram:128M
pair_wire_begin
log "IDM_ISER_STAG=$MODE: 10,000 verified I/Os ($SIZES in turn) B -> A"
rc=0
run_bounded 600 "$TMP/out" env IDM_ISER_STAG="$MODE" "$INI" -q -t 30 --no-discovery \
	--verify $((ROUNDS * 130560)) --verify-io "$SIZES" "iser://$A_IP:$PORT/$IQN/1" || rc=$?
pair_wire_end "stag-$MODE"
pair_recoveries "stag-$MODE" "$TMP/out"
pair_a_alive tgt
[ $rc -eq 0 ] || {
	echo "--- idm-target's log (A), last lines:"
	tail -n 20 "$(pair_a_log tgt)"
	fail "IDM_ISER_STAG=$MODE: the verified 10,000 I/Os failed (status $rc)"
}
grep -q "verify: wrote .*: OK" "$TMP/out" || fail "no verify OK line"
log "PASS"
