#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-initiator in B against idm-target in A over iSER with memory window
# STags (IDM_ISER_STAG=mw, the default): a 20 s benchmark of 64 KiB I/Os,
# half of them writes, at queue depth 16, then a 16 MiB verify. Across the
# link rxe retransmits now and then; before binds waited for an idle send
# queue on rxe (doc/iser.md, "Memory window binds on soft-RoCE"), a rewind
# with an executed bind in it wedged the initiator's send queue after a
# few dozen to a few hundred I/Os: the run ended with "peer silent". Passes
# when both runs complete; prints the I/O count and the wire counters
# (completer_retry_err counts the rewinds this run survived).
# Usage: iser_mw_stall.sh PATH/TO/idm-initiator PATH/TO/idm-target
IDM_TEST_NAME=idm-pair-mw-stall
INI=${1:?usage: $0 idm-initiator idm-target}
IDM_TARGET=${2:?}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
export IDM_ISER_STAG=mw
IQN=iqn.2026-11.org.libidm:pair-mw-stall
pair_idm_target tgt "$IQN" ram:64M
URL=iser://$A_IP:$PORT/$IQN/1

pair_wire_begin
log "mixed 64 KiB benchmark, 20 s, memory window STags"
rc=0
run_bounded 120 "$TMP/bench" "$INI" -q --no-discovery --bench --duration 20 \
	--rw-mix 50 -b 64k "$URL" || rc=$?
pair_wire_end mw-bench
pair_recoveries mw-bench "$TMP/bench"
[ $rc -eq 0 ] || fail "benchmark with memory windows failed (status $rc)"

pair_wire_begin
log "16 MiB verify, memory window STags"
run_bounded 120 "$TMP/verify" "$INI" -q --no-discovery --verify 16M "$URL" || rc=$?
pair_wire_end mw-verify
pair_recoveries mw-verify "$TMP/verify"
[ $rc -eq 0 ] || fail "verify with memory windows failed (status $rc)"
grep -q "verify: wrote .*: OK" "$TMP/verify" || fail "no verify OK line"
pair_a_alive tgt
log "PASS"
