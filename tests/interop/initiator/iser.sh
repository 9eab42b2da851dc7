#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-initiator over iSER (iser:// URL) against idm-target --provider iser,
# on a real (soft-RoCE) RDMA device: discovery, login with RDMAExtensions,
# a verified write/read-back with InitialR2T both ways, a short benchmark.
# Runs in suite 'rdma', inside the guest of tests/rdma-vm/ci.sh, which sets
# IDM_RDMA_IP; anywhere else it skips.
# Usage: iser.sh PATH/TO/idm-initiator PATH/TO/idm-target
IDM_TEST_NAME=idm-ini-iser
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
INI=${1:?usage: $0 idm-initiator idm-target}
TGT=${2:?usage: $0 idm-initiator idm-target}
[ -n "${IDM_RDMA_IP:-}" ] ||
	skip "no RDMA device: IDM_RDMA_IP is set only in the soft-RoCE guest (tests/rdma-vm/ci.sh)"

IQN=iqn.2026-11.org.libidm:ini-iser
log "starting idm-target (iSER) on $IDM_RDMA_IP"
# soft-RoCE has no loopback: the initiator comes from $IDM_RDMA_IP, which
# a target without CHAP serves only with --allow-all
start_target "$IDM_RDMA_IP:0" 30 --provider iser --target-name "$IQN" --lun ram:32M --allow-all
URL=iser://$IDM_RDMA_IP:$PORT
INI_TIMEOUT=${IDM_ISER_TIMEOUT:-300}

log "discovery, login, listing, 8 MiB verify"
run_ini -t 30 --verify 8M "$URL" || fail "iSER verify"
expect_out "via iser"
expect_out "RDMAExtensions=Yes"
expect_out "verify: wrote 8.0 MiB.*: OK"

log "8 MiB verify with InitialR2T=Yes ImmediateData=No (RDMA Read of all data)"
run_ini -t 30 --no-discovery --initial-r2t yes --immediate-data no --verify 8M \
	--verify-io 1m "$URL/$IQN/1" || fail "iSER verify, solicited data only"
expect_out "ImmediateData=No InitialR2T=Yes"
expect_out ": OK"

log "benchmark: 2 s, 64 KiB, QD 8, 50% reads"
run_ini -t 30 -q --bench --duration 2 --bs 64k --qd 8 --read-pct 50 "$URL/$IQN/1" ||
	fail "iSER benchmark"
expect_out "Provider: iser"
log "PASS"
