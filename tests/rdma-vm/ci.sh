#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Run every meson test of suite 'rdma' in ONE soft-RoCE guest boot, and
# optionally, before them, the iSER provider's own tests of an
# AddressSanitizer/UBSan build in the same boot.
#
#   tests/rdma-vm/ci.sh [BUILD_DIR [ASAN_BUILD_DIR]]   (default: build)
#
# Builds nothing: the build dirs must already be built (on the host, where
# the compiler is fast; the guest runs 15-30x slower under TCG). Results
# land in BUILD_DIR/meson-logs/testlog-rdma.json and
# ASAN_BUILD_DIR/meson-logs/testlog-rdma-asan.json (and .txt); the exit
# status is the first failing meson's (or vm-run's 124/125 when the guest
# itself failed).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd -P)
build=$(cd "${1:-build}" && pwd -P)
[ -f "$build/build.ninja" ] || { echo "ci.sh: $build is not a meson build dir" >&2; exit 2; }
mkdir -p "$build/meson-logs"
rm -f "$build/meson-logs/testlog-rdma.json"
asan=
shares=(--share "$build")
if [ -n "${2:-}" ]; then
	asan=$(cd "$2" && pwd -P)
	[ -f "$asan/build.ninja" ] || { echo "ci.sh: $asan is not a meson build dir" >&2; exit 2; }
	mkdir -p "$asan/meson-logs"
	rm -f "$asan/meson-logs/testlog-rdma-asan.json"
	shares+=(--share "$asan")
fi

# What runs inside the guest: $1 the build, $2 the sanitizer build or "".
# The sanitizer pass runs first and covers the provider's own tests
# (conformance, loopback, faults, STag hygiene, fallback), not the interop
# scripts whose peers are other people's programs, nor the destructive
# faults: those flap the link and kill processes, after which rxe refuses
# new connections for a while, so they run once, last, in the gcc suite
# (meson priority -100).
guest_script='rc=0
if [ -n "$2" ]; then
	meson test -C "$2" --no-rebuild --print-errorlogs \
		--timeout-multiplier 3 --logbase testlog-rdma-asan \
		test_loopback_iser test_iser_loopback test_iser_faults \
		test_iser_stag test_iser_fallback_rdma test_iser_move || rc=$?
fi
# IDM_CU_NO_LIO: iser-iscsi-test-cu-vs-idm-target without its LIO
# reference, which judges nothing and whose teardown has hung (why: the
# head of tests/iser-interop/iscsi_test_cu.sh)
IDM_CU_NO_LIO=1 meson test -C "$1" --suite rdma --no-rebuild --print-errorlogs \
	--logbase testlog-rdma || { r=$?; [ "$rc" -ne 0 ] || rc=$r; }
exit "$rc"'

cd "$src"
start=$(date +%s)
rc=0
# The guard: about twice what the whole suite takes with CI's other lanes
# beside it on a quiet 2-core host (2200 s), since a loaded host starves
# the emulated CPU first; CI's own timeout (4500) is above it.
"$here/vm-run" "${shares[@]}" --timeout "${IDM_VM_TIMEOUT:-4200}" -- \
	bash -c "$guest_script" rdma-ci "$build" "$asan" || rc=$?
echo "ci.sh: rdma suite finished with status $rc in $(( $(date +%s) - start )) s" >&2
exit "$rc"
