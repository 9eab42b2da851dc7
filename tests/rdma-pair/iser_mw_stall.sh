#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# iser_mw_stall.sh IDM_INITIATOR IDM_TARGET: idm-initiator in guest B
# against idm-target in guest A, across the emulated link, with memory
# window STags (IDM_ISER_STAG=mw, the default): a mixed 64 KiB benchmark
# and a 16 MiB verify. Across a link rxe retransmits now and then; before
# the provider made binds wait for an idle send queue on rxe, a rewind with
# an executed bind in it wedged the initiator's send queue after a few
# dozen to a few hundred I/Os (doc/iser.md, "Memory window binds on
# soft-RoCE"). Passes when both runs complete; prints the I/O count, the
# time and what the wire counters saw (retries, RNR NAKs).
set -u
INI=${1:?usage: $0 idm-initiator idm-target}
TGT=${2:?usage: $0 idm-initiator idm-target}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=/dev/null
. "${IDM_PAIR_LIB:-$here/../rdma-vm/pair-lib.sh}"
pair_require
IQN=iqn.2026-11.org.libidm:pair-mw
URL=iser://$IDM_PAIR_A_IP/$IQN/1
export IDM_ISER_STAG=mw
fail=0

pair_a_start tgt "$TGT" -p "$IDM_PAIR_A_IP:3260" -P iser -t "$IQN" -l ram:64M ||
	{ echo "FAIL: cannot start idm-target in A"; exit 1; }
if ! pair_a_wait_log tgt 'listening on' 60; then
	echo "FAIL: idm-target did not listen"; cat "$(pair_a_log tgt)"; exit 1
fi

run() { # run LABEL ARGS...: one idm-initiator run, bounded
	local label=$1 t0 rc
	shift
	pair_wire_begin
	t0=$(date +%s.%N)
	timeout -k 5 120 "$INI" -v -q --no-discovery "$@" "$URL" \
		> "$PAIR_TMP/$label.out" 2> "$PAIR_TMP/$label.log"
	rc=$?
	echo "$label: exit status $rc after $(echo "$(date +%s.%N) - $t0" | bc | cut -c1-6) s"
	grep -E '^ (all|read|write) |^verify' "$PAIR_TMP/$label.out"
	pair_wire_end "$label"
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: $label: idm-initiator exit status $rc"
		tail -n 12 "$PAIR_TMP/$label.log"
		fail=1
	fi
}
run mw-bench --bench --duration 20 --rw-mix 50 -b 64k
run mw-verify --verify 16M
pair_a_stop tgt > /dev/null
[ "$fail" = 0 ] && echo "PASS: memory window STags across the link"
exit "$fail"
