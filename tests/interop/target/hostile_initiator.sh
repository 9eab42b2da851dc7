#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Malformed and out-of-spec PDUs against idm-target (hostile_initiator.py):
# right errors, closed connections, no crash, and the target still
# serves libiscsi afterwards.
. "$(dirname "$0")/common.sh"
IDM_TARGET=$1
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"

start_target "$TMP/target.log"
rc=0
timeout 60 python3 "$(dirname "$0")/hostile_initiator.py" "$PORT" "$IQN" || rc=1
if ! kill -0 "$TARGET_PID" 2>/dev/null; then
	echo "FAIL idm-target died"
	rc=1
fi
if command -v iscsi-inq >/dev/null 2>&1; then
	if timeout 10 iscsi-inq "$URL" | grep -q "Vendor:LIBIDM"; then
		echo "ok   iscsi-inq still works"
	else
		echo "FAIL iscsi-inq after the hostile initiator"
		rc=1
	fi
fi
[ "$rc" = 0 ] || tail -40 "$TMP/target.log"
[ "$rc" = 0 ] && echo PASS
exit $rc
