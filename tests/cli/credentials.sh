#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-target's secrets and access settings at start-up: a credentials
# file (--credentials, "credentials =" in a config file, or the systemd
# credential in $CREDENTIALS_DIRECTORY) is taken at mode 0600 and
# refused, with exit status 2 and a message saying how to fix it, when
# group or others may access it, when it is not a regular file or not
# ours; its lines are never quoted in a message. --chap and a chap line
# in the config file warn; --allow-all (and "allow-all = yes") warns, the
# default says that only loopback initiators are served. Then the secret
# is in no log line: the target at debug level, logins with the right
# secret, a wrong one and none (libiscsi's iscsi-inq, idm-initiator).
# usage: credentials.sh IDM_TARGET IDM_INITIATOR
IDM_TARGET=$(realpath "$1")
IDM_INITIATOR=$(realpath "$2")
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

IQN=iqn.2026-11.org.libidm:cred
SECRET=Zq7-cred-secret-4711
T=("$IDM_TARGET" --portal 127.0.0.1:0 --log-target stderr --lun ram:1M)
# BRIEF CMD...: idm-target's start-up only. CMD (idm-target's command
# line, or env ... before it) runs with a port file until it has written
# it (once listening, every start-up message printed, its signal handlers
# set), then gets SIGINT: the status is CMD's (0 after a clean stop). No
# fixed time: a loaded machine may take seconds to start it; run_expect's
# time bound is the hang guard.
# shellcheck disable=SC2016 # expanded by that bash
BRIEF=(bash -c 'pf=$1; shift; rm -f "$pf"
	"$@" --port-file "$pf" & t=$!
	until [ -s "$pf" ] || ! kill -0 "$t" 2>/dev/null; do sleep 0.1; done
	kill -INT "$t" 2>/dev/null; wait "$t"' brief "$TMP/brief.port")

# expect_out NAME PATTERN CMD...: like expect_run, whatever CMD's exit
# status (libiscsi's tools have their own)
expect_out() {
	local name=$1 pat=$2
	shift 2
	timeout 20 "$@" >"$TMP/out" 2>&1
	if grep -Eq -- "$pat" "$TMP/out"; then
		echo "ok: $name: $(grep -E -m1 -- "$pat" "$TMP/out")"
	else
		fail "$name: output does not match /$pat/"
		sed 's/^/    /' "$TMP/out"
	fi
}

# cred_file FILE MODE LINE...: a credentials file with these lines
cred_file() {
	local f=$1 mode=$2
	shift 2
	rm -f "$f"
	(umask 077 && printf '%s\n' "$@" >"$f")
	chmod "$mode" "$f"
}

# --- the file's permissions, kind and owner
cred_file "$TMP/c600" 600 "chap = alice:$SECRET"
expect_run "credentials 0600 accepted" 0 "info: access: CHAP required from every initiator" \
	"${BRIEF[@]}" "${T[@]}" --credentials "$TMP/c600"
cred_file "$TMP/c400" 400 "# read only is fine" "chap = alice:$SECRET"
expect_run "credentials 0400 accepted" 0 "access: CHAP required" \
	"${BRIEF[@]}" "${T[@]}" --credentials "$TMP/c400"
cred_file "$TMP/c644" 644 "chap = alice:$SECRET"
expect_run "credentials 0644 refused" 2 \
	"error: credentials file $TMP/c644: permissions 0644 are too open: group and others must have no access to a file of secrets \(chmod 600 $TMP/c644\)" \
	"${T[@]}" --credentials "$TMP/c644"
cred_file "$TMP/c640" 640 "chap = alice:$SECRET"
expect_run "credentials 0640 refused" 2 "credentials file $TMP/c640: permissions 0640 are too open" \
	"${T[@]}" --credentials "$TMP/c640"
cred_file "$TMP/c602" 602 "chap = alice:$SECRET"
expect_run "credentials 0602 (others may write) refused" 2 "permissions 0602 are too open" \
	"${T[@]}" --credentials "$TMP/c602"
expect_run "credentials: a directory" 2 "credentials file $TMP: not a regular file" \
	"${T[@]}" --credentials "$TMP"
expect_run "credentials: missing" 2 "cannot read credentials file $TMP/none: No such file or directory" \
	"${T[@]}" --credentials "$TMP/none"
expect_run "credentials twice" 2 "option --credentials: only one credentials file" \
	"${T[@]}" --credentials "$TMP/c600" --credentials "$TMP/c400"
if [ "$(id -u)" = 0 ]; then
	cred_file "$TMP/cnobody" 600 "chap = alice:$SECRET"
	chown 65534 "$TMP/cnobody"
	expect_run "credentials owned by another user refused" 2 \
		"credentials file $TMP/cnobody: owned by uid 65534, neither root nor the user this program runs as \(uid 0\)" \
		"${T[@]}" --credentials "$TMP/cnobody"
else
	echo "note: not root: the owner check is not run"
fi

# --- errors name the file and line, never the secret on it
cred_bad() {
	local name=$1 pat=$2
	shift 2
	cred_file "$TMP/bad" 600 "$@"
	expect_run "credentials: $name" 2 "$pat" "${T[@]}" --credentials "$TMP/bad"
	grep -q -- "$SECRET" "$TMP/out" && fail "credentials: $name: the message shows the secret"
}
cred_bad "no =" "bad:2: expected 'name = value'$" "# comment" "chap alice:$SECRET"
cred_bad "no colon" "bad:1: chap needs USER:SECRET$" "chap = $SECRET"
cred_bad "bad name" "bad:1: bad setting name$" "Chap:$SECRET = x"
cred_bad "not a secret" "bad:1: unknown setting 'portal' \(a credentials file holds: chap, initiator-chap, mutual-chap, discovery-chap\)" \
	"portal = 127.0.0.1:0"
cred_bad "initiator-chap without a name" "bad:1: initiator-chap needs INITIATOR-NAME USER:SECRET$" \
	"initiator-chap = alice:$SECRET"
cred_bad "initiator-chap without a colon" "bad:1: initiator-chap needs USER:SECRET$" \
	"initiator-chap = iqn.2026-11.org.libidm:x $SECRET"
cred_bad "initiator-chap twice" "bad:2: a second initiator-chap for iqn.2026-11.org.libidm:x$" \
	"initiator-chap = iqn.2026-11.org.libidm:x a:$SECRET" "initiator-chap = iqn.2026-11.org.libidm:x b:$SECRET"
cred_bad "mutual-chap without a colon" "bad:1: mutual-chap needs USER:SECRET$" "mutual-chap = $SECRET"
cred_bad "mutual-chap with an initiator's secret" \
	"the mutual-chap secret is also an initiator's: the target must prove itself with a secret of its own" \
	"chap = alice:$SECRET" "mutual-chap = tgt:$SECRET"
expect_run "chap-algorithms: unknown" 2 "chap-algorithms 'sha512': a list of sha3-256, sha256, sha1 and md5, each once" \
	"${T[@]}" --chap-algorithms sha512
expect_run "chap-algorithms: twice the same" 2 "chap-algorithms 'md5,md5'" \
	"${T[@]}" --chap-algorithms md5,md5
expect_run "max-auth-failures: not a number" 2 "max-auth-failures='x': must be a number from 0 to 1000000" \
	"${T[@]}" --max-auth-failures x

# --- idm-initiator's credentials file: the same rules
cred_file "$TMP/i644" 644 "chap = alice:$SECRET"
expect_run "idm-initiator: credentials 0644 refused" 2 \
	"credentials file $TMP/i644: permissions 0644 are too open" \
	"$IDM_INITIATOR" --credentials "$TMP/i644" iscsi://127.0.0.1:1
cred_file "$TMP/ibad" 600 "portal = x"
expect_run "idm-initiator: credentials: unknown setting" 2 \
	"ibad:1: unknown setting 'portal' \(a credentials file holds: chap, mutual-chap, discovery-chap\)" \
	"$IDM_INITIATOR" --credentials "$TMP/ibad" iscsi://127.0.0.1:1
cred_file "$TMP/ibad" 600 "chap = $SECRET"
expect_run "idm-initiator: credentials: no colon" 2 "ibad:1: chap needs USER:SECRET" \
	"$IDM_INITIATOR" --credentials "$TMP/ibad" iscsi://127.0.0.1:1
grep -q -- "$SECRET" "$TMP/out" && fail "idm-initiator: the message shows the secret"
cred_file "$TMP/ibad" 600 "chap = alice:$SECRET" "mutual-chap = tgt:$SECRET"
expect_run "idm-initiator: mutual secret = own secret" 2 \
	"the mutual-chap secret must differ from the initiator's own" \
	"$IDM_INITIATOR" --credentials "$TMP/ibad" iscsi://127.0.0.1:1
expect_run "idm-initiator: --chap warns" 1 "warn: option --chap: every local user can read the secret" \
	"$IDM_INITIATOR" --chap "alice:$SECRET" -t 1 iscsi://127.0.0.1:1
grep -q -- "$SECRET" "$TMP/out" && fail "idm-initiator --chap: the secret is in the log"
expect_run "idm-initiator: --chap-algorithms bad" 2 "Try" \
	"$IDM_INITIATOR" --chap-algorithms md4 iscsi://127.0.0.1:1

# --- from a config file; the systemd credential
printf 'portal = 127.0.0.1:0\nlun = ram:1M\ncredentials = %s\n' "$TMP/c600" >"$TMP/t.conf"
expect_run "credentials = FILE in a config file" 0 "access: CHAP required" \
	"${BRIEF[@]}" "$IDM_TARGET" --log-target stderr -c "$TMP/t.conf"
mkdir -m 700 "$TMP/creds"
cred_file "$TMP/creds/idm-target.credentials" 400 "chap = alice:$SECRET"
expect_run "systemd credential read" 0 \
	"info: credentials: read $TMP/creds/idm-target.credentials \(systemd credential idm-target.credentials\)" \
	"${BRIEF[@]}" env CREDENTIALS_DIRECTORY="$TMP/creds" "${T[@]}"
grep -q "access: CHAP required" "$TMP/out" || fail "systemd credential: CHAP not required"
expect_run "--credentials wins over the systemd credential" 0 "access: CHAP required" \
	"${BRIEF[@]}" env CREDENTIALS_DIRECTORY="$TMP/creds" "${T[@]}" --credentials "$TMP/c600"
grep -q "credentials: read" "$TMP/out" && fail "systemd credential read although --credentials was given"
expect_run "no systemd credential: loopback only" 0 "info: access: loopback initiators only" \
	"${BRIEF[@]}" env CREDENTIALS_DIRECTORY="$TMP/none" "${T[@]}"
chmod 644 "$TMP/creds/idm-target.credentials"
expect_run "systemd credential 0644 refused" 2 "permissions 0644 are too open" \
	env CREDENTIALS_DIRECTORY="$TMP/creds" "${T[@]}"

# --- secrets where others read them: accepted, with a warning
expect_run "--chap warns" 0 \
	"warn: option --chap: every local user can read the secret \(ps, /proc/PID/cmdline\); outside tests keep it in a credentials file" \
	"${BRIEF[@]}" "${T[@]}" --chap "alice:$SECRET"
grep -q -- "$SECRET" "$TMP/out" && fail "--chap: the secret is in the log"
printf 'portal = 127.0.0.1:0\nlun = ram:1M\nchap = alice:%s\n' "$SECRET" >"$TMP/chap.conf"
expect_run "chap in a config file warns" 0 \
	"warn: $TMP/chap.conf:3: chap in the config file: keep the secret in a credentials file" \
	"${BRIEF[@]}" "$IDM_TARGET" --log-target stderr -c "$TMP/chap.conf"
grep -q -- "$SECRET" "$TMP/out" && fail "chap in a config file: the secret is in the log"
printf 'lun = ram:1M\nchap alice:%s\n' "$SECRET" >"$TMP/chap-bad.conf"
expect_run "a bad chap line in a config file is not quoted" 2 "chap-bad.conf:2: expected 'name = value'$" \
	"$IDM_TARGET" --log-target stderr -c "$TMP/chap-bad.conf"
grep -q -- "$SECRET" "$TMP/out" && fail "a bad chap line in a config file: the message shows the secret"

# --- allow-all, and the default
expect_run "default: loopback only" 0 \
	"info: access: loopback initiators only \(no CHAP, no allow-all\); see idm-target\(8\), SECURITY" \
	"${BRIEF[@]}" "${T[@]}"
expect_run "--allow-all warns" 0 \
	"warn: allow-all: every initiator that reaches a portal may log in and read and write every LUN, without authentication; iSCSI does not encrypt" \
	"${BRIEF[@]}" "${T[@]}" --allow-all
printf 'allow-all = yes\n' >"$TMP/yes.conf"
expect_run "allow-all = yes in a config file" 0 "warn: allow-all: every initiator" \
	"${BRIEF[@]}" "${T[@]}" -c "$TMP/yes.conf"
printf 'allow-all = no\n' >"$TMP/no.conf"
expect_run "allow-all = no in a config file" 0 "access: loopback initiators only" \
	"${BRIEF[@]}" "${T[@]}" -c "$TMP/no.conf"
printf '# x\n\nallow-all = maybe\n' >"$TMP/maybe.conf"
expect_run "allow-all = maybe" 2 "maybe.conf:3: allow-all = 'maybe': use yes or no" \
	"${T[@]}" -c "$TMP/maybe.conf"
expect_run "--allow-all with CHAP" 0 "allow-all: .* every LUN once CHAP passed" \
	"${BRIEF[@]}" "${T[@]}" --allow-all --credentials "$TMP/c600"

# --- the secret in no log line, whatever the login does
start_target "$TMP/t.log" --portal 127.0.0.1:0 --target-name "$IQN" --lun ram:1M \
	--credentials "$TMP/c600" --log-level debug
URL=127.0.0.1:$PORT/$IQN/1
if command -v iscsi-inq >/dev/null; then
	expect_out "CHAP: right secret (iscsi-inq)" "Vendor:LIBIDM" \
		iscsi-inq "iscsi://alice%$SECRET@$URL"
	expect_out "CHAP: wrong secret (iscsi-inq)" "Authentication failure" \
		iscsi-inq "iscsi://alice%not-the-secret@$URL"
else
	echo "note: iscsi-inq not installed (Debian package libiscsi-bin): CHAP logins not run"
fi
expect_run "CHAP: none (idm-initiator)" 1 "authentication failure \(0x0201\)" \
	"$IDM_INITIATOR" --no-discovery "iscsi://$URL"
cred_file "$TMP/i600" 600 "chap = alice:$SECRET"
expect_run "CHAP: right secret (idm-initiator)" 0 "full feature phase" \
	"$IDM_INITIATOR" -vv --log-level debug --credentials "$TMP/i600" "iscsi://$URL"
grep -q -- "$SECRET" "$TMP/out" && fail "idm-initiator at debug level: the secret is in its log"
cred_file "$TMP/i600w" 600 "chap = alice:not-the-secret"
expect_run "CHAP: wrong secret (idm-initiator)" 1 "authentication failure \(0x0201\)" \
	"$IDM_INITIATOR" --credentials "$TMP/i600w" "iscsi://$URL"
stop_target
grep -q "login failed (0x0201)" "$TMP/t.log" || fail "no failed CHAP login in the target log"
if grep -n -- "$SECRET" "$TMP/t.log"; then
	fail "the secret is in the target log (above)"
else
	echo "ok: the secret is in none of the $(wc -l <"$TMP/t.log") lines of the target log"
fi
finish
