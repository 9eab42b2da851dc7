# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# What every shell test starts with (sourced, directly or through its
# area's lib.sh; set IDM_TEST_NAME first to name the temp dir): unset
# variables are errors, one private temp dir, whatever the test started
# undone on exit, log/fail/skip/need, a time bound for other people's
# tools. The area files add only what is theirs.

set -u
# once per shell: an area's lib.sh may source another area's (tgt-iser
# takes both iser-interop's and interop's tgt-idm-lib.sh)
[ -z "${IDM_COMMON_SOURCED:-}" ] || return 0
IDM_COMMON_SOURCED=1
# shellcheck source-path=SCRIPTDIR source=procs.sh
. "$(dirname "${BASH_SOURCE[0]}")/procs.sh"

TMP=$(mktemp -d "/tmp/${IDM_TEST_NAME:-idm-test}.XXXXXX")
# CLEANUP_CMDS: shell commands run on exit, the last added first, so
# that what was set up last is undone first (on_exit adds one).
CLEANUP_CMDS=()
# PIDS: processes stopped on exit after CLEANUP_CMDS (stop_pids), for
# the tests that simply collect what they start.
PIDS=""
on_exit() { CLEANUP_CMDS+=("$@"); }
cleanup() {
	local i
	for ((i = ${#CLEANUP_CMDS[@]} - 1; i >= 0; i--)); do
		eval "${CLEANUP_CMDS[i]}" >/dev/null 2>&1 || true
	done
	# shellcheck disable=SC2086 # one PID per word
	stop_pids $PIDS
	# never follow a mount (a test that binds something under $TMP in a
	# namespace of its own: should it ever leak out, leave it alone)
	if grep -q " $TMP/" /proc/self/mountinfo 2>/dev/null; then
		echo "warning: mounts under $TMP: not removed"
	else
		rm -rf --one-file-system "$TMP"
	fi
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 1' INT TERM

T0=$(date +%s.%N)
elapsed() { awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
log() { printf '== [%6.1f s] %s\n' "$(elapsed)" "$*"; }
# FAIL_DIAG: shell code a test sets to print what explains a failure.
FAIL_DIAG=
# die WHY: the test failed; stop here. The helpers of tests/lib use it.
die() {
	echo "FAIL: $*"
	[ -z "$FAIL_DIAG" ] || eval "$FAIL_DIAG"
	exit 1
}
# fail WHY: a check failed. Stops the test, except where the area counts
# failures and goes on (tests/cli/lib.sh).
fail() { die "$@"; }
# skip WHY: meson's "skipped" (exit status 77), saying why.
skip() { echo "SKIP: $*"; exit 77; }
# need TOOL [PACKAGE]: skip when a tool of another package is absent.
need() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 not installed${2:+ (Debian package $2)}"
}

# run_bounded SECS OUTFILE CMD...: CMD with a time bound, output to
# OUTFILE (and the test log). Returns CMD's status (124 on timeout).
run_bounded() {
	local secs=$1 out=$2 rc
	shift 2
	timeout -k 5 "$secs" "$@" >"$out" 2>&1
	rc=$?
	tr '\r' '\n' <"$out" | sed 's/^/   | /'
	[ $rc -ne 124 ] || echo "   (timed out after $secs s: $*)"
	return $rc
}

# run_expect WHAT WANT_RC PATTERN CMD...: CMD (within 20 s, scaled) must exit
# WANT_RC with its stdout+stderr, left in $TMP/out, matching the extended
# regex PATTERN. Says "ok" with the first matching line and returns 0,
# or shows what CMD printed and returns 1: the areas that count failures
# and go on wrap it (tests/cli's expect_run, tests/interop/target's
# expect_rc).
run_expect() {
	local what=$1 want=$2 pat=$3 rc
	shift 3
	timeout "$(scaled 20)" "$@" >"$TMP/out" 2>&1
	rc=$?
	if [ "$rc" = "$want" ] && grep -Eq -- "$pat" "$TMP/out"; then
		echo "ok   $what: $(grep -E -m1 -- "$pat" "$TMP/out")"
		return 0
	fi
	echo "FAIL $what: exit $rc (want $want), wanted /$pat/ in:"
	sed 's/^/     /' "$TMP/out"
	return 1
}
