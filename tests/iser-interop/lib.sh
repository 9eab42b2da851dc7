# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Shared by the iSER interop tests (sourced, not run). They drive other
# people's iSCSI software (open-iscsi + ib_iser, libiscsi, LIO's isert,
# perftest) against libidm's examples, so they only run inside the
# disposable soft-RoCE guest of tests/rdma-vm/ (IDM_RDMA_VM=1): they load
# kernel modules and change global state (iscsid, configfs) that must not
# be touched on a developer's machine. Everything they start is undone by
# cleanup() in reverse order (tests/lib/common.sh), because ci.sh runs all
# of suite 'rdma' in one guest boot and the next test must find a clean
# machine.

: "${IDM_TEST_NAME:=idm-iser-interop}"
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/target.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/target.sh"

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

# need_module MOD: load a kernel module of the guest kernel; skip when
# the kernel does not ship it.
need_module() {
	modinfo "$1" >/dev/null 2>&1 || skip "kernel $(uname -r) has no module $1"
	modprobe "$1" || fail "modprobe $1"
}

# start_idm_target IQN LUNSPEC [ARGS...]: idm-target over iSER on
# $IP, a free port; sets TGT_PID and PORT. Its log is $TMP/target.log.
# --allow-all: the initiators connect from $IP (soft-RoCE has no
# loopback), which a target without CHAP serves only with it.
start_idm_target() {
	idm_target_start "$TMP/target.log" 30 --provider iser --portal "$IP:0" \
		--target-name "$1" --lun "$2" --allow-all "${@:3}"
	log "idm-target (iSER) listens on $IP:$PORT"
}

# "${PEER[@]}" CMD...: another project's tool without MALLOC_PERTURB_,
# which meson sets for every test: libiscsi 1.19's iSER transport reads
# memory it never initialised and segfaults under it. Our own programs
# keep it.
# shellcheck disable=SC2034 # used by the scripts that source this
PEER=(env -u MALLOC_PERTURB_)
