#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Protected by default (doc/idm-target.md, "Security"), from a second
# address: the test makes a network namespace of its own with a veth pair,
# idm-target on one end (10.211.0.1, and loopback) and the initiators in a
# second namespace on the other (10.211.0.2). Without CHAP and allow-all:
# loopback (127.0.0.1 as ::ffff:127.0.0.1 on a [::] portal, and ::1)
# logs in; 10.211.0.2 is refused with 0x0202 and one log line that says
# how to open the target, and its discovery lists no target (idm-initiator,
# and libiscsi's iscsi-inq and iscsi-ls when installed). With CHAP from a
# credentials file, 10.211.0.2 logs in with the secret (iscsi-inq) and
# gets 0x0201 without it. With --allow-all, or allow-all = yes in a
# config file, 10.211.0.2 logs in, discovers and writes.
# Exits 77 without a network namespace (CAP_NET_ADMIN: root, or
# unprivileged user namespaces) or a veth pair.
# usage: protected.sh IDM_TARGET IDM_INITIATOR
IDM_TARGET=$(realpath "$1")
IDM_INITIATOR=$(realpath "$2")

# Run again inside a network namespace of our own, bounded: nothing the
# test sets up outlives it, and the host's network is not touched.
# shellcheck source-path=SCRIPTDIR source=../../lib/netns.sh
. "$(dirname "$0")/../../lib/netns.sh"
netns_reexec IDM_PROTECTED_NETNS 100 "$0" "$IDM_TARGET" "$IDM_INITIATOR"

IDM_TEST_NAME=idm-target-protected
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
IQN=iqn.2026-11.org.libidm:protected
T_IP=10.211.0.1
I_IP=10.211.0.2
SECRET=Pr0tected-test-secret-42

# --- the network: lo, and a veth pair to the initiators' namespace
netns_peer "$T_IP" "$I_IP"
# one portal for every case: [::] (IPv4 peers as ::ffff:a.b.c.d), or
# 0.0.0.0 where IPv6 is off
if [ -e /proc/net/if_inet6 ] && ip -6 addr show dev lo | grep -q "::1"; then
	PORTAL="[::]:0" V6=1
else
	PORTAL="0.0.0.0:0" V6=0
	echo "note: no IPv6 here: ::1 and IPv4-mapped loopback not checked"
fi

# target LOG ARGS...: idm-target on $PORTAL; sets PORT and TGT_PID, and
# waits until the initiators' namespace reaches it
target() {
	TGT_LOG=$1
	IDM_TARGET_STDOUT=/dev/null idm_target_start "$1" 5 --portal "$PORTAL" \
		--target-name "$IQN" --lun ram:16M -v "${@:2}"
	PIDS="$PIDS $TGT_PID"
	netns_reach "$T_IP" "$PORT"
}
# log_count LOG PATTERN: lines of LOG matching the extended regex
log_count() { grep -Ec -- "$2" "$1"; }
HAVE_LIBISCSI=0
command -v iscsi-inq >/dev/null && command -v iscsi-ls >/dev/null && HAVE_LIBISCSI=1
[ "$HAVE_LIBISCSI" = 1 ] || echo "note: libiscsi-bin not installed: iscsi-inq/iscsi-ls cases not run"
FROM_I=("${IN_PEER[@]}")
REMOTE=iscsi://$T_IP

# --- protected: no CHAP, no allow-all
LOG=$TMP/protected.log
target "$LOG"
check "start-up: loopback initiators only" grep -q "info: access: loopback initiators only" "$LOG"
expect_rc "127.0.0.1: verified write" 0 "verify: .*: OK" \
	"$IDM_INITIATOR" --verify 64k "iscsi://127.0.0.1:$PORT/$IQN/1"
if [ "$V6" = 1 ]; then
	check "127.0.0.1 logged in as ::ffff:127.0.0.1 (IPv4-mapped loopback)" \
		grep -q "\[::ffff:127.0.0.1\]:[0-9]*: normal session" "$LOG"
	expect_rc "::1: verified write" 0 "verify: .*: OK" \
		"$IDM_INITIATOR" --verify 64k "iscsi://[::1]:$PORT/$IQN/1"
fi
REFUSED="login failed \(0x0202\): iqn.2026-11.org.libidm:initiator from (::ffff:)?$I_IP: without CHAP or allow-all only loopback initiators may log in; to serve others require CHAP \(--credentials FILE\) or set allow-all \(--allow-all, or allow-all = yes in the config file\)$"
expect_rc "$I_IP: login refused" 1 "login refused: initiator error: authorization failure \(0x0202\)" \
	"${FROM_I[@]}" "$IDM_INITIATOR" --no-discovery "$REMOTE:$PORT/$IQN/1"
check "one log line for it, saying how to open the target" [ "$(log_count "$LOG" "$REFUSED")" = 1 ]
grep -E -m1 -- "$REFUSED" "$LOG" | sed 's/^/     /'
expect_rc "$I_IP: discovery lists no target" 1 "reports no targets" \
	"${FROM_I[@]}" "$IDM_INITIATOR" "$REMOTE:$PORT"
