#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# open-iscsi's CHAP (iscsid + ib_iser) against idm-target's, in the
# soft-RoCE guest: for each algorithm open-iscsi 2.1.8 has
# (node.session.auth.chap_algs = SHA3-256, SHA256, SHA1, MD5), one-way
# and mutual (username_in/password_in): the right secrets log in (the
# disk appears, a 1 MiB O_DIRECT write reads back, logout), a wrong
# initiator secret is refused by the target (0x0201), and, mutual, a
# wrong target secret is refused by open-iscsi. Then a target whose
# chap-algorithms leave MD5 out refuses chap_algs = MD5 and takes
# SHA256. Each login gets a node record of its own, made by hand (no
# discovery), so that nothing of the last one's settings stays. Prints
# the matrix.
# Usage: open_iscsi_chap.sh PATH/TO/idm-target
IDM_TEST_NAME=idm-iser-chap
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
IDM_TARGET=${1:?usage: $0 idm-target}
# shellcheck source-path=SCRIPTDIR source=open-iscsi.sh
. "$(dirname "$0")/open-iscsi.sh"
need_rdma

iscsid_start

IQN=iqn.2026-11.org.libidm:kernel-chap
S_INI=ini-Secret-4711abc
S_TGT=tgt-Secret-0815xyz
S_WRONG=wrong-Secret-999q
(umask 077 && printf '%s\n' "chap = alice:$S_INI" "mutual-chap = tgt:$S_TGT" >"$TMP/tgt.cred")
MATRIX=$TMP/matrix
fails=0

# node_set NAME VALUE...: settings of the node record of $IQN
node_set() {
	while [ $# -ge 2 ]; do
		timeout 30 iscsiadm -m node -T "$IQN" -p "$IP:$PORT" -I iser -o update \
			-n "$1" -v "$2" >/dev/null || fail "iscsiadm: cannot set $1"
		shift 2
	done
}

# node_new: a fresh node record of $IQN at $IP:$PORT over iser (the
# last one's settings gone), deleted at the end
node_new() {
	if [ -z "${NODE_CLEANUP:-}" ]; then
		CLEANUP_CMDS+=("timeout 30 iscsiadm -m node -T $IQN -o delete")
		CLEANUP_CMDS+=("timeout 60 iscsiadm -m node -T $IQN --logout")
		NODE_CLEANUP=1
	fi
	# a login that failed may still be retried by iscsid: end it first,
	# or the next login finds "1 session requested, but 1 already present"
	timeout 30 iscsiadm -m node -T "$IQN" --logout >/dev/null 2>&1
	timeout 30 iscsiadm -m node -T "$IQN" -o delete >/dev/null 2>&1
	timeout 30 iscsiadm -m node -T "$IQN" -p "$IP:$PORT" -I iser -o new >/dev/null ||
		fail "iscsiadm: cannot make the node record"
}

# login_once ALG PASSWORD [USERNAME_IN PASSWORD_IN]: one login of
# open-iscsi on a fresh node record with these settings (the disk
# checked, then logout). 0 logged in, 1 refused, 2 the initiator's
# kernel refused to send a login PDU ("Login/Text in progress" in its
# log, "Login I/O error, failed to send a PDU" in iscsid's): Linux 6.1's
# libiscsi hands a Login Response to iscsid (iscsi_recv_pdu) before it
# frees the log-in task (iscsi_complete_task, the next line of
# __iscsi_complete_pdu), so an iscsid that answers at once finds the
# task busy, and every later attempt of that session fails the same way
# (doc/testing.md). initial_login_retry_max 1: iscsiadm gives up in
# seconds instead of retrying the stuck session for its whole timeout.
login_once() {
	local alg=$1 pw=$2 uin=${3:-} pin=${4:-} ifrom kfrom
	node_new
	node_set node.session.auth.authmethod CHAP node.session.auth.chap_algs "$alg" \
		node.session.auth.username alice node.session.auth.password "$pw" \
		node.session.initial_login_retry_max 1
	[ -z "$uin" ] ||
		node_set node.session.auth.username_in "$uin" node.session.auth.password_in "$pin"
	ifrom=$(($(wc -l <"$TMP/iscsid.log") + 1))
	kfrom=$(($(dmesg | wc -l) + 1))
	if run_bounded 90 "$TMP/login" iscsiadm -m node -T "$IQN" -p "$IP:$PORT" -I iser --login; then
		iscsi_disk_wait 35 || fail "$alg: logged in, but no disk appeared"
		head -c 1M /dev/urandom >"$TMP/pat"
		if ! timeout 60 dd if="$TMP/pat" of="$DEV" bs=1M oflag=direct conv=fsync status=none ||
			! timeout 60 dd if="$DEV" of="$TMP/back" bs=1M count=1 iflag=direct status=none ||
			! cmp -s "$TMP/pat" "$TMP/back"; then
			fail "$alg: 1 MiB O_DIRECT write/read-back"
		fi
		logout_disk "$IQN"
		return 0
	fi
	if tail -n "+$ifrom" "$TMP/iscsid.log" | grep -q "Login I/O error, failed to send a PDU" ||
		dmesg | tail -n "+$kfrom" | grep -q "Login/Text in progress"; then
		timeout 30 iscsiadm -m node -T "$IQN" --logout >/dev/null 2>&1
		return 2
	fi
	return 1
}

# case NAME WANT(ok|refused) PATTERN ALG PASSWORD [USERNAME_IN PASSWORD_IN]:
# one login of open-iscsi with these settings; PATTERN must be in what
# the target logged during it. A login the initiator's kernel could not
# send (login_once's 2) is tried again on a new session, up to 5 tries
# (it hit 4 of 26 logins in one run: 5 in a row would be 1 in 10,000),
# and counted.
KERNEL_STUCK=0
LOGINS=0
case_run() {
	local name=$1 want=$2 pat=$3 got from ifrom rc=0 try
	shift 3
	from=$(($(wc -l <"$TMP/target.log") + 1))
	ifrom=$(($(wc -l <"$TMP/iscsid.log") + 1))
	LOGINS=$((LOGINS + 1))
	login_once "$@" || rc=$?
	for try in 2 3 4 5; do
		[ "$rc" = 2 ] || break
		KERNEL_STUCK=$((KERNEL_STUCK + 1))
		log "     $name: the initiator's kernel refused to send a login PDU (Login/Text in progress): try $try on a new session"
		from=$(($(wc -l <"$TMP/target.log") + 1))
		LOGINS=$((LOGINS + 1))
		rc=0
		login_once "$@" || rc=$?
	done
	case $rc in
	0) got=ok ;;
	1) got=refused ;;
	*) got="not sent in 5 tries (initiator kernel)"; KERNEL_STUCK=$((KERNEL_STUCK + 1)) ;;
	esac
	printf '%-44s %s\n' "$name" "$got" >>"$MATRIX"
	if [ "$got" = "$want" ] && tail -n "+$from" "$TMP/target.log" | grep -Eq -- "$pat"; then
		log "ok   $name: $got"
	else
		log "FAIL $name: wanted $want and /$pat/ in the target log, got $got"
		sed 's/^/   | /' "$TMP/login" | tail -5
		echo "   the target, from the start of this case:"
		tail -n "+$from" "$TMP/target.log" | head -n 30 | sed 's/^/   | /'
		echo "   iscsid, from the start of this case:"
		tail -n "+$ifrom" "$TMP/iscsid.log" | grep -v "set operational parameter\|sysfs_attr_get_value" |
			head -n 60 | sed 's/^/   | /'
		echo "   kernel:"
		dmesg | tail -n 15 | sed 's/^/   | /'
		fails=$((fails + 1))
	fi
	target_alive
}

