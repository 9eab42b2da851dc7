#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# shellcheck disable=SC2154 # PORT_a, PID_a: set by start_tgtd
# Runs in guest A (started by pair_tgtd in lib.sh): tgtd on libidm
# (contrib/tgt) with one target, a 256 MiB file LUN in A's tmpfs and a
# portal ADDR:(free port) of libidm providers PROVIDERS; the port goes to
# PORTFILE once the target is set up. Runs until signalled: then deletes
# the target and stops tgtd (tgt-idm-lib.sh's cleanup).
# Usage: tgtd_a.sh WORKDIR ADDR PORTFILE IQN PROVIDERS
IDM_TEST_NAME=pair-tgtd-a
# shellcheck source-path=SCRIPTDIR source=../interop/tgt-idm-lib.sh
. "$(dirname "$0")/../interop/tgt-idm-lib.sh"
WORK=${1:?usage: $0 workdir addr portfile iqn providers}
ADDR=${2:?} PF=${3:?} TIQN=${4:?} PROV=${5:?}
find_tgt_idm "$WORK"
export TGT_IDM_PROVIDERS=$PROV
TGT_ADDR=$ADDR TGT_IQN=$TIQN start_tgtd a "$TGTD_IDM" 5 256M ||
	{ tail -n 30 "$TMP/tgtd-a.log"; fail "tgtd on libidm did not start"; }
echo "$PORT_a" >"$PF"
# tgtd's log into ours, as it grows; the EXIT trap (cleanup) deletes
# the target and stops tgtd
tail -n +1 -f "$TMP/tgtd-a.log" --pid="$PID_a" &
wait "$PID_a"
echo "tgtd exited: status $?"
