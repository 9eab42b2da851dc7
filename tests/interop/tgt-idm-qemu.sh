#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# QEMU's iscsi block driver (libiscsi inside QEMU's block layer) against
# tgtd on libidm (contrib/tgt): qemu-img info, qemu-io pattern writes of
# 512 B to 4 MiB (aligned to 4 KiB and not) read back with -P, and a
# qemu-img convert of a random file onto the LUN and back (tests/lib/qemu.sh;
# the same checks run against idm-target in target/qemu.sh).
# Usage: tgt-idm-qemu.sh [WORKDIR of build-tgt-idm.sh]
# shellcheck disable=SC2034,SC2154,SC2016 # FAIL_DIAG is eval'd later; IDM_TEST_NAME is read by the lib; URL_*, PID_* set by start_tgtd
IDM_TEST_NAME=tgt-idm-qemu
# shellcheck source-path=SCRIPTDIR source=tgt-idm-lib.sh
. "$(dirname "$0")/tgt-idm-lib.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/qemu.sh
. "$(dirname "$0")/../lib/qemu.sh"
find_tgt_idm "${1:-}"
need_qemu_iscsi

start_tgtd idm "$TGTD_IDM" 4 64M || fail "tgtd-on-libidm did not start"
alive() {
	kill -0 "$PID_idm" 2>/dev/null && return 0
	tail -20 "$TMP/tgtd-idm.log"
	die "tgtd-on-libidm died"
}
FAIL_DIAG='tail -20 "$TMP/tgtd-idm.log"'
qemu_checks "$URL_idm" $((64 << 20)) alive
echo "PASS: QEMU's iscsi driver against tgtd-on-libidm"
