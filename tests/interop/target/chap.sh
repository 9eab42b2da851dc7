#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-target --chap against libiscsi's CHAP (iscsi://user%secret@...):
# the right secret logs in (normal and discovery sessions), a wrong
# secret, a wrong name and no credentials get "authentication failure".
# Then mutual CHAP (libiscsi's ?target_user=...&target_password=...): the
# right secrets log in, a wrong initiator secret is refused by the
# target, a wrong target secret by libiscsi; libiscsi 1.19 offers MD5
# only (CHAP_A=5), so a target whose chap-algorithms leave MD5 out
# refuses it.
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
stop_pid "$TARGET_PID"

(umask 077 && printf '%s\n' "chap = alice:s3cretpassw0rd" "mutual-chap = tgt:t4rgetpassw0rd" \
	>"$TMP/tgt.cred")
start_target "$TMP/target.log" --credentials "$TMP/tgt.cred" --max-auth-failures 0
M="iscsi://alice%s3cretpassw0rd@127.0.0.1:$PORT"
expect "mutual md5: INQUIRY" "Vendor:LIBIDM" \
	iscsi-inq "$M/$IQN/1?target_user=tgt&target_password=t4rgetpassw0rd"
expect "mutual md5: discovery" "Target:$IQN" \
	iscsi-ls "$M?target_user=tgt&target_password=t4rgetpassw0rd"
grep -q "CHAP (md5, mutual) passed" "$TMP/target.log" ||
	{ echo "FAIL mutual: not in the target log"; fails=$((fails + 1)); }
expect "mutual md5: wrong initiator secret refused" "Authentication failure" \
	iscsi-inq "iscsi://alice%wrong@127.0.0.1:$PORT/$IQN/1?target_user=tgt&target_password=t4rgetpassw0rd"
expect "mutual md5: wrong target secret refused by libiscsi" "Invalid CHAP_R response from the target" \
	iscsi-inq "$M/$IQN/1?target_user=tgt&target_password=wrong"
stop_pid "$TARGET_PID"

start_target "$TMP/target.log" --credentials "$TMP/tgt.cred" --chap-algorithms sha3-256,sha256,sha1
expect "target without md5: libiscsi (md5 only) refused" "Authentication failure" \
	iscsi-inq "iscsi://alice%s3cretpassw0rd@127.0.0.1:$PORT/$IQN/1"
grep -q "no CHAP algorithm in common: the initiator offers CHAP_A=5, the target accepts 8,7,6" \
	"$TMP/target.log" || { echo "FAIL md5 refusal not in the target log"; fails=$((fails + 1)); }
[ "$fails" = 0 ] || { tail -20 "$TMP/target.log"; exit 1; }
echo PASS
