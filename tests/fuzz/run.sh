#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# One libFuzzer pass of a harness: run.sh EXE SEEDS RUNS MAX_LEN [DICT]
# Fuzzes for RUNS executions starting from the seed corpus SEEDS (read
# only: what the pass learns goes to a temporary directory, never into
# the source tree), with DICT as its
# dictionary when given. Exit 0: no crash, leak or timeout. On a finding
# the input that caused it is kept in $FUZZ_ARTIFACTS (default: the
# current directory) and named in the output; replay it with
# `EXE FILE`. FUZZ_SEED fixes the random seed (default 1, so that the CI
# pass is repeatable; 0 picks one).
set -eu
if [ $# -lt 4 ]; then
    echo "usage: $0 EXE SEEDS RUNS MAX_LEN [DICT]" >&2
    exit 2
fi
exe=$1 seeds=$2 runs=$3 max_len=$4 dict=${5:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/idm-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
artifacts=${FUZZ_ARTIFACTS:-$PWD}
mkdir -p "$artifacts"
set -- -runs="$runs" -max_len="$max_len" -seed="${FUZZ_SEED:-1}" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$(basename "$exe")-"
if [ -n "$dict" ]; then set -- "$@" -dict="$dict"; fi
# detect_leaks: a harness that leaks is a finding too
rc=0
ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=1 \
    "$exe" "$@" "$work" "$seeds" || rc=$?
exit "$rc"
