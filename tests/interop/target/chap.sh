#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-target --chap against libiscsi's CHAP (iscsi://user%secret@...):
# the right secret logs in (normal and discovery sessions), a wrong
# secret, a wrong name and no credentials get "authentication failure".
. "$(dirname "$0")/common.sh"
IDM_TARGET=$1
need_libiscsi iscsi-inq iscsi-ls

start_target "$TMP/target.log" --chap alice:s3cretpassw0rd
GOOD="iscsi://alice%s3cretpassw0rd@127.0.0.1:$PORT"
expect "right secret: INQUIRY" "Vendor:LIBIDM" iscsi-inq "$GOOD/$IQN/1"
expect "right secret: discovery" "Target:$IQN" iscsi-ls "$GOOD"
expect "wrong secret refused" "Authentication failure" \
	iscsi-inq "iscsi://alice%wrong@127.0.0.1:$PORT/$IQN/1"
expect "wrong name refused" "Authentication failure" \
	iscsi-inq "iscsi://bob%s3cretpassw0rd@127.0.0.1:$PORT/$IQN/1"
expect "no credentials refused" "Authentication failure" iscsi-inq "$URL"
[ "$fails" = 0 ] || { tail -20 "$TMP/target.log"; exit 1; }
echo PASS
