#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The long fuzzing run of one harness: run-long.sh HARNESS EXECS [BUILD]
#   HARNESS  params, keys, scsi, target, tcp_target, tcp_initiator,
#            iser_parser (tests/fuzz/fuzz_HARNESS.c)
#   EXECS    executions, e.g. 10000000
#   BUILD    a build directory set up with -Dfuzz=true (default build-fuzz):
#            CC=clang meson setup build-fuzz -Dfuzz=true && ninja -C build-fuzz
# Takes -max_len and the dictionary from the harness's CI test (meson
# introspect), so both runs fuzz the same way. Runs at nice 10 with a
# random seed; the corpus it grows is kept in BUILD/fuzz-corpus/HARNESS
# (the seeds in the source tree are read, never written) and a crashing
# input lands in BUILD/fuzz-artifacts/. Ends with one line:
#   HARNESS: N executions in S s (R exec/s), cov C ft F, 0 crashes
# and exits non-zero on a crash, leak or timeout.
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 HARNESS EXECS [BUILD]" >&2
    exit 2
fi
name=$1 execs=$2 build=${3:-build-fuzz}
# cmd of test fuzz-NAME: run.sh EXE SEEDS RUNS MAX_LEN DICT
args=$(meson introspect --tests "$build" | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["name"] == "fuzz-" + sys.argv[1] and len(t["cmd"]) >= 6:
        print("\n".join(t["cmd"][1:6] + [t["env"].get("IDM_PROVIDER_PATH", "")]))
        break
' "$name")
if [ -z "$args" ]; then
    echo "$build has no libFuzzer harness '$name' (was it set up with -Dfuzz=true?)" >&2
    exit 2
fi
exe=$(echo "$args" | sed -n 1p)
seeds=$(echo "$args" | sed -n 2p)
max_len=$(echo "$args" | sed -n 4p)
dict=$(echo "$args" | sed -n 5p)
# the providers of the build tree (the tcp harnesses load tcp)
IDM_PROVIDER_PATH=$(echo "$args" | sed -n 6p)
export IDM_PROVIDER_PATH
corpus=$build/fuzz-corpus/$name
artifacts=$build/fuzz-artifacts
mkdir -p "$corpus" "$artifacts"
log=$build/meson-logs/fuzz-long-$name.log
set -- -runs="$execs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$name-"
if [ -n "$dict" ]; then set -- "$@" -dict="$dict"; fi
echo "nice -n 10 $exe $* $corpus $seeds  (log: $log)"
rc=0
start=$(date +%s)
ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=1 \
    nice -n 10 "$exe" "$@" "$corpus" "$seeds" >"$log" 2>&1 || rc=$?
secs=$(( $(date +%s) - start ))
n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
last=$(grep -E '^#[0-9]+' "$log" | tail -1)
cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
crashes=0
if [ "$rc" -ne 0 ]; then
    crashes=1
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" >&2 || tail -20 "$log" >&2
fi
echo "$name: ${n:-?} executions in $secs s ($(( ${n:-0} / (secs > 0 ? secs : 1) )) exec/s), cov ${cov:-?} ft ${ft:-?}, $crashes crashes"
exit "$rc"