check "$I_IP: no Target: line" ! grep -q "Target: " "$TMP/out"
UNLISTED="SendTargets: $IQN not listed: iqn.2026-11.org.libidm:initiator from (::ffff:)?$I_IP: without CHAP or allow-all"
check "SendTargets: why it listed nothing, in the log" grep -Eq -- "$UNLISTED" "$LOG"
grep -E -m1 -- "$UNLISTED" "$LOG" | sed 's/^/     /'
if [ "$HAVE_LIBISCSI" = 1 ]; then
	timeout 20 "${FROM_I[@]}" iscsi-inq -i iqn.2026-11.org.libidm:inq "$REMOTE:$PORT/$IQN/1" \
		>"$TMP/inq" 2>&1
	check "$I_IP: iscsi-inq refused: Authorization failure" grep -q "Authorization failure" "$TMP/inq"
	sed 's/^/     /' "$TMP/inq" | head -3
	check "iscsi-inq's refusal in the log" grep -Eq "login failed \(0x0202\): iqn.2026-11.org.libidm:inq from" "$LOG"
	timeout 20 "${FROM_I[@]}" iscsi-ls "$REMOTE:$PORT" >"$TMP/ls" 2>&1
	if grep -q "Target:" "$TMP/ls"; then
		echo "FAIL $I_IP: iscsi-ls lists a target:"; sed 's/^/     /' "$TMP/ls"
		fails=$((fails + 1))
	else
		echo "ok   $I_IP: iscsi-ls lists no target"
	fi
	expect "127.0.0.1: iscsi-ls lists the target" "Target:$IQN" iscsi-ls "iscsi://127.0.0.1:$PORT"
fi
target_alive
stop_pid "$TGT_PID"

# --- CHAP from a credentials file: any address, with the secret
(umask 077 && printf 'chap = alice:%s\n' "$SECRET" >"$TMP/creds")
LOG=$TMP/chap.log
target "$LOG" --credentials "$TMP/creds"
expect_rc "$I_IP, CHAP, no secret: authentication failure" 1 "authentication failure \(0x0201\)" \
	"${FROM_I[@]}" "$IDM_INITIATOR" --no-discovery "$REMOTE:$PORT/$IQN/1"
if [ "$HAVE_LIBISCSI" = 1 ]; then
	expect "$I_IP, CHAP, right secret: iscsi-inq" "Vendor:LIBIDM" \
		"${FROM_I[@]}" iscsi-inq "iscsi://alice%$SECRET@$T_IP:$PORT/$IQN/1"
	expect "$I_IP, CHAP, right secret: iscsi-ls" "Target:$IQN" \
		"${FROM_I[@]}" iscsi-ls "iscsi://alice%$SECRET@$T_IP:$PORT"
	expect "$I_IP, CHAP, wrong secret: iscsi-inq" "Authentication failure" \
		"${FROM_I[@]}" iscsi-inq "iscsi://alice%not-the-secret@$T_IP:$PORT/$IQN/1"
fi
check "CHAP: no 0x0202 refusal" ! grep -q "(0x0202)" "$LOG"
check "CHAP: the secret is not in the target log" ! grep -q -- "$SECRET" "$LOG"
target_alive
stop_pid "$TGT_PID"

# --- allow-all: everyone, with a warning at start-up
LOG=$TMP/allow-all.log
target "$LOG" --allow-all
check "allow-all: the start-up warning" grep -q "warn: allow-all: every initiator that reaches a portal may log in" "$LOG"
grep -m1 "warn: allow-all" "$LOG" | sed 's/^/     /'
expect_rc "$I_IP, allow-all: discovery, verified write" 0 "verify: .*: OK" \
	"${FROM_I[@]}" "$IDM_INITIATOR" --verify 64k "$REMOTE:$PORT/$IQN/1"
check "allow-all: $IQN discovered" grep -q "^Target: $IQN" "$TMP/out"
[ "$HAVE_LIBISCSI" = 1 ] &&
	expect "$I_IP, allow-all: iscsi-ls" "Target:$IQN" "${FROM_I[@]}" iscsi-ls "$REMOTE:$PORT"
expect_rc "127.0.0.1, allow-all: verified write" 0 "verify: .*: OK" \
	"$IDM_INITIATOR" --verify 64k "iscsi://127.0.0.1:$PORT/$IQN/1"
check "allow-all: no 0x0202 refusal" ! grep -q "(0x0202)" "$LOG"
target_alive
stop_pid "$TGT_PID"

# --- allow-all = yes in a config file
printf 'allow-all = yes\n' >"$TMP/allow.conf"
LOG=$TMP/allow-conf.log
target "$LOG" -c "$TMP/allow.conf"
expect_rc "$I_IP, allow-all = yes: login" 0 "LUN 1: type 0x00" \
	"${FROM_I[@]}" "$IDM_INITIATOR" --no-discovery "$REMOTE:$PORT/$IQN/1"
target_alive
stop_pid "$TGT_PID"

[ "$fails" = 0 ] || exit 1
echo PASS
