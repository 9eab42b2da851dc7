#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# libiscsi's iscsi-test-cu, iSCSI family, over iser:// against
# idm-target --provider iser, with LIO's isert as the reference target.
#
# Each test of the family runs in its own iscsi-test-cu process with its
# own time bound: libiscsi's iSER transport (1.19, Debian bookworm) cannot
# send most of the PDUs these tests craft (an EDTL that does not match
# the CDB, CmdSN outside the window, bad DataSN), disconnects itself and
# often segfaults afterwards; one crash must not hide the other results.
# Against LIO the same binary does not even log in ("revents is not
# POLLIN"). So the counts are reported, for both targets, and the test
# fails only on what is idm-target's: it dies, logs an error, or cannot
# serve a fresh libiscsi session (iscsi-inq) after the family ran.
# IDM_CU_NO_LIO=1 leaves the LIO reference out (tests/rdma-vm/ci.sh does:
# twice LIO's teardown after the crashes above hung in the guest's kernel
# until the test's timeout, and its leftover configfs state failed the
# LIO tests after it).
# Usage: iscsi_test_cu.sh PATH/TO/idm-target
IDM_TEST_NAME="idm-iser-test-cu"
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lio.sh
. "$(dirname "$0")/lio.sh"
IDM_TARGET=${1:?usage: $0 idm-target}
need_rdma
need iscsi-test-cu libiscsi-bin
need iscsi-inq libiscsi-bin

# (no process substitution: the guest has no /dev/fd)
iscsi-test-cu -l 2>/dev/null | grep -E '^iSCSI\.[^.]+\.[^.]+$' >"$TMP/list"
mapfile -t tests <"$TMP/list"
[ ${#tests[@]} -gt 0 ] || fail "iscsi-test-cu lists no iSCSI tests"

# family NAME URL [CHECK]: run every test; sets PASS FAILED NORESULT.
# CHECK runs after each case (idm-target must still be alive).
family() {
	local name=$1 url=$2 check=${3:-} t rc n_ok n_fail verdict
	PASS=0 FAILED=0 NORESULT=0
	log "iscsi-test-cu, ${#tests[@]} tests of the iSCSI family, against $name: $url"
	for t in "${tests[@]}"; do
		timeout -k 5 "${IDM_CU_TIMEOUT:-90}" "${PEER[@]}" iscsi-test-cu --dataloss --test="$t" "$url" \
			>"$TMP/cu.out" 2>&1
		rc=$?
		# CUnit's run summary: "tests  <run> <total> <passed> <failed> ..."
		awk '/^ *tests /{print $4, $5; exit}' "$TMP/cu.out" >"$TMP/counts"
		n_ok='' n_fail=''
		read -r n_ok n_fail <"$TMP/counts"
		if [ "$rc" -ge 124 ] || [ -z "${n_ok:-}" ]; then
			NORESULT=$((NORESULT + 1))
			verdict="no result (iscsi-test-cu exit $rc)"
		elif [ "${n_fail:-1}" = 0 ] && [ "$n_ok" -gt 0 ]; then
			PASS=$((PASS + 1))
			verdict="passed"
		else
			FAILED=$((FAILED + 1))
			verdict="failed"
		fi
		printf '   %-44s %s\n' "$t" "$verdict"
		[ "$verdict" = passed ] ||
			grep -E 'FAILED|Failed|failed' "$TMP/cu.out" | head -n 2 | cut -c1-150 | sed 's/^/      | /'
		[ -z "$check" ] || $check
	done
	log "$name: ${#tests[@]} tests, $PASS passed, $FAILED failed, $NORESULT without a result"
}

IQN=iqn.2026-11.org.libidm:test-cu-iser
start_idm_target "$IQN" ram:64M
family idm-target "iser://$IP:$PORT/$IQN/1" target_alive
idm=("$PASS" "$FAILED" "$NORESULT")

log "idm-target serves a fresh libiscsi session after the family"
run_bounded 60 "$TMP/inq" "${PEER[@]}" iscsi-inq "iser://$IP:$PORT/$IQN/1" >/dev/null ||
	fail "iscsi-inq after iscsi-test-cu"
grep -q "Vendor:LIBIDM" "$TMP/inq" || fail "iscsi-inq after iscsi-test-cu: no INQUIRY data"
target_alive
if grep -E ' (error|warn):' "$TMP/target.log" | grep -v 'libidm: .*peer disconnected' >"$TMP/errors"; then
	echo "--- idm-target errors/warnings:"
	sed 's/^/   | /' "$TMP/errors" | head -n 20
fi
grep -q ' error:' "$TMP/target.log" && fail "idm-target logged errors"

lio=("-" "-" "-")
if [ -z "${IDM_CU_NO_LIO:-}" ]; then
	LIO_IQN=iqn.2026-11.org.libidm:test-cu-lio
	lio_start "$LIO_IQN" 64 "${IDM_LIO_PORT:-3260}"
	family "LIO isert" "iser://$IP:${IDM_LIO_PORT:-3260}/$LIO_IQN/0"
	lio=("$PASS" "$FAILED" "$NORESULT")
fi
echo "iscsi-test-cu --test=iSCSI over iser:// (${#tests[@]} tests; passed/failed/no result):"
echo "  idm-target: ${idm[0]}/${idm[1]}/${idm[2]}    LIO isert: ${lio[0]}/${lio[1]}/${lio[2]}"
log "PASS (idm-target survived every case; the counts above are libiscsi's)"
