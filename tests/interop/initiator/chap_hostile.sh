#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-initiator's mutual CHAP against a target that cheats
# (chap_target.py): a challenge of the initiator's own sent back on the
# reconnection (reflection), a target that leaves the security stage
# without answering the initiator's challenge, and an algorithm the
# initiator did not offer. Each must fail the login with its reason,
# exit 1, and the secrets must be in no line the initiator printed.
# Usage: chap_hostile.sh PATH/TO/idm-initiator
IDM_TEST_NAME=idm-ini-chap-hostile
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
INI=${1:?usage: $0 idm-initiator}
command -v python3 >/dev/null || skip "python3 not installed (it plays the target)"
PEER="$(dirname "$0")/chap_target.py"
S_INI=ini-Secret-4711abc
S_TGT=tgt-Secret-0815xyz
(umask 077 && printf '%s\n' "chap = alice:$S_INI" "mutual-chap = tgt:$S_TGT" >"$TMP/cred")

# scenario | idm-initiator options | text its stderr must contain
CASES=(
	"reflect|--chap-algorithms sha256|the target sent back a challenge of ours \(reflection\)"
	"skip-mutual|--chap-algorithms sha3-256|the target left the security stage without proving itself"
	"wrong-alg|--chap-algorithms sha256|the target chose CHAP_A=5, not one we offered"
)
bad=0
for c in "${CASES[@]}"; do
	IFS='|' read -r sc opts want <<<"$c"
	peer_start "$sc" python3 "$PEER" "$sc" "$TMP/port" alice "$S_INI" tgt "$S_TGT"
	# reflect: the first login passes, the connection drops at the
	# first command and the reconnection meets the reflected challenge
	# shellcheck disable=SC2086 # opts: several words
	timeout -k 2 30 "$INI" -v -t 2 --replacement-timeout 3 --no-discovery $opts \
		--credentials "$TMP/cred" "iscsi://127.0.0.1:$PEER_PORT/iqn.2026-11.org.libidm:chap/1" \
		>"$TMP/out.txt" 2>"$TMP/err.txt"
	rc=$?
	stop_pid "$PEER_PID"
	expect_refused "$sc" "$rc" "$want" || bad=$((bad + 1))
	if grep -qF -e "$S_INI" -e "$S_TGT" "$TMP/out.txt" "$TMP/err.txt"; then
		echo "FAIL $sc: a secret is in the initiator's output"
		bad=$((bad + 1))
	fi
done
[ $bad -eq 0 ] || fail "$bad scenario(s)"
log "PASS"
