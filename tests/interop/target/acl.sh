#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Initiator ACLs (doc/idm-target.md, "Initiator ACLs"), from loopback and
# from a second address: the test makes a network namespace of its own
# with a veth pair, idm-target on one end (10.212.0.1, fd21::1, and
# loopback) and the initiators in a second namespace on the other
# (10.212.0.2, fd21::2). Checked with idm-initiator, libiscsi's iscsi-inq,
# iscsi-ls and iscsi-readcapacity16 (when installed) and a raw Python peer:
#   - by name: only the named initiator logs in, from any address;
#     loopback is not special once there are rules; refusals are 0x0202
#     with one log line;
#   - by address (IPv4 address, IPv4-mapped peers of a [::] portal, an
#     IPv6 prefix): only the named addresses log in;
#   - discovery lists the target only to whom may log in;
#   - luns=: REPORT LUNS lists only the granted LUNs, another LUN answers
#     LOGICAL UNIT NOT SUPPORTED;
#   - SIGHUP: a session whose rule went is asked to log out (Async
#     Message, AsyncEvent 1) and closed if it does not within 5 s; a
#     session whose LUNs changed goes on; a file with an error changes
#     nothing.
# (Rules refused at start-up: tests/cli/bad_input.sh.)
# Exits 77 without a network namespace (CAP_NET_ADMIN: root, or
# unprivileged user namespaces) or a veth pair.
# usage: acl.sh IDM_TARGET IDM_INITIATOR
IDM_TARGET=$(realpath "$1")
IDM_INITIATOR=$(realpath "$2")
PEER=$(dirname "$(realpath "$0")")/acl_peer.py

# shellcheck source-path=SCRIPTDIR source=../../lib/netns.sh
. "$(dirname "$0")/../../lib/netns.sh"
netns_reexec IDM_ACL_NETNS 150 "$0" "$IDM_TARGET" "$IDM_INITIATOR"

IDM_TEST_NAME=idm-target-acl
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
need python3
IQN=iqn.2026-11.org.libidm:acl
H1=iqn.1994-05.com.example:host1
H2=iqn.1994-05.com.example:host2
T_IP=10.212.0.1
I_IP=10.212.0.2

netns_peer "$T_IP" "$I_IP"
V6=0
if [ -e /proc/net/if_inet6 ] && ip -6 addr show dev lo | grep -q "::1" &&
	ip -6 addr add fd21::1/64 dev "$NETNS_DEV" nodad 2>/dev/null &&
	"${IN_PEER[@]}" ip -6 addr add fd21::2/64 dev idm-p nodad 2>/dev/null; then
	PORTAL="[::]:0" V6=1
else
	PORTAL="0.0.0.0:0"
	echo "note: no IPv6 here: IPv6 rules and IPv4-mapped peers not checked"
fi

