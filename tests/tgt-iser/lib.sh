# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Shared by the tgt-iser tests (sourced): tgtd on libidm (contrib/tgt,
# GPL-2.0-only, built outside this tree by contrib/tgt/build-tgt-idm.sh)
# serving iSER through libidm's iser provider in the soft-RoCE guest, and
# Debian's stock tgtd with its own iSER driver as a reference. They bring
# iser-interop's guest helpers (need_rdma, need_module, PEER, iscsid and
# ib_iser logins: open-iscsi.sh) and interop's tgtd helpers (find_tgt_idm,
# start_tgtd). Skipped (77) outside the guest or without the tgt build.
: "${IDM_TEST_NAME:=tgt-iser}"
# shellcheck source-path=SCRIPTDIR source=../iser-interop/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../iser-interop/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../interop/tgt-idm-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../interop/tgt-idm-lib.sh"

# tgt_iser_setup WORKDIR: the guest's RDMA device and the tgt build, or skip.
tgt_iser_setup() {
	need_rdma
	find_tgt_idm "$1"
}

# start_tgtd_iser NAME CONTROL_PORT LUNSIZE: tgtd on libidm with one
# portal on $IP (a free port) of libidm providers tcp and iser
# (TGT_IDM_PROVIDERS), debug log on (tgtd -d 1: each connection's
# idm_conn_get_stats() counters at its end; IDM_LOG_LEVEL=debug: the iser
# provider's account of each connection). Sets PORT_<NAME>, URL_<NAME>
# (iser://), PID_<NAME>, like start_tgtd; log $TMP/tgtd-NAME.log.
start_tgtd_iser() {
	local TGTD_ARGS=(-d 1)
	TGT_ADDR=$IP TGT_SCHEME=iser TGT_IDM_PROVIDERS=tcp,iser IDM_LOG_LEVEL=debug \
		start_tgtd "$1" "$TGTD_IDM" "$2" "$3"
}

# tgtd_alive NAME: that tgtd must still run.
tgtd_alive() {
	local pid_var=PID_$1
	kill -0 "${!pid_var}" 2>/dev/null && return 0
	echo "--- tgtd $1's log:"
	tail -n 30 "$TMP/tgtd-$1.log"
	die "tgtd $1 died"
}

# conn_counters LOG [FROM_LINE]: the iSER connections' counters that tgtd
# on libidm logged when they ended (tgtd -d 1), from line FROM_LINE on,
# one line each: "PEER pdus_in pdus_out copies copy_bytes"; and, from the
# iser provider's debug lines, one "reads N BYTES SENDS WRITES" per
# connection that had write commands.
conn_counters() {
	tail -n +"${2:-1}" "$1" | sed -n \
		-e 's/.*iser \([0-9.:]*\): \([0-9]*\) PDUs in, \([0-9]*\) out, .*payload copies \([0-9]*\) (\([0-9]*\) bytes).*/conn \1 \2 \3 \4 \5/p' \
		-e 's/.*iser: \([0-9]*\) write commands (largest [0-9]* bytes), \([0-9]*\) Sends of unsolicited data, \([0-9]*\) RDMA Reads of \([0-9]*\) bytes.*/reads \3 \4 \2 \1/p'
}

# counters_wait LOG FROM_LINE PATTERN: wait up to 10 s until a line of
# conn_counters LOG FROM_LINE matches PATTERN (tgtd logs a connection's
# counters when it has gone, a moment after the initiator is done).
counters_wait() {
	local i
	for ((i = 0; i < 100; i++)); do
		conn_counters "$1" "$2" | grep -q "$3" && return 0
		sleep 0.1
	done
	return 1
}
