#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# contrib/libiscsi/check-abi.sh as a test: the libiscsi.so.7 built with the
# libidm transport keeps bookworm's libiscsi7 ABI (SONAME, exported
# symbols, the layout of every public struct).
# Usage: abi.sh LIBISCSI_WORK
# shellcheck disable=SC2034 # IDM_TEST_NAME is read by the lib
IDM_TEST_NAME=libiscsi-idm-abi
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
find_libiscsi_idm "${1:?usage: abi.sh LIBISCSI_WORK}"
rc=0
timeout -k 5 "$(scaled 100)" "$(dirname "$0")/../../../contrib/libiscsi/check-abi.sh" "$1" || rc=$?
case $rc in
0) echo "PASS: libiscsi.so.7 on libidm keeps bookworm's libiscsi7 ABI" ;;
77) exit 77 ;;
*) fail "check-abi.sh: exit $rc" ;;
esac
