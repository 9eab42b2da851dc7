#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# shellcheck disable=SC2154 # LIBISCSI_IDM_TEST_CU: set by find_libiscsi_idm
# libiscsi 1.20.0's iscsi-test-cu (built with the libidm transport,
# contrib/libiscsi) over iser:// through libidm's iser provider
# (LIBISCSI_TRANSPORT=idm) against idm-target over iSER, side by side with
# the same families over iscsi:// through libidm's tcp provider against
# the same idm-target (one portal, --provider tcp,iser): fails if a test
# that passes over TCP does not pass over iSER, if no test ran, or if
# idm-target dies. The transports differ below libiscsi only: login,
# CmdSN and SCSI are libiscsi's on both; the data moves by RDMA on one.
#
# The subset (each family one process, a login each; 3-40 s under TCG):
# the SCSI families that move data both ways and return status with and
# without sense data (TestUnitReady, Inquiry, ReadCapacity10/16,
# Read10/16, Write10/16, WriteVerify10, Verify10, CompareAndWrite,
# ModeSense6, WriteSame10) and the iSCSI families (Residuals, TMF, cmdsn,
# datasn, Nop). Not iSCSISendTargets (Invalid hangs on every transport,
# contrib/libiscsi/FINDINGS.md), nor iSCSICHAP (the target has no CHAP
# secret here). LIBISCSI_ISER_CU_FAMILIES replaces the list.
# Usage: test_cu.sh LIBISCSI-IDM-WORKDIR PATH/TO/idm-target
IDM_TEST_NAME=libiscsi-iser-test-cu
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../interop/tgt-idm-lib.sh
. "$(dirname "$0")/../interop/tgt-idm-lib.sh" # results()
IDM_TARGET=${2:?usage: $0 LIBISCSI-IDM-WORKDIR idm-target}
need_rdma
find_libiscsi_idm "$1"
[ -x "$LIBISCSI_IDM_TEST_CU" ] || skip "no iscsi-test-cu at $LIBISCSI_IDM_TEST_CU"
on_idm
FAMILIES=(SCSI.TestUnitReady SCSI.Inquiry SCSI.ReadCapacity10 SCSI.ReadCapacity16
	SCSI.Read10 SCSI.Read16 SCSI.Write10 SCSI.Write16 SCSI.WriteVerify10
	SCSI.Verify10 SCSI.CompareAndWrite SCSI.ModeSense6 SCSI.WriteSame10
	iSCSI.iSCSIResiduals iSCSI.iSCSITMF iSCSI.iSCSIcmdsn iSCSI.iSCSIdatasn
	iSCSI.iSCSINop)
[ -z "${LIBISCSI_ISER_CU_FAMILIES:-}" ] || read -r -a FAMILIES <<<"$LIBISCSI_ISER_CU_FAMILIES"

IQN=iqn.2026-11.org.libidm:libiscsi-iser-cu
start_idm_target "$IQN" ram:64M --provider tcp,iser
URL_ISER=iser://$IP:$PORT/$IQN/1
URL_TCP=iscsi://$IP:$PORT/$IQN/1

# run_set NAME URL: every family, one bounded process each; the results
# in $TMP/NAME.res ("Suite.Test passed|FAILED|?"), the transport's
# connection lines in $TMP/NAME.debug.
run_set() {
	local name=$1 url=$2 f rc t0
	: >"$TMP/$name.res"
	: >"$TMP/$name.debug"
	log "iscsi-test-cu over $name through libidm: $url"
	for f in "${FAMILIES[@]}"; do
		t0=$(elapsed)
		# line-buffered: a crash keeps the results printed before it
		timeout -k 5 "${LIBISCSI_ISER_CU_TIMEOUT:-150}" "${ON_IDM[@]}" LIBISCSI_DEBUG=2 \
			stdbuf -oL "$LIBISCSI_IDM_TEST_CU" --dataloss --test="$f" "$url" \
			>"$TMP/$name-$f.out" 2>"$TMP/$name-$f.err"
		rc=$?
		grep -E 'through libidm|libidm [a-z]* connection:' "$TMP/$name-$f.err" >>"$TMP/$name.debug"
		results "$TMP/$name-$f.out" >>"$TMP/$name.res"
		printf '   %-5s %-28s exit %3s, %s passed of %s, %.0f s\n' "$name" "$f" "$rc" \
			"$(results "$TMP/$name-$f.out" | grep -c ' passed$')" \
			"$(results "$TMP/$name-$f.out" | wc -l)" \
			"$(awk -v a="$t0" -v b="$(elapsed)" 'BEGIN { print b - a }')"
		[ "$rc" = 0 ] || grep -hE 'FAILED|Failed|failed|rror' "$TMP/$name-$f.out" "$TMP/$name-$f.err" |
			head -n 3 | cut -c1-180 | sed 's/^/      | /'
		# no result at all: the end of libiscsi's own account
		results "$TMP/$name-$f.out" | grep -q . ||
			tail -n 8 "$TMP/$name-$f.err" | cut -c1-180 | sed 's/^/      | debug: /'
		target_alive
	done
}

run_set iser "$URL_ISER"
run_set tcp "$URL_TCP"
pi=$(grep -c ' passed$' "$TMP/iser.res") ti=$(wc -l <"$TMP/iser.res")
pt=$(grep -c ' passed$' "$TMP/tcp.res") tt=$(wc -l <"$TMP/tcp.res")
[ "$ti" -gt 0 ] || fail "no iscsi-test-cu result over iSER"
[ "$tt" -gt 0 ] || fail "no iscsi-test-cu result over TCP"
grep -q 'through libidm iser' "$TMP/iser.debug" ||
	fail "the iser:// runs did not go through libidm's iser provider"
grep -q 'through libidm tcp' "$TMP/tcp.debug" ||
	fail "the iscsi:// runs did not go through libidm's tcp provider"
log "iscsi-test-cu, ${#FAMILIES[@]} families: iSER $pi/$ti passed, TCP $pt/$tt passed (both through libidm)"
bad=0
while read -r t st; do
	r=$(grep "^$t " "$TMP/iser.res" | cut -d' ' -f2)
	[ "$r" = "$st" ] && continue
	echo "   $t: TCP $st, iSER ${r:-not run}"
	[ "$st" = passed ] && bad=$((bad + 1))
done <"$TMP/tcp.res"
while read -r t st; do
	[ "$st" = passed ] || ! grep -q "^$t passed\$" "$TMP/iser.res" || continue
	[ "$st" = passed ] || echo "   fails over TCP, $(grep -q "^$t passed\$" "$TMP/iser.res" && echo passes || echo fails) over iSER: $t"
done <"$TMP/tcp.res"
# the initiator's payload copies (libidm's and the transport's) over iSER
awk '/libidm iser connection:/ {
	for (i = 1; i <= NF; i++) {
		if ($i == "copies" && $(i - 1) == "payload") c += $(i + 1)
		if ($i == "copies" && $(i - 1) == "transport") x += $(i + 1)
	}
	n++
} END { printf "%d %d %d\n", n, c, x }' "$TMP/iser.debug" >"$TMP/copies"
read -r n c x <"$TMP/copies"
echo "   initiator over iSER: $n connections, payload copies $c (libidm), $x (transport: buffers added after queueing)"
[ "$bad" = 0 ] || fail "$bad tests pass over TCP but not over iSER"
[ "$n" -gt 0 ] || fail "no iSER connection logged its counters (LIBISCSI_DEBUG=2)"
[ "$c" = 0 ] || fail "libidm copied payload on the initiator over iSER ($c copies)"
target_alive
log "PASS"
