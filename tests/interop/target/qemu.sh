#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# QEMU's iscsi block driver (libiscsi inside QEMU's block layer) against
# idm-target (100 MiB RAM LUN): qemu-img info, qemu-io pattern writes of
# 512 B to 4 MiB (aligned to 4 KiB and not) read back with -P, and a
# qemu-img convert of a random file onto the LUN and back (tests/lib/qemu.sh;
# the same checks run against tgtd on libidm in ../tgt-idm-qemu.sh).
# shellcheck disable=SC2034,SC2016 # IDM_TEST_NAME, IDM_TARGET, FAIL_DIAG are read by the libs
IDM_TEST_NAME=target-qemu
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
# shellcheck source-path=SCRIPTDIR source=../../lib/qemu.sh
. "$(dirname "$0")/../../lib/qemu.sh"
IDM_TARGET=$1
need_qemu_iscsi

TGT_LOG=$TMP/target.log
start_target "$TGT_LOG"
FAIL_DIAG='tail -20 "$TGT_LOG"'
qemu_checks "$URL" $((100 << 20)) target_alive
echo "PASS: QEMU's iscsi driver against idm-target"
