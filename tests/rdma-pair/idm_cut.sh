#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-initiator in guest B, idm-target in guest A; the link is cut for
# CUT_S (30) seconds while --verify or --bench runs. It must end with the
# session recovered, the data verified and no I/O error. Prints the
# detection and recovery times.
# Usage: idm_cut.sh verify|bench tcp|iser PATH/TO/idm-initiator PATH/TO/idm-target
IDM_TEST_NAME=idm-pair-cut-$1-$2
MODE=${1:?usage: $0 verify|bench tcp|iser idm-initiator idm-target}
PROV=${2:?}
INI=${3:?}
IDM_TARGET=${4:?}
# shellcheck source-path=SCRIPTDIR source=cut-lib.sh
. "$(dirname "$0")/cut-lib.sh"
IQN=iqn.2026-11.org.libidm:pair-cut
scheme=iscsi
[ "$PROV" = iser ] && scheme=iser
cut_idm_target tgt "$IQN" "$PROV"
if [ "$MODE" = verify ]; then
	# still running when the cut starts, even at TCG speed
	args=(--verify 128M --verify-io 64k)
else
	args=(--bench --duration $((CUT_S + 25)) --read-pct 50 --bs 64k)
fi
t0=$(now)
timeout -k 5 200 "$INI" -q --no-discovery -v "${args[@]}" \
	"$scheme://$A_IP:$PORT/$IQN/1" >"$TMP/out" 2>"$TMP/err" &
pid=$!
CLEANUP_CMDS+=("stop_pid $pid")
cut_during "$pid" "$TMP/err" "full feature phase"
wait "$pid"
rc=$?
log "idm-initiator exit status $rc after $(since "$t0" "$(now)") s"
tail -n 12 "$TMP/out" | sed 's/^/  | /'
report_idm "$TMP/err"
grep -E "reinstated|ended" "$(pair_a_log tgt)" | cut -c1-160 | sed 's/^/  | A: /'
[ $rc -eq 0 ] || { tail -n 20 "$TMP/err"; fail "exit status $rc"; }
if [ "$MODE" = verify ]; then
	grep -q "verify: .*: OK" "$TMP/out" || fail "data not verified"
fi
if grep -q " error: " "$TMP/err"; then
	grep " error: " "$TMP/err" | head
	fail "I/O errors"
fi
log "PASS"
