#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# examples/run-main-job.sh as a test: it must pass and print a verified
# result and a throughput table.
# Usage: main-job.sh SOURCE_ROOT BUILD_ROOT
IDM_TEST_NAME=idm-main-job
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
SRC=${1:?usage: $0 source-root build-root}
BUILD=${2:?usage: $0 source-root build-root}
timeout -k 5 90 bash "$SRC/examples/run-main-job.sh" -B "$BUILD" --size 32M \
	--duration 2 >"$TMP/out.txt" 2>&1
rc=$?
cat "$TMP/out.txt"
[ $rc -eq 0 ] || fail "run-main-job.sh exited $rc"
expect_out "verify: wrote 32.0 MiB.*: OK"
expect_out "BW average\[MB/sec\]"
expect_out "main job: PASS"
log "PASS"
