#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-initiator in B against LIO's iSER target (ib_isert) in A, across the
# link: LIO set up in A through configfs (tests/iser-interop/lio.sh), then
# discovery and login, a 32 MiB verify with the default keys and with
# InitialR2T=Yes ImmediateData=No (every byte by RDMA Read), a 3 s mixed
# benchmark and a new session after it.
# Usage: lio_target.sh PATH/TO/idm-initiator
IDM_TEST_NAME=idm-pair-lio
INI=${1:?usage: $0 idm-initiator}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../iser-interop" && pwd)
IQN=iqn.2026-11.org.libidm:pair-lio
LIO_PORT=3260

# In A: lio.sh's setup, then wait; TERM undoes it (lib.sh's cleanup).
pair_a_start lio bash -c ". '$HERE/lib.sh'; . '$HERE/lio.sh'; IP=\$IDM_RDMA_IP; lio_start $IQN 64 $LIO_PORT && echo LIO-READY; sleep 100000 & wait"
CLEANUP_CMDS+=("pair_a_stop lio")
pair_a_wait_log lio 'LIO-READY|SKIP|FAIL' 120 || fail "LIO did not come up in A"
if grep -q SKIP "$(pair_a_log lio)"; then
	skip "in A: $(grep SKIP "$(pair_a_log lio)")"
fi
grep -q LIO-READY "$(pair_a_log lio)" || { cat "$(pair_a_log lio)"; fail "LIO setup in A"; }
sed 's/^/   | A: /' "$(pair_a_log lio)"
URL=iser://$A_IP:$LIO_PORT
PAIR_DIAG_JOBS+=(lio)

run_ini() {
	local secs=$1
	shift
	run_bounded "$secs" "$TMP/out" "$INI" "$@"
}
expect_out() { grep -q -- "$1" "$TMP/out" || fail "idm-initiator output lacks '$1'"; }

pair_wire_begin
log "discovery, login, 32 MiB verify (1 MiB I/Os)"
run_ini 240 -t 30 --verify 32M --verify-io 1m "$URL" || fail "verify against LIO"
expect_out "Target: $IQN"
expect_out "via iser"
expect_out "vendor 'LIO-ORG'"
expect_out "verify: wrote 32.0 MiB.*: OK"

log "32 MiB verify, InitialR2T=Yes ImmediateData=No (all data by RDMA Read)"
run_ini 240 -t 30 --no-discovery --initial-r2t yes --immediate-data no --verify 32M \
	"$URL/$IQN/0" || fail "solicited-only verify against LIO"
expect_out "verify: wrote 32.0 MiB.*: OK"

log "benchmark: 3 s, 64 KiB, QD 8, 50% reads"
run_ini 90 -t 30 -q --no-discovery --bench --duration 3 --bs 64k --qd 8 --read-pct 50 \
	"$URL/$IQN/0" || fail "benchmark against LIO"
grep -Eq '^ 65536 +[1-9][0-9]* ' "$TMP/out" || fail "benchmark completed no I/O"

run_ini 90 -t 30 -q --no-discovery --verify 1M "$URL/$IQN/0" || fail "LIO after the benchmark"
expect_out ": OK"
pair_wire_end lio
log "PASS"
