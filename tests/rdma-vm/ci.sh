#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Run every meson test of suite 'rdma' in ONE soft-RoCE guest boot.
#
#   tests/rdma-vm/ci.sh [BUILD_DIR]      (default: build)
#
# Builds nothing: BUILD_DIR must already be built (on the host, where the
# compiler is fast; the guest runs 15-30x slower under TCG). Results land in
# BUILD_DIR/meson-logs/testlog-rdma.json (and .txt); the exit status is
# meson's (or vm-run's 124/125 when the guest itself failed).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd -P)
build=$(cd "${1:-build}" && pwd -P)
[ -f "$build/build.ninja" ] || { echo "ci.sh: $build is not a meson build dir" >&2; exit 2; }
mkdir -p "$build/meson-logs"
rm -f "$build/meson-logs/testlog-rdma.json"

cd "$src"
start=$(date +%s)
rc=0
"$here/vm-run" --share "$build" --timeout "${IDM_VM_TIMEOUT:-1500}" -- \
	meson test -C "$build" --suite rdma --no-rebuild --print-errorlogs \
	--logbase testlog-rdma || rc=$?
echo "ci.sh: rdma suite finished with status $rc in $(( $(date +%s) - start )) s" >&2
exit "$rc"
