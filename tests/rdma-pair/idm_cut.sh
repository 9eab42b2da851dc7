#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-initiator in guest B, idm-target in guest A; the link is cut for
# CUT_S (30) seconds while --verify or --bench runs. It must end with the
# session recovered, the data verified and no I/O error.
# Usage: idm_cut.sh verify|bench tcp|iser IDM-INITIATOR IDM-TARGET
MODE=${1:?usage: $0 verify|bench tcp|iser idm-initiator idm-target}
PROV=${2:?}
INI=${3:?}
TGT=${4:?}
CUT_NAME=idm-cut-$MODE-$PROV
# shellcheck source=cut-lib.sh
. "$(dirname "$0")/cut-lib.sh"
IQN=iqn.2026-11.org.libidm:pair-cut
scheme=iscsi
[ "$PROV" = iser ] && scheme=iser
start_idm_target "$TGT" "$IQN" "$PROV"
if [ "$MODE" = verify ]; then
	# long enough under TCG to still run when the cut starts
	args=(--verify 256M --verify-io 64k)
else
	args=(--bench --duration $((CUT_S + 30)) --read-pct 50 --bs 64k)
fi
t0=$(now)
timeout -k 5 110 "$INI" -q --no-discovery -v "${args[@]}" \
	"$scheme://$IDM_PAIR_A_IP/$IQN/1" >"$TMP/out" 2>"$TMP/err" &
pid=$!
cut_during "$pid" "$TMP/err" "full feature phase"
wait "$pid"
rc=$?
say "idm-initiator exit status $rc after $(since "$t0" "$(now)") s"
cat "$TMP/out" | tail -n 12 | sed 's/^/  | /'
report_idm "$TMP/err"
[ $rc -eq 0 ] || { tail -n 20 "$TMP/err"; fail "exit status $rc"; }
if [ "$MODE" = verify ]; then
	grep -q "verify: .*: OK" "$TMP/out" || fail "data not verified"
fi
grep -Eq " error: " "$TMP/err" && { grep " error: " "$TMP/err" | head; fail "I/O errors"; }
say "PASS"