start_idm_target "$IQN" ram:16M -v --credentials "$TMP/tgt.cred" --max-auth-failures 0
for alg in ${IDM_CHAP_ALGS:-SHA3-256 SHA256 SHA1 MD5}; do
	a=${alg,,}
	case_run "one-way $alg right secret" ok "CHAP \($a\) passed" "$alg" "$S_INI"
	case_run "one-way $alg wrong initiator secret" refused "login failed \(0x0201\)" \
		"$alg" "$S_WRONG"
	case_run "mutual $alg right secrets" ok "CHAP \($a, mutual\) passed" \
		"$alg" "$S_INI" tgt "$S_TGT"
	case_run "mutual $alg wrong initiator secret" refused "login failed \(0x0201\)" \
		"$alg" "$S_WRONG" tgt "$S_TGT"
	# the target passes the initiator and answers; open-iscsi refuses it
	case_run "mutual $alg wrong target secret" refused "CHAP \($a, mutual\) passed" \
		"$alg" "$S_INI" tgt "$S_WRONG"
done
stop_pid "$TGT_PID"

start_idm_target "$IQN" ram:16M -v --credentials "$TMP/tgt.cred" --max-auth-failures 0 \
	--chap-algorithms sha3-256,sha256
case_run "target sha3-256,sha256: chap_algs MD5" refused "no CHAP algorithm in common" MD5 "$S_INI"
case_run "target sha3-256,sha256: chap_algs SHA256,MD5" ok "CHAP \(sha256\) passed" \
	SHA256,MD5 "$S_INI"
stop_pid "$TGT_PID"

if grep -qF -e "$S_INI" -e "$S_TGT" -e "$S_WRONG" "$TMP/target.log"; then
	log "FAIL a secret is in the target log"
	fails=$((fails + 1))
fi
log "matrix: open-iscsi 2.1.8 (iSER) -> idm-target"
sed 's/^/   | /' "$MATRIX"
log "the initiator's kernel could not send a login PDU in $KERNEL_STUCK of $LOGINS logins (each tried again on a new session, up to 5 tries)"
[ "$fails" = 0 ] || fail "$fails case(s) failed"
log "PASS"
