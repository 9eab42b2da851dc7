#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# libiscsi's iscsi-test-cu, iSCSI family, over iser:// against
# idm-target --provider iser. Each test of the family runs in its own
# iscsi-test-cu process with its own time bound: libiscsi's iSER
# transport (1.19) can crash or hang when a test makes it reconnect, and
# one such case must not hide the results of the others. Prints the
# CUnit counts of every case and the total.
# Usage: iscsi_test_cu.sh PATH/TO/idm-target
IDM_TEST_NAME=idm-iser-test-cu
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
IDM_TARGET=${1:?usage: $0 idm-target}
need_rdma
need iscsi-test-cu libiscsi-bin

IQN=iqn.2026-11.org.libidm:test-cu-iser
start_idm_target "$IQN" ram:64M
URL=iser://$IP:$PORT/$IQN/1
# (no process substitution: the guest has no /dev/fd)
iscsi-test-cu -l 2>/dev/null | grep -E '^iSCSI\.[^.]+\.[^.]+$' >"$TMP/list"
mapfile -t tests <"$TMP/list"
[ ${#tests[@]} -gt 0 ] || fail "iscsi-test-cu lists no iSCSI tests"
log "iscsi-test-cu: ${#tests[@]} tests of the iSCSI family over $URL"

pass=0 failed=0 crashed=0
for t in "${tests[@]}"; do
	timeout -k 5 "${IDM_CU_TIMEOUT:-90}" iscsi-test-cu --dataloss --test="$t" "$URL" \
		>"$TMP/cu.out" 2>&1
	rc=$?
	# CUnit's run summary: "tests  <run> <total> <passed> <failed> ..."
	awk '/^ *tests /{print $4, $5; exit}' "$TMP/cu.out" >"$TMP/counts"
	n_ok= n_fail=
	read -r n_ok n_fail <"$TMP/counts"
	if [ "$rc" -ge 124 ] || [ -z "${n_ok:-}" ]; then
		crashed=$((crashed + 1))
		verdict="NO RESULT (iscsi-test-cu exit $rc)"
	elif [ "${n_fail:-1}" = 0 ] && [ "$n_ok" -gt 0 ]; then
		pass=$((pass + 1))
		verdict="passed"
	else
		failed=$((failed + 1))
		verdict="FAILED"
	fi
	printf '   %-44s %s\n' "$t" "$verdict"
	[ "$verdict" = passed ] || grep -E '\[FAILED\]|FAILED|CU_ASSERT' "$TMP/cu.out" | head -n 4 | sed 's/^/      | /'
	target_alive
done
log "iscsi-test-cu over iSER: ${#tests[@]} tests, $pass passed, $failed failed, $crashed without a result"
