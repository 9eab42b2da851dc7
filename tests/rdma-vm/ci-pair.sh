#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Run every meson test of suite 'rdma-pair' in guest B of ONE two-guest
# boot (vm-pair), then summarise what crossed the link.
#
#   tests/rdma-vm/ci-pair.sh [BUILD_DIR]        (default: build)
#
# Builds nothing: BUILD_DIR must already be built on the host. Results:
#   BUILD_DIR/meson-logs/testlog-rdma-pair.json (and .txt)  meson's log
#   BUILD_DIR/meson-logs/rdma-pair.pcap        every frame, snap length
#                                              IDM_PAIR_SNAPLEN (400: whole
#                                              CM MADs and iSER headers)
#   BUILD_DIR/meson-logs/rdma-pair-wire.txt    the capture's summary per RC
#                                              connection (pair-pcap-summary.sh)
# Exit status: meson's, or vm-pair's 124/125 when a guest itself failed.
# The guests are stopped after IDM_VM_TIMEOUT s (3300, about 2.5 times the
# suite's time beside CI's other lanes on a quiet host; inside CI's 3600).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd -P)
build=$(cd "${1:-build}" && pwd -P)
[ -f "$build/build.ninja" ] || { echo "ci-pair.sh: $build is not a meson build dir" >&2; exit 2; }
logs=$build/meson-logs
mkdir -p "$logs"
rm -f "$logs/testlog-rdma-pair.json" "$logs/testlog-rdma-pair.txt" "$logs/rdma-pair.pcap" \
	"$logs/rdma-pair-wire.txt"

cd "$src"
start=$(date +%s)
rc=0
"$here/vm-pair" --share "$build" --timeout "${IDM_VM_TIMEOUT:-3300}" \
	--pcap "$logs/rdma-pair.pcap" --snaplen "${IDM_PAIR_SNAPLEN:-400}" -- \
	meson test -C "$build" --suite rdma-pair --no-rebuild --print-errorlogs \
	--logbase testlog-rdma-pair ${IDM_PAIR_TESTS:-} || rc=$?
guest=$(( $(date +%s) - start ))

if [ -s "$logs/rdma-pair.pcap" ]; then
	t=$(date +%s)
	src_rc=0
	"$here/pair-pcap-summary.sh" "$logs/rdma-pair.pcap" > "$logs/rdma-pair-wire.txt" 2>&1 || src_rc=$?
	echo "ci-pair.sh: the link, from $logs/rdma-pair.pcap ($(du -h "$logs/rdma-pair.pcap" | cut -f1); summary took $(( $(date +%s) - t )) s, status $src_rc):"
	sed 's/^/wire| /' "$logs/rdma-pair-wire.txt"
fi
# One line with what recovery can hide: the capture's NAKs and 0-byte
# Sends (doc/iser.md), and the connections idm-initiator lost and
# recovered (the recoveries[...] lines of the tests, tests/rdma-pair/lib.sh).
if [ -s "$logs/testlog-rdma-pair.txt" ]; then
	lost=$(sed -n 's/^recoveries\[[^]]*\]: \([0-9]*\) connection(s) lost, \([0-9]*\) recovered$/\1 \2/p' \
		"$logs/testlog-rdma-pair.txt" | awk '{l += $1; r += $2} END {printf "%d lost, %d recovered", l, r}')
	wire=$(sed -n 's/^total: //p' "$logs/rdma-pair-wire.txt" 2>/dev/null)
	echo "ci-pair.sh: counted: idm-initiator connections ${lost}; capture: ${wire:-no summary}"
fi
echo "ci-pair.sh: rdma-pair suite finished with status $rc in $(( $(date +%s) - start )) s (guests $guest s)" >&2
exit "$rc"
