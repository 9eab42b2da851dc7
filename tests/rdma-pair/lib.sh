# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Shared by the tests of suite rdma-pair (sourced). They run in guest B of
# the two-guest rig (tests/rdma-vm/vm-pair) and drive guest A through
# pair-lib.sh; tests/lib's helpers (log, fail, skip, run_bounded,
# CLEANUP_CMDS undone on exit, ...) come with the one-guest iSER interop
# tests' lib.sh.
# shellcheck source-path=SCRIPTDIR source=../iser-interop/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../iser-interop/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../rdma-vm/pair-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../rdma-vm/pair-lib.sh"
# shellcheck disable=SC2034 # for the scripts that source this
PAIR_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")/../rdma-vm" && pwd)/pair-lib.sh
PAIR_TMP=$TMP
pair_require
need_rdma
A_IP=$IDM_PAIR_A_IP
# shellcheck disable=SC2034 # for the scripts that source this
B_IP=$IDM_PAIR_B_IP

# A failed test shows what its jobs in A said (those in PAIR_DIAG_JOBS:
# the servers pair_idm_target and pair_tgtd started, and any a test adds)
# and both kernels' iSER, soft-RoCE and target lines: a CI run keeps
# nothing else of A.
PAIR_DIAG_JOBS=()
pair_fail_diag() {
	local j re='iser|rxe|iscsi|target|RIP|WARNING'
	for j in "${PAIR_DIAG_JOBS[@]}"; do
		echo "--- $j's log (A), last 40 lines:"
		tail -n 40 "$(pair_a_log "$j")" 2>/dev/null
	done
	if [ -s "$TMP/iscsid.log" ]; then
		echo "--- iscsid's log (B), last 20 lines:"
		tail -n 20 "$TMP/iscsid.log"
	fi
	echo "--- kernel log (B):"
	dmesg | grep -iE "$re" | tail -n 20
	echo "--- kernel log (A):"
	pair_a_run 20 bash -c "dmesg | grep -iE '$re' | tail -n 20"
	# What crossed the link, from both ends: a message that never arrived
	# (pair-tgt-kernel-fs's discovery Text Request once) shows as a sent
	# count on one side without its received count on the other, or as
	# NAKs and retries; the QPs' states say whether a side gave up. The
	# host's capture summary (ci-pair.sh, wire| lines) has the frames;
	# this time on B's clock finds them.
	printf -- '--- at %(%H:%M:%S)T (B'"'"'s clock): rxe counters, non-zero (A | B):\n' -1
	paste -d' ' <(pair_rxe_counters A 2>/dev/null | sort) <(pair_rxe_counters B | sort) |
		awk '{ split($1, a, "="); split($2, b, "="); if (a[2] != 0 || b[2] != 0)
			printf "  %-26s A=%-10s B=%s\n", a[1], a[2], b[2] }'
	echo "--- QPs (B):"
	rdma resource show qp 2>&1 | grep -v ' type GSI\| type SMI' | tail -n 10
	echo "--- QPs (A):"
	pair_a_run 20 bash -c "rdma resource show qp 2>&1 | grep -v ' type GSI\\| type SMI' | tail -n 10"
}
# shellcheck disable=SC2034 # eval'd by fail (tests/lib/common.sh)
FAIL_DIAG=pair_fail_diag

# _pair_server_up NAME PORTFILE TRIES WHAT: A's job NAME, a server that
# writes its port to PORTFILE, is stopped (TERM) when the test ends and
# its log goes with a failure; waits TRIES x 0.2 s for the port; sets PORT.
_pair_server_up() {
	local name=$1 pf=$2 tries=$3 what=$4 i
	on_exit "pair_a_stop $name"
	PAIR_DIAG_JOBS+=("$name")
	PORT=
	for ((i = 0; i < tries; i++)); do
		[ -s "$pf" ] && read -r PORT < "$pf" && [ -n "$PORT" ] && break
		pair_a_status "$name" >/dev/null && break
		_pair_sleep 0.2
	done
	[ -n "$PORT" ] || fail "$what did not start in A"
	log "$what in A listens on $A_IP:$PORT"
}