# target LOG ARGS...: idm-target on $PORTAL with LUNs 1, 2 and 5; sets
# PORT and TGT_PID, and waits until the initiators' namespace reaches it
target() {
	TGT_LOG=$1
	IDM_TARGET_STDOUT=/dev/null idm_target_start "$1" 5 --portal "$PORTAL" \
		--target-name "$IQN" --lun ram:16M --lun ram:16M --lun 5=ram:8M -v "${@:2}"
	PIDS="$PIDS $TGT_PID"
	netns_reach "$T_IP" "$PORT"
}
# wait_count PATTERN N SECS: until N lines of the target log match
# (SECS, scaled, is a hang guard)
wait_count() {
	for _ in $(seq $(($(scaled "$3") * 10))); do
		[ "$(grep -Ec -- "$1" "$TGT_LOG")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
# wait_log PATTERN SECS: until the target log (TGT_LOG) matches (SECS,
# scaled, is a hang guard)
wait_log() {
	for _ in $(seq $(($(scaled "$2") * 10))); do
		grep -Eq -- "$1" "$TGT_LOG" && return 0
		sleep 0.1
	done
	return 1
}
HAVE_LIBISCSI=0
command -v iscsi-inq >/dev/null && command -v iscsi-ls >/dev/null &&
	command -v iscsi-readcapacity16 >/dev/null && HAVE_LIBISCSI=1
[ "$HAVE_LIBISCSI" = 1 ] || echo "note: libiscsi-bin not installed: iscsi-inq/iscsi-ls cases not run"
FROM_I=("${IN_PEER[@]}")
INI=("$IDM_INITIATOR" --replacement-timeout 0)
REFUSED="authorization failure \(0x0202\)"

# --- by name: host1 from anywhere, nobody else (loopback included)
log "by name"
LOG=$TMP/name.log
target "$LOG" --acl "$H1 *"
check "start-up: the rules are in force" grep -q "info: access: 1 initiator ACL rule(s)" "$LOG"
expect_rc "127.0.0.1 as host1: discovery, verified write" 0 "verify: .*: OK" \
	"${INI[@]}" -n "$H1" --verify 64k "iscsi://127.0.0.1:$PORT/$IQN/1"
check "127.0.0.1 as host1: $IQN discovered" grep -q "^Target: $IQN" "$TMP/out"
expect_rc "$I_IP as host1: verified write" 0 "verify: .*: OK" \
	"${FROM_I[@]}" "${INI[@]}" -n "$H1" --no-discovery --verify 64k "iscsi://$T_IP:$PORT/$IQN/1"
expect_rc "127.0.0.1 as host2: refused, loopback or not" 1 "$REFUSED" \
	"${INI[@]}" -n "$H2" --no-discovery "iscsi://127.0.0.1:$PORT/$IQN/1"
LINE="login failed \(0x0202\): $H2 from (::ffff:)?127.0.0.1: no initiator ACL rule allows it; to serve it add one \(--acl, or acl = NAME ADDRESS in the config file\)$"
check "one log line for it, saying how to open" [ "$(grep -Ec -- "$LINE" "$LOG")" = 1 ]
expect_rc "127.0.0.1 as host2: discovery lists no target" 1 "reports no targets" \
	"${INI[@]}" -n "$H2" "iscsi://127.0.0.1:$PORT"
check "SendTargets: why, in the log" grep -Eq "SendTargets: $IQN not listed: $H2 from" "$LOG"
if [ "$HAVE_LIBISCSI" = 1 ]; then
	expect "$I_IP: iscsi-inq as host1" "Vendor:LIBIDM" \
		"${FROM_I[@]}" iscsi-inq -i "$H1" "iscsi://$T_IP:$PORT/$IQN/1"
	expect "$I_IP: iscsi-inq as host2: Authorization failure" "Authorization failure" \
		"${FROM_I[@]}" iscsi-inq -i "$H2" "iscsi://$T_IP:$PORT/$IQN/1"
	expect "$I_IP: iscsi-ls as host1 lists the target" "Target:$IQN" \
		"${FROM_I[@]}" iscsi-ls -i "$H1" "iscsi://$T_IP:$PORT"
	timeout 20 "${FROM_I[@]}" iscsi-ls -i "$H2" "iscsi://$T_IP:$PORT" >"$TMP/ls" 2>&1
	check "$I_IP: iscsi-ls as host2 lists no target" ! grep -q "Target:" "$TMP/ls"
fi
target_alive
stop_pid "$TGT_PID"

# --- by address: 10.212.0.2 (and fd21::/64), whatever the name
log "by address"
LOG=$TMP/addr.log
ARGS=(--acl "* $I_IP")
[ "$V6" = 1 ] && ARGS+=(--acl "* [fd21::]/64")
target "$LOG" "${ARGS[@]}"
expect_rc "$I_IP: discovery, verified write" 0 "verify: .*: OK" \
	"${FROM_I[@]}" "${INI[@]}" --verify 64k "iscsi://$T_IP:$PORT/$IQN/1"
check "$I_IP: $IQN discovered" grep -q "^Target: $IQN" "$TMP/out"
[ "$V6" = 1 ] && check "$I_IP logged in as ::ffff:$I_IP (IPv4 rule, mapped peer)" \
	grep -q "\[::ffff:$I_IP\]:[0-9]*: normal session" "$LOG"
expect_rc "127.0.0.1: refused" 1 "$REFUSED" \
	"${INI[@]}" --no-discovery "iscsi://127.0.0.1:$PORT/$IQN/1"
expect_rc "$T_IP (the target's own end): refused" 1 "$REFUSED" \
	"${INI[@]}" --no-discovery "iscsi://$T_IP:$PORT/$IQN/1"
expect_rc "127.0.0.1: discovery lists no target" 1 "reports no targets" \
	"${INI[@]}" "iscsi://127.0.0.1:$PORT"
if [ "$V6" = 1 ]; then
	expect_rc "fd21::2: verified write" 0 "verify: .*: OK" \
		"${FROM_I[@]}" "${INI[@]}" --no-discovery --verify 64k "iscsi://[fd21::1]:$PORT/$IQN/1"
	expect_rc "::1: refused" 1 "$REFUSED" \
		"${INI[@]}" --no-discovery "iscsi://[::1]:$PORT/$IQN/1"
fi
if [ "$HAVE_LIBISCSI" = 1 ]; then
	expect "$I_IP: iscsi-inq" "Vendor:LIBIDM" \
		"${FROM_I[@]}" iscsi-inq -i "$H2" "iscsi://$T_IP:$PORT/$IQN/1"
	expect "127.0.0.1: iscsi-inq: Authorization failure" "Authorization failure" \
		iscsi-inq -i "$H1" "iscsi://127.0.0.1:$PORT/$IQN/1"
fi
target_alive
stop_pid "$TGT_PID"

# --- luns=: host1 sees 1 and 5, host2 everything
log "LUN masking"
LOG=$TMP/luns.log
target "$LOG" --acl "$H1 * luns=1,5" --acl "$H2 127.0.0.0/8"
expect_rc "host1: REPORT LUNS lists 1 and 5" 0 "^LUNs: 1 5$" \
	"${INI[@]}" -n "$H1" --no-discovery "iscsi://127.0.0.1:$PORT/$IQN"
expect_rc "host2: REPORT LUNS lists 1, 2 and 5" 0 "^LUNs: 1 2 5$" \
	"${INI[@]}" -n "$H2" --no-discovery "iscsi://127.0.0.1:$PORT/$IQN"
expect_rc "host1: LUN 2 is no device" 1 "LUN 2: type 0x1f \(no device\)" \
	"${INI[@]}" -n "$H1" --no-discovery --verify 64k "iscsi://127.0.0.1:$PORT/$IQN/2"
expect_rc "host1: verified write to LUN 5" 0 "verify: .*: OK" \
	"${FROM_I[@]}" "${INI[@]}" -n "$H1" --no-discovery --verify 64k "iscsi://$T_IP:$PORT/$IQN/5"
if [ "$HAVE_LIBISCSI" = 1 ]; then
	timeout 20 iscsi-ls -s -i "$H1" "iscsi://127.0.0.1:$PORT" >"$TMP/ls" 2>&1
	check "iscsi-ls -s as host1: LUNs 1 and 5 only" \
		[ "$(grep -o "Lun:[0-9]*" "$TMP/ls" | tr '\n' ' ')" = "Lun:1 Lun:5 " ]
	sed 's/^/     /' "$TMP/ls"
	expect "iscsi-readcapacity16 as host1, LUN 2: LOGICAL UNIT NOT SUPPORTED" \
		"LOGICAL_UNIT_NOT_SUPPORTED" iscsi-readcapacity16 -i "$H1" "iscsi://127.0.0.1:$PORT/$IQN/2"
	expect "iscsi-readcapacity16 as host2, LUN 2" "Total size:16777216" \
		iscsi-readcapacity16 -i "$H2" "iscsi://127.0.0.1:$PORT/$IQN/2"
fi
target_alive
stop_pid "$TGT_PID"

# --- SIGHUP
log "SIGHUP"
CONF=$TMP/acl.conf
printf '# host1 on loopback, host2 from the peer\nacl = %s 127.0.0.0/8 luns=1,2\nacl = %s %s\n' \
	"$H1" "$H2" "$I_IP" >"$CONF"
LOG=$TMP/hup.log
target "$LOG" -c "$CONF"
# three sessions of host1 (the Python peer that ignores the request, one
# that logs out, idm-initiator running a benchmark) and one of host2 (a
# benchmark from the peer namespace)
python3 "$PEER" ignore 127.0.0.1 "$PORT" "$IQN" "$H1" 1 >"$TMP/ignore.out" 2>&1 &
P_IGNORE=$!
python3 "$PEER" logout 127.0.0.1 "$PORT" "$IQN" "$H1" 2 >"$TMP/logout.out" 2>&1 &
P_LOGOUT=$!
PIDS="$PIDS $P_IGNORE $P_LOGOUT"
for _ in $(seq 150); do
	grep -q "logged in" "$TMP/ignore.out" && grep -q "logged in" "$TMP/logout.out" && break
	sleep 0.1
done
check "the raw peers logged in" grep -q "logged in" "$TMP/ignore.out" "$TMP/logout.out"
timeout 60 "${INI[@]}" -n "$H1" --no-discovery --bench --duration 40 --qd 2 \
	"iscsi://127.0.0.1:$PORT/$IQN/1" >"$TMP/bench1.out" 2>&1 &
P_BENCH=$!
timeout 60 "${FROM_I[@]}" "${INI[@]}" -n "$H2" --no-discovery --bench --duration 12 --qd 2 \
	"iscsi://$T_IP:$PORT/$IQN/1" >"$TMP/bench2.out" 2>&1 &
P_BENCH2=$!
PIDS="$PIDS $P_BENCH $P_BENCH2"
# (idm-initiator opens a first session for its checks, then the
# benchmark's)
check "host1's benchmark runs" wait_count "normal session .* for $H1" 4 30
check "host2's benchmark runs" wait_count "normal session .* for $H2" 2 30
# a file with an error: nothing changes
printf 'acl = %s 127.0.0.0/8\nacl = %s 10.212.0.0/33\n' "$H2" "$H1" >"$CONF"
kill -HUP "$TGT_PID"
check "bad file: refused with file:line" wait_log "error: $CONF:2: '10.212.0.0/33': the prefix length of an IPv4 address is 0 to 32" 30
check "bad file: nothing reloaded" wait_log "reload failed: LUNs and acl rules unchanged" 30
check "bad file: no session asked to leave" ! grep -q "lost access" "$LOG"
expect_rc "bad file: host1 still logs in" 0 "LUN 1: type 0x00" \
	"${INI[@]}" -n "$H1" --no-discovery "iscsi://127.0.0.1:$PORT/$IQN/1"
# allow-all with rules: refused, nothing changes
printf 'allow-all = yes\nacl = %s *\n' "$H2" >"$CONF"
kill -HUP "$TGT_PID"
check "allow-all with rules: refused" wait_log "reload: acl rules and allow-all exclude each other" 30
# host1 loses access; host2 keeps it with LUN 1 only
printf 'acl = %s %s luns=1\n' "$H2" "$I_IP" >"$CONF"
kill -HUP "$TGT_PID"
check "reload: one rule in force" wait_log "reload: 1 acl rule\(s\) in force" 30
check "host2's session: new LUNs, not logged out" wait_log "initiator ACLs changed the LUNs $H2 sees" 30
check "the three sessions of host1 asked to log out" \
	wait_count "lost access, logout requested within 5 s" 3 30
grep -m1 "lost access" "$LOG" | sed 's/^/     /'
timeout 15 tail --pid="$P_LOGOUT" -f /dev/null
check "raw peer that logs out: Async request, Logout Response, closed" \
	grep -Pzq "async logout request: parameter3 5\nlogout response 0\nclosed\n" "$TMP/logout.out"
sed 's/^/     /' "$TMP/logout.out"
timeout 15 tail --pid="$P_IGNORE" -f /dev/null
wait "$P_IGNORE"
check "raw peer that does not log out: closed by the target" [ $? = 0 ]
sed 's/^/     /' "$TMP/ignore.out"
S=$(sed -n 's/^closed after \([0-9.]*\) s$/\1/p' "$TMP/ignore.out")
check "  ... after the 5 s it was given, not much later" \
	awk -v s="${S:-0}" 'BEGIN { exit !(s >= 4.5 && s < 8) }'
check "  ... the target said why" grep -q "closing connection: no logout after the request: access lost" "$LOG"
timeout 15 tail --pid="$P_BENCH" -f /dev/null
wait "$P_BENCH"
RC=$?
check "idm-initiator (host1): left at the request (exit $RC)" \
	[ "$RC" = 1 ] && grep -q "target requested a logout within 5 s" "$TMP/bench1.out"
grep -m1 "target requested a logout" "$TMP/bench1.out" | sed 's/^/     /'
timeout 30 tail --pid="$P_BENCH2" -f /dev/null
wait "$P_BENCH2"
check "idm-initiator (host2): its benchmark on LUN 1 ran to its end" [ $? = 0 ]
expect_rc "after the reload host1 is refused" 1 "$REFUSED" \
	"${INI[@]}" -n "$H1" --no-discovery "iscsi://127.0.0.1:$PORT/$IQN/1"
expect_rc "after the reload host2 sees LUN 1 only" 0 "^LUNs: 1$" \
	"${FROM_I[@]}" "${INI[@]}" -n "$H2" --no-discovery "iscsi://$T_IP:$PORT/$IQN"
# no rules left: the default protection is back (loopback only)
printf '# no acl\n' >"$CONF"
kill -HUP "$TGT_PID"
check "reload without rules: loopback only again" wait_log "reload: 0 acl rule\(s\) in force" 30
expect_rc "  ... host1 on loopback logs in" 0 "LUN 1: type 0x00" \
	"${INI[@]}" -n "$H1" --no-discovery "iscsi://127.0.0.1:$PORT/$IQN/1"
expect_rc "  ... host2 from $I_IP is refused" 1 "$REFUSED" \
	"${FROM_I[@]}" "${INI[@]}" -n "$H2" --no-discovery "iscsi://$T_IP:$PORT/$IQN/1"
target_alive
stop_pid "$TGT_PID"

[ "$fails" = 0 ] || exit 1
echo PASS
