# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Shared by the iSER interop tests (sourced, not run). They drive other
# people's iSCSI software (open-iscsi + ib_iser, libiscsi, LIO's isert,
# perftest) against libidm's examples, so they only run inside the
# disposable soft-RoCE guest of tests/rdma-vm/ (IDM_RDMA_VM=1): they load
# kernel modules and change global state (iscsid, configfs) that must not
# be touched on a developer's machine. Everything they start is undone by
# cleanup() in reverse order, because ci.sh runs all of suite 'rdma' in
# one guest boot and the next test must find a clean machine.

set -u
TMP=$(mktemp -d "/tmp/${IDM_TEST_NAME:-idm-iser-interop}.XXXXXX")
CLEANUP_CMDS=()
cleanup() {
	local i
	for ((i = ${#CLEANUP_CMDS[@]} - 1; i >= 0; i--)); do
		eval "${CLEANUP_CMDS[i]}" >/dev/null 2>&1 || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 1' INT TERM

T0=$(date +%s.%N)
log() { printf '== [%6.1f s] %s\n' "$(elapsed)" "$*"; }
# FAIL_DIAG: shell code a test sets to print what explains a failure.
FAIL_DIAG=
fail() {
	echo "FAIL: $*"
	[ -z "$FAIL_DIAG" ] || eval "$FAIL_DIAG"
	exit 1
}
skip() { echo "SKIP: $*"; exit 77; }
elapsed() { awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# The guest sets IDM_RDMA_VM=1, IDM_RDMA_DEV and IDM_RDMA_IP (vm-run).
need_rdma() {
	if [ -z "${IDM_RDMA_VM:-}" ] || [ -z "${IDM_RDMA_IP:-}" ]; then
		skip "no RDMA device: these tests run only in the soft-RoCE guest (tests/rdma-vm/ci.sh)"
	fi
	RDMA_DEV=${IDM_RDMA_DEV:-rxe0}
	[ -d "/sys/class/infiniband/$RDMA_DEV" ] ||
		skip "no RDMA device: /sys/class/infiniband/$RDMA_DEV does not exist"
	IP=$IDM_RDMA_IP
}

# need TOOL PACKAGE: skip when a tool from another package is absent.
need() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 not installed (Debian package $2)"
}

# need_module MOD: load a kernel module of the guest kernel; skip when
# the kernel does not ship it.
need_module() {
	modinfo "$1" >/dev/null 2>&1 || skip "kernel $(uname -r) has no module $1"
	modprobe "$1" || fail "modprobe $1"
}

# Stop a process we started: TERM, then KILL after 5 s.
stop_pid() {
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# start_idm_target IQN LUNSPEC [ARGS...]: idm-target over iSER on
# $IP, a free port; sets TGT_PID and PORT. Its log is $TMP/target.log.
start_idm_target() {
	local iqn=$1 lun=$2 i
	shift 2
	rm -f "$TMP/port"
	"$IDM_TARGET" --provider iser --portal "$IP:0" --port-file "$TMP/port" \
		--target-name "$iqn" --lun "$lun" "$@" >>"$TMP/target.log" 2>&1 &
	TGT_PID=$!
	CLEANUP_CMDS+=("stop_pid $TGT_PID")
	for ((i = 0; i < 300; i++)); do
		[ -s "$TMP/port" ] && break
		kill -0 "$TGT_PID" 2>/dev/null || break
		sleep 0.1
	done
	PORT=$(cat "$TMP/port" 2>/dev/null)
	[ -n "$PORT" ] || { tail -n 20 "$TMP/target.log"; fail "idm-target (iSER) did not start"; }
	log "idm-target (iSER) listens on $IP:$PORT"
}

# target_alive: idm-target must still run after each step.
target_alive() {
	kill -0 "$TGT_PID" 2>/dev/null && return 0
	echo "--- idm-target log:"
	tail -n 30 "$TMP/target.log"
	fail "idm-target died"
}

# "${PEER[@]}" CMD...: another project's tool without MALLOC_PERTURB_,
# which meson sets for every test: libiscsi 1.19's iSER transport reads
# memory it never initialised and segfaults under it. Our own programs
# keep it.
# shellcheck disable=SC2034 # used by the scripts that source this
PEER=(env -u MALLOC_PERTURB_)

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
