#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Session recovery over iSER on one RDMA device: idm-target is stopped
# (SIGSTOP) for 10 s while idm-initiator runs --verify (or --bench) over
# iser://. The
# RDMA transport of a stopped process keeps acknowledging, so only the
# NOP-Out ping can tell: the initiator must declare the peer dead, fail to
# reconnect while the target sleeps, reconnect when it wakes (session
# reinstatement: the target ends the old session), retry what was in
# flight, and end with the data verified and no I/O error.
# Runs in suite 'rdma' (soft-RoCE guest, IDM_RDMA_IP); skips elsewhere.
# Usage: iser_recovery.sh verify|bench PATH/TO/idm-initiator PATH/TO/idm-target
IDM_TEST_NAME=idm-ini-iser-recovery
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
MODE=${1:?usage: $0 verify|bench idm-initiator idm-target}
INI=${2:?usage: $0 verify|bench idm-initiator idm-target}
TGT=${3:?usage: $0 verify|bench idm-initiator idm-target}
[ -n "${IDM_RDMA_IP:-}" ] ||
	skip "no RDMA device: IDM_RDMA_IP is set only in the soft-RoCE guest (tests/rdma-vm/ci.sh)"

IQN=iqn.2026-11.org.libidm:ini-iser-recovery
# --allow-all: the initiator comes from $IDM_RDMA_IP (no loopback on
# soft-RoCE), which a target without CHAP serves only with it
start_target "$IDM_RDMA_IP:0" 30 --provider iser --target-name "$IQN" --lun ram:128M -v --allow-all
# a stopped target cannot end on SIGTERM: wake it first
on_exit "kill -CONT $TGT_PID"

if [ "$MODE" = verify ]; then
	args=(--verify 128M)
	started="session 0: full feature phase"
else
	args=(--bench --duration 25 --read-pct 50 --bs 64k)
	started="session 1: full feature phase" # the bench's own session
fi
log "${args[*]} over iser://, target stopped for 10 s 1 s into it"
timeout -k 5 200 "$INI" -q --no-discovery -v -t 30 --noop-out-interval 1 \
	--noop-out-timeout 2 "${args[@]}" \
	"iser://$IDM_RDMA_IP:$PORT/$IQN/1" >"$TMP/out.txt" 2>"$TMP/err.txt" &
INI_PID=$!
for ((i = 0; i < 600; i++)); do
	grep -q "$started" "$TMP/err.txt" && break
	kill -0 "$INI_PID" 2>/dev/null || break
	sleep 0.1
done
sleep 1
kill -0 "$INI_PID" 2>/dev/null || { cat "$TMP/err.txt"; fail "the initiator ended before the stall"; }
t_stop=$SECONDS
kill -STOP "$TGT_PID"
sleep 10
kill -CONT "$TGT_PID"
log "target woken after $((SECONDS - t_stop)) s"
wait "$INI_PID"
rc=$?
cat "$TMP/out.txt"
grep -E "connection lost|recovered in|reconnect attempt|failed:" "$TMP/err.txt" | cut -c1-220
[ $rc -eq 0 ] || { tail -n 30 "$TMP/err.txt"; fail "exit status $rc"; }
grep -q "dead peer: NOP-Out ping not answered within 2 s" "$TMP/err.txt" ||
	fail "the stall was not detected by the NOP-Out timeout"
grep -q "recovered in" "$TMP/err.txt" || fail "no recovery"
if [ "$MODE" = verify ]; then
	grep -q "verify: .*: OK" "$TMP/out.txt" || fail "data not verified"
fi
! grep -q " error: " "$TMP/err.txt" || fail "errors logged"
grep -E "reinstated|ended" "$TMP/target.log" | cut -c1-200
# The old connection ends either by reinstatement or, when the
# initiator's disconnect reaches the target first, by that disconnect;
# either way the old session must be gone (counted below).
grep -Eq "closing connection: session reinstated|connection ended" "$TMP/target.log" ||
	fail "idm-target did not close the old connection"
opened=$(grep -c "normal session tsih" "$TMP/target.log")
ended=$(grep -c "session tsih .* ended" "$TMP/target.log")
[ "$opened" -eq "$ended" ] || fail "idm-target opened $opened sessions, ended $ended"
log "PASS"
