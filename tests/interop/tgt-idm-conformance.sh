#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# libiscsi's iscsi-test-cu --dataloss --test=ALL against stock tgtd and
# against tgtd on libidm (contrib/tgt), both on 127.0.0.1 with one
# file-backed LUN each, on different ports and control ports. Fails if a
# test stock tgtd passes fails (or does not run) on tgtd-on-libidm; prints
# both results side by side and names the tests that differ.
# Usage: tgt-idm-conformance.sh [WORKDIR of build-tgt-idm.sh]
#        (or TGT_IDM_WORK, or TGTD_IDM/TGTD_STOCK/TGTADM_IDM set)
# shellcheck disable=SC2034,SC2154 # IDM_TEST_NAME is read by the lib; URL_*, PID_* set by start_tgtd
IDM_TEST_NAME=tgt-idm-conformance
# shellcheck source-path=SCRIPTDIR source=tgt-idm-lib.sh
. "$(dirname "$0")/tgt-idm-lib.sh"
need iscsi-test-cu libiscsi-bin
find_tgt_idm "${1:-}"
[ -n "$TGTD_STOCK" ] || skip "no stock tgtd (Debian package tgt, or build-tgt-idm.sh --stock)"

log "starting stock tgtd and tgtd-on-libidm"
start_tgtd stock "$TGTD_STOCK" 1 256M || fail "stock tgtd did not start"
start_tgtd idm "$TGTD_IDM" 2 256M || fail "tgtd-on-libidm did not start"

# Both at once: the runs mostly wait on timers, each has its own tgtd and
# LUN, and side by side they take the wall time of one.
log "iscsi-test-cu --test=ALL against stock tgtd and tgtd-on-libidm, side by side"
timeout -k 5 240 iscsi-test-cu --dataloss --test=ALL "$URL_stock" >"$TMP/stock.out" 2>&1 &
run_stock=$!
timeout -k 5 240 iscsi-test-cu --dataloss --test=ALL "$URL_idm" >"$TMP/idm.out" 2>&1 || true
wait "$run_stock" || true
kill -0 "$PID_stock" 2>/dev/null || { tail -20 "$TMP/tgtd-stock.log"; fail "stock tgtd died"; }
kill -0 "$PID_idm" 2>/dev/null || { tail -20 "$TMP/tgtd-idm.log"; fail "tgtd-on-libidm died"; }

read -r spass stotal < <(summary "$TMP/stock.out")
read -r ipass itotal < <(summary "$TMP/idm.out")
compare_runs "iscsi-test-cu --test=ALL" "${spass:-?}/${stotal:-?}" "${ipass:-?}/${itotal:-?}"
if [ -z "$stotal" ] || [ "$stotal" -lt 100 ]; then
	tail -20 "$TMP/stock.out"
	fail "the reference run against stock tgtd did not complete"
fi
if [ -n "$WORSE" ]; then
	printf 'passing on stock tgtd, not on tgtd-on-libidm:\n%s\n' "$WORSE"
	tail -30 "$TMP/tgtd-idm.log"
	fail "tgtd-on-libidm fails tests stock tgtd passes"
fi
echo "PASS: tgtd-on-libidm passes every test stock tgtd passes"
