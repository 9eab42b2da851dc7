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
	timeout 30 iscsiadm -m node -T "$IQN" -p "$IP:$PORT" -I iser -o delete >/dev/null 2>&1
	timeout 30 iscsiadm -m node -T "$IQN" -p "$IP:$PORT" -I iser -o new >/dev/null ||
		fail "iscsiadm: cannot make the node record"
}

# case NAME WANT(ok|refused) PATTERN ALG PASSWORD [USERNAME_IN PASSWORD_IN]:
# one login of open-iscsi with these settings; PATTERN must be in what
# the target logged during it.
case_run() {
	local name=$1 want=$2 pat=$3 alg=$4 pw=$5 uin=${6:-} pin=${7:-} got from
	node_new
	node_set node.session.auth.authmethod CHAP node.session.auth.chap_algs "$alg" \
		node.session.auth.username alice node.session.auth.password "$pw"
	[ -z "$uin" ] ||
		node_set node.session.auth.username_in "$uin" node.session.auth.password_in "$pin"
	from=$(($(wc -l <"$TMP/target.log") + 1))
	got=refused
	if run_bounded 90 "$TMP/login" iscsiadm -m node -T "$IQN" -p "$IP:$PORT" -I iser --login; then
		got=ok
		iscsi_disk_wait 35 || fail "$name: logged in, but no disk appeared"
		head -c 1M /dev/urandom >"$TMP/pat"
		if ! timeout 60 dd if="$TMP/pat" of="$DEV" bs=1M oflag=direct conv=fsync status=none ||
			! timeout 60 dd if="$DEV" of="$TMP/back" bs=1M count=1 iflag=direct status=none ||
			! cmp -s "$TMP/pat" "$TMP/back"; then
			fail "$name: 1 MiB O_DIRECT write/read-back"
		fi
		logout_disk "$IQN"
	fi
	printf '%-44s %s\n' "$name" "$got" >>"$MATRIX"
	if [ "$got" = "$want" ] && tail -n "+$from" "$TMP/target.log" | grep -Eq -- "$pat"; then
		log "ok   $name: $got"
	else
		log "FAIL $name: wanted $want and /$pat/ in the target log, got $got"
		sed 's/^/   | /' "$TMP/login" | tail -5
		tail -n "+$from" "$TMP/target.log" | sed 's/^/   | /' | tail -8
		fails=$((fails + 1))
	fi
	target_alive
}

start_idm_target "$IQN" ram:16M -v --credentials "$TMP/tgt.cred" --max-auth-failures 0
for alg in SHA3-256 SHA256 SHA1 MD5; do
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
[ "$fails" = 0 ] || fail "$fails case(s) failed"
log "PASS"
