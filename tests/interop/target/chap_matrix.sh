#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# CHAP between idm-initiator and idm-target on 127.0.0.1, each case a
# login (discovery, then the normal session, INQUIRY): every algorithm
# (SHA3-256, SHA-256, SHA1, MD5) one-way and mutual, with the right
# secrets, a wrong initiator secret (the target refuses: 0x0201) and,
# mutual, a wrong target secret (the initiator refuses the target's
# answer); MD5 refused when the target's list leaves it out; per-
# initiator credentials; discovery credentials of their own; a reflected
# challenge refused (chap_reflect.py); failed logins from one address
# rate-limited, said once; no secret in any log line. Prints the matrix.
# usage: chap_matrix.sh IDM_TARGET IDM_INITIATOR
. "$(dirname "$0")/common.sh"
IDM_TARGET=$1
IDM_INITIATOR=$2
need python3 python3
HERE=$(cd "$(dirname "$0")" && pwd)

# secrets: each different, RFC 7143 12.1.3 (and greppable in the logs)
S_ALICE=alice-Secret-4711x
S_BOB=bob-Secret-0815yy
S_TGT=target-Secret-2342z
S_DISC=disco-Secret-1234w
S_WRONG=wrong-Secret-9999q
BOB_IQN=iqn.2026-11.org.libidm:bob

# cred FILE LINE...: a credentials file (mode 0600)
cred() {
	local f=$TMP/$1
	shift
	(umask 077 && printf '%s\n' "$@" >"$f")
}
cred tgt.cred "chap = alice:$S_ALICE" "initiator-chap = $BOB_IQN bob:$S_BOB" \
	"mutual-chap = tgt:$S_TGT"
cred one.cred "chap = alice:$S_ALICE"
cred one-wrong.cred "chap = alice:$S_WRONG"
cred mutual.cred "chap = alice:$S_ALICE" "mutual-chap = tgt:$S_TGT"
cred mutual-wrong-ini.cred "chap = alice:$S_WRONG" "mutual-chap = tgt:$S_TGT"
cred mutual-wrong-tgt.cred "chap = alice:$S_ALICE" "mutual-chap = tgt:$S_WRONG"
cred bob.cred "chap = bob:$S_BOB"
cred bob-as-alice.cred "chap = alice:$S_ALICE"
cred disc-tgt.cred "chap = alice:$S_ALICE" "discovery-chap = disco:$S_DISC"
cred disc.cred "chap = alice:$S_ALICE" "discovery-chap = disco:$S_DISC"

MATRIX=$TMP/matrix
# ini NAME WANT(ok|refused) PATTERN ARGS...: idm-initiator -vv against
# the target of $PORT; its exit status must say WANT and its output
# match PATTERN (extended regex); a row of the matrix.
ini() {
	local name=$1 want=$2 pat=$3 rc got from
	shift 3
	from=$(($(wc -l <"$TMP/target.log") + 1))
	timeout 30 "$IDM_INITIATOR" -vv -q "$@" "iscsi://127.0.0.1:$PORT/$IQN/1" \
		>"$TMP/ini.out" 2>&1
	rc=$?
	cat "$TMP/ini.out" >>"$TMP/ini-all.log"
	got=refused
	[ $rc = 0 ] && got=ok
	printf '%-52s %s\n' "$name" "$got" >>"$MATRIX"
	tail -n "+$from" "$TMP/target.log" >"$TMP/tgt.new"
	if [ "$got" = "$want" ] && grep -Eq -- "$pat" "$TMP/ini.out" "$TMP/tgt.new"; then
		echo "ok   $name: $got"
	else
		echo "FAIL $name: wanted $want and /$pat/, got $got (exit $rc):"
		sed 's/^/     /' "$TMP/ini.out" | tail -8
		fails=$((fails + 1))
	fi
}

start_target "$TMP/target.log" --credentials "$TMP/tgt.cred" --max-auth-failures 0 \
	--log-level debug
for alg in sha3-256 sha256 sha1 md5; do
	A=(--chap-algorithms "$alg")
	ini "one-way $alg right secret" ok "CHAP \($alg\) passed" \
		"${A[@]}" --credentials "$TMP/one.cred"
	ini "one-way $alg wrong initiator secret" refused "authentication failure \(0x0201\)" \
		"${A[@]}" --credentials "$TMP/one-wrong.cred"
	ini "mutual $alg right secrets" ok "CHAP \($alg, mutual\) passed" \
		"${A[@]}" --credentials "$TMP/mutual.cred"
	ini "mutual $alg wrong initiator secret" refused "authentication failure \(0x0201\)" \
		"${A[@]}" --credentials "$TMP/mutual-wrong-ini.cred"
	ini "mutual $alg wrong target secret" refused "does not know the mutual-chap secret" \
		"${A[@]}" --credentials "$TMP/mutual-wrong-tgt.cred"
