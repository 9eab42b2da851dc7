# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Shared by the tests of suite rdma-pair (sourced). They run in guest B of
# the two-guest rig (tests/rdma-vm/vm-pair) and drive guest A through
# pair-lib.sh; the helpers of the one-guest iSER interop tests (log, fail,
# skip, run_bounded, CLEANUP_CMDS undone on exit, ...) come with them.
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
B_IP=$IDM_PAIR_B_IP

# pair_a_cleanup NAME: stop A's job NAME when the test ends.
pair_a_cleanup() { CLEANUP_CMDS+=("pair_a_stop $1 KILL"); }