# pair_a_cleanup NAME: stop A's job NAME when the test ends.
pair_a_cleanup() { CLEANUP_CMDS+=("pair_a_stop $1 KILL"); }

# pair_idm_target NAME IQN LUNSPEC [ARGS...]: idm-target over iSER (or
# $PAIR_TGT_PROVIDER) in A on $A_IP, a free port (written to the shared
# job dir); sets PORT. Stopped (TERM) when the test ends; its log:
# pair_a_log NAME.
pair_idm_target() {
	local name=$1 iqn=$2 lun=$3 prov=${PAIR_TGT_PROVIDER:-iser} pf
	shift 3
	pf=${IDM_PAIR_SYNC:?}/jobs/$name/port
	# --allow-all: the initiator is guest B ($B_IP), which a target
	# without CHAP does not serve otherwise
	pair_a_start "$name" "$IDM_TARGET" --provider "$prov" --portal "$A_IP:0" --port-file "$pf" \
		--target-name "$iqn" --lun "$lun" --allow-all "$@" || fail "cannot start idm-target in A"
	_pair_server_up "$name" "$pf" 300 "idm-target ($prov)"
}

# pair_a_alive NAME: A's job NAME must still run.
pair_a_alive() {
	local st
	st=$(pair_a_status "$1") || return 0
	# its log comes with the failure (pair_fail_diag)
	[[ " ${PAIR_DIAG_JOBS[*]} " == *" $1 "* ]] || PAIR_DIAG_JOBS+=("$1")
	fail "$1 in A ended (status $st)"
}

# pair_tgtd_need WORKDIR: skip (77) unless tgtd on libidm (contrib/tgt) was
# built into WORKDIR (build-tgt-idm.sh --work WORKDIR, on the host before
# the guests boot); the work dir is on the shared build tree.
pair_tgtd_need() {
	if [ -z "$1" ] || [ ! -f "$1/env.sh" ]; then
		skip "tgtd on libidm not built: run contrib/tgt/build-tgt-idm.sh --work ${1:-DIR} --stock --libidm-build BUILD on the host first"
	fi
	PAIR_TGTD_WORK=$(cd "$1" && pwd)
}

# pair_tgtd NAME IQN PROVIDERS: tgtd on libidm in A (tgtd_a.sh), target
# IQN with a 256 MiB file LUN, a portal on $A_IP (a free port) of the
# libidm providers PROVIDERS (tcp, tcp,iser); sets PORT. Its target and
# tgtd are deleted when the test ends; its log: pair_a_log NAME.
pair_tgtd() {
	local name=$1 iqn=$2 prov=$3 pf
	pf=${IDM_PAIR_SYNC:?}/jobs/$name/port
	pair_a_start "$name" bash "$(dirname "${BASH_SOURCE[0]}")/tgtd_a.sh" \
		"${PAIR_TGTD_WORK:?pair_tgtd_need first}" "$A_IP" "$pf" "$iqn" "$prov" ||
		fail "cannot start tgtd in A"
	_pair_server_up "$name" "$pf" 600 "tgtd on libidm ($prov)"
}

# pair_recoveries LABEL FILE: how often idm-initiator's sessions recovered
# in FILE (its output): each connection it lost (why, as libidm reported
# it) and the recovery that followed. The two-host tests print this line
# next to the wire counters, so that a fault the recovery hid (a fatal NAK,
# a 0-byte Send from soft-RoCE: doc/iser.md) is still counted:
#   recoveries[stag-mr]: 1 connection(s) lost, 1 recovered
#   recoveries[stag-mr]:   session 0: ...; recovering (replacement timeout 20 s)
pair_recoveries() {
	local lost rec
	lost=$(grep -c '; recovering (replacement timeout' "$2" 2>/dev/null) || lost=0
	rec=$(grep -c ': recovered in ' "$2" 2>/dev/null) || rec=0
	echo "recoveries[$1]: $lost connection(s) lost, $rec recovered"
	grep -E '; recovering \(replacement timeout|: recovered in ' "$2" 2>/dev/null |
		sed "s/^/recoveries[$1]:   /" || true
}
