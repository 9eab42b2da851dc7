#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-initiator over iSER against LIO, the Linux kernel's iSCSI target,
# with its iSER transport (ib_isert), configured through configfs (lio.sh):
# discovery and login with RDMAExtensions=Yes, a verified 32 MiB
# write/read-back with the default keys and with solicited data only
# (every byte by RDMA Read), then the benchmark mode (reads and writes).
# Usage: lio_target.sh PATH/TO/idm-initiator
IDM_TEST_NAME=idm-iser-lio
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lio.sh
. "$(dirname "$0")/lio.sh"
INI=${1:?usage: $0 idm-initiator}
need_rdma

IQN=iqn.2026-11.org.libidm:lio-isert
LIO_PORT=${IDM_LIO_PORT:-3260}
lio_start "$IQN" 64 "$LIO_PORT"
FAIL_DIAG='echo "--- kernel log (iser, rxe, target):"; dmesg | grep -iE "isert|iser|rxe|iscsi|target|WARNING|RIP" | tail -n 30'
URL=iser://$IP:$LIO_PORT

# LIO answers TargetRecvDataSegmentLength with the initiator's offer (up
# to 256 KiB) but ib_isert posts receive buffers for 8 KiB of data only
# (ISER_RECV_DATA_SEG_LEN): a larger immediate-data Send fails LIO's
# receive ("local QP operation error") and it drops the connection.
# idm-initiator offers 8 KiB on iSER by default for that reason; the
# check below keeps it that way.

# run_ini SECS ARGS...: idm-initiator bounded; output in $TMP/out.
run_ini() {
	local secs=$1
	shift
	run_bounded "$secs" "$TMP/out" "$INI" "$@"
}
expect_out() { grep -q -- "$1" "$TMP/out" || fail "idm-initiator output lacks '$1'"; }

log "discovery, login, LUN listing, 32 MiB verify (1 MiB I/Os)"
run_ini 180 -t 30 --verify 32M --verify-io 1m "$URL" || fail "verify against LIO"
expect_out "Target: $IQN"
expect_out "via iser"
expect_out "RDMAExtensions=Yes"
expect_out "TargetRecvDataSegmentLength=8192 "
expect_out "vendor 'LIO-ORG'"
expect_out "verify: wrote 32.0 MiB.*: OK"

log "32 MiB verify, InitialR2T=Yes ImmediateData=No (all data by RDMA Read)"
run_ini 180 -t 30 --no-discovery --initial-r2t yes --immediate-data no --verify 32M \
	"$URL/$IQN/0" || fail "solicited-only verify against LIO"
expect_out "ImmediateData=No InitialR2T=Yes"
expect_out "verify: wrote 32.0 MiB.*: OK"

log "benchmark: 3 s, 64 KiB, QD 8, 50% reads"
run_ini 60 -t 30 -q --no-discovery --bench --duration 3 --bs 64k --qd 8 --read-pct 50 \
	"$URL/$IQN/0" || fail "benchmark against LIO"
expect_out "Provider: iser"
grep -Eq '^ 65536 +[1-9][0-9]* ' "$TMP/out" || fail "benchmark completed no I/O"

# LIO must still serve a new session: the benchmark's ended cleanly.
run_ini 60 -t 30 -q --no-discovery --verify 1M "$URL/$IQN/0" || fail "LIO after the benchmark"
expect_out ": OK"
log "PASS"