done
ini "default offers: the target picks sha3-256" ok "CHAP \(sha3-256, mutual\) passed" \
	--credentials "$TMP/mutual.cred"
ini "no credentials refused" refused "authentication failure \(0x0201\)"
ini "initiator-chap: bob with his own" ok "CHAP \(sha3-256\) passed for $BOB_IQN" \
	-n "$BOB_IQN" --credentials "$TMP/bob.cred"
ini "initiator-chap: bob with chap's credentials" refused "authentication failure \(0x0201\)" \
	-n "$BOB_IQN" --credentials "$TMP/bob-as-alice.cred"
out=$(timeout 20 python3 "$HERE/chap_reflect.py" "$PORT" "$IQN" alice "$S_ALICE" 2>&1)
if [ "$out" = "status 0x0201" ] &&
	grep -q "CHAP challenge is the target's own: refused" "$TMP/target.log"; then
	echo "ok   reflected challenge refused"
	printf '%-52s %s\n' "raw initiator: its CHAP_C = the target's" refused >>"$MATRIX"
else
	echo "FAIL reflected challenge: $out"
	fails=$((fails + 1))
fi
cp "$TMP/target.log" "$TMP/target-1.log"
stop_pid "$TARGET_PID"

# MD5 (and SHA1) refused when the target's list leaves them out
start_target "$TMP/target.log" --credentials "$TMP/tgt.cred" --max-auth-failures 0 \
	--chap-algorithms sha3-256,sha256
ini "target sha3-256,sha256: initiator md5" refused "no CHAP algorithm in common.*CHAP_A=5, the target accepts 8,7" \
	--chap-algorithms md5 --credentials "$TMP/one.cred"
ini "target sha3-256,sha256: initiator sha1,md5" refused "no CHAP algorithm in common" \
	--chap-algorithms sha1,md5 --credentials "$TMP/one.cred"
ini "target sha3-256,sha256: initiator sha256,md5" ok "CHAP \(sha256\) passed" \
	--chap-algorithms sha256,md5 --credentials "$TMP/one.cred"
stop_pid "$TARGET_PID"

# a target that does not authenticate itself: a mutual initiator refuses
start_target "$TMP/target.log" --credentials "$TMP/one.cred" --max-auth-failures 0
ini "mutual, target has no mutual-chap" refused "asks for mutual CHAP, but the target has no" \
	--credentials "$TMP/mutual.cred"
stop_pid "$TARGET_PID"
start_target "$TMP/target.log"
ini "mutual, target without CHAP" refused "0x0201|authentication" --credentials "$TMP/mutual.cred"
stop_pid "$TARGET_PID"

# discovery credentials of their own
start_target "$TMP/target.log" --credentials "$TMP/disc-tgt.cred" --max-auth-failures 0
ini "discovery-chap: both sets" ok "discovery session" --credentials "$TMP/disc.cred"
ini "discovery-chap: chap's credentials for discovery" refused "authentication failure \(0x0201\)" \
	--credentials "$TMP/one.cred"
ini "discovery-chap: normal session alone, chap's" ok "CHAP \(sha3-256\) passed" \
	--no-discovery --credentials "$TMP/one.cred"
stop_pid "$TARGET_PID"

# rate limit: 3 failures from 127.0.0.1, then even the right secret is
# refused, and the refusal is logged once
start_target "$TMP/target.log" --credentials "$TMP/tgt.cred" --max-auth-failures 3
for i in 1 2 3; do
	ini "rate limit: wrong secret $i" refused "0x0201" --no-discovery --credentials "$TMP/one-wrong.cred"
done
for i in 1 2; do
	ini "rate limit: right secret after 3 failures ($i)" refused "0x0201" \
		--no-discovery --credentials "$TMP/one.cred"
done
n=$(grep -c "refusing its logins for" "$TMP/target.log")
if [ "$n" = 1 ]; then
	echo "ok   rate limit said once: $(grep -m1 'refusing its logins' "$TMP/target.log")"
else
	echo "FAIL rate limit: said $n times"
	fails=$((fails + 1))
fi
stop_pid "$TARGET_PID"

# no secret in any log line, debug level included
for s in "$S_ALICE" "$S_BOB" "$S_TGT" "$S_DISC" "$S_WRONG"; do
	if grep -qF -- "$s" "$TMP/target-1.log" "$TMP/target.log" "$TMP/ini-all.log"; then
		echo "FAIL a secret is in a log"
		fails=$((fails + 1))
	fi
done
echo "--- matrix: idm-initiator -> idm-target"
cat "$MATRIX"
[ "$fails" = 0 ] || { tail -30 "$TMP/target.log"; exit 1; }
echo PASS
