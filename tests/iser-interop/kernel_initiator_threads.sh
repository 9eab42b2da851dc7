#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The Linux kernel's iSER initiator (open-iscsi + ib_iser) against
# idm-target --threads 2 --provider tcp,iser: iSER listens on loop 0
# alone, and each new iSER session is moved to the next loop in turn
# before its final Login Response (idm_conn_move on iSER).
#  1. 4 kernel sessions (node.session.nr_sessions) to one RAM LUN: the
#     SIGUSR1 dump must show iSER connections in full feature phase on
#     both loops; each session's disk writes 8 MiB of its own with
#     O_DIRECT and the next session's disk reads it back, while
#     idm-initiator verifies 8 MiB over TCP on a second LUN;
#  2. idm-target is stopped (SIGSTOP) until the kernel's NOP-Outs time
#     out, then continued: every session logs in again (idm-target ended
#     them with their connections, so new ones, placed again), the data
#     written before reads back and new data is verified;
#  3. session reinstatement crossing loops: idm-initiator over iSER
#     (--isid) starts two sessions, one placed on each loop, and is
#     frozen; a second run with the same name and ISIDs reinstates both,
#     with a verified write and read-back; its connections all arrive on
#     loop 0, and the one whose old session is on loop 1 must finish its
#     login there;
#  4. logout of every session, idm-target exits 0 on SIGTERM.
# Usage: kernel_initiator_threads.sh PATH/TO/idm-target PATH/TO/idm-initiator
IDM_TEST_NAME=idm-iser-kernel-threads
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
IDM_TARGET=${1:?usage: $0 idm-target idm-initiator}
IDM_INITIATOR=${2:?usage: $0 idm-target idm-initiator}
# shellcheck source-path=SCRIPTDIR source=open-iscsi.sh
. "$(dirname "$0")/open-iscsi.sh"
need_rdma

NSESS=4
MIB_EACH=8
IQN=iqn.2026-11.org.libidm:kernel-iser-threads

iscsid_start
idm_target_start "$TMP/target.log" 30 --provider tcp,iser --portal "$IP:0" \
	--target-name "$IQN" --lun ram:64M --lun ram:16M --allow-all --threads 2 -v
log "idm-target --threads 2 (tcp,iser) listens on $IP:$PORT"
PORTAL=$IP:$PORT

# iscsi_devs: the disks of LUN 1 (the 64 MiB one) of every logged-in
# session, one a line, in session order; returns 1 until there are $NSESS.
iscsi_devs() {
	local blk out=()
	for blk in /sys/class/iscsi_session/session*/device/target*/*/block/*; do
		[ -e "$blk" ] && [ -b "/dev/${blk##*/}" ] &&
			[ "$(cat "$blk/size")" = $((64 << 11)) ] && out+=("/dev/${blk##*/}")
	done
	[ "${#out[@]}" -eq "$NSESS" ] || return 1
	printf '%s\n' "${out[@]}"
}

# wait_devs SECS: DEVS holds the $NSESS disks, or fail.
wait_devs() {
	local i
	for ((i = 0; i < $1 * 2; i++)); do
		if iscsi_devs >"$TMP/devs"; then
			mapfile -t DEVS <"$TMP/devs"
			return 0
		fi
		sleep 0.5
	done
	iscsiadm -m session 2>&1 | sed 's/^/   | /'
	fail "fewer than $NSESS disks after $1 s"
}

# write_region I SEED: 8 MiB of random data at I * 8 MiB through disk I
write_region() {
	head -c $((MIB_EACH << 20)) /dev/urandom >"$TMP/pat$1"
	timeout 120 dd if="$TMP/pat$1" of="${DEVS[$1]}" bs=1M seek=$(($1 * MIB_EACH)) \
		oflag=direct conv=fsync status=none || fail "O_DIRECT write to ${DEVS[$1]}"
}

# check_region I: region I read back through the next session's disk
check_region() {
	local via=${DEVS[$((($1 + 1) % NSESS))]}
	timeout 120 dd if="$via" of="$TMP/back" bs=1M skip=$(($1 * MIB_EACH)) \
		count="$MIB_EACH" iflag=direct status=none || fail "O_DIRECT read from $via"
	cmp -s "$TMP/pat$1" "$TMP/back" ||
		fail "region $1 written through ${DEVS[$1]} reads back differently through $via"
}

verify_all() {
	local i
	for ((i = 0; i < NSESS; i++)); do write_region "$i"; done
	for ((i = 0; i < NSESS; i++)); do check_region "$i"; done
	log "$NSESS x $MIB_EACH MiB written through one session, read back through another: OK"
	target_alive
}

# iser_on_loop N: iSER connections in full feature phase on loop N in the
# last SIGUSR1 dump
iser_on_loop() {
	grep -o "stats loop $1 [^ ]* iser full-feature" "$TMP/target.log" | sort -u | wc -l
}

log "pass 1: $NSESS sessions over iSER, TCP alongside"
CLEANUP_CMDS+=("timeout 30 iscsiadm -m discoverydb -t st -p $PORTAL -I iser -o delete")
CLEANUP_CMDS+=("timeout 30 iscsiadm -m node -T $IQN -p $PORTAL -o delete")
CLEANUP_CMDS+=("timeout 60 iscsiadm -m node -T $IQN -p $PORTAL --logout")
run_bounded 60 "$TMP/disc" iscsiadm -m discovery -t sendtargets -p "$PORTAL" -I iser ||
	fail "discovery"
for kv in node.session.nr_sessions="$NSESS" \
	"node.conn[0].timeo.noop_out_interval=1" "node.conn[0].timeo.noop_out_timeout=2"; do
	iscsiadm -m node -T "$IQN" -p "$PORTAL" -I iser -o update -n "${kv%%=*}" -v "${kv#*=}" ||
		fail "iscsiadm: cannot set ${kv%%=*}"
done
run_bounded 120 "$TMP/login" iscsiadm -m node -T "$IQN" -p "$PORTAL" -I iser --login ||
	fail "login"
wait_devs 60
log "disks: ${DEVS[*]}"
timeout 60 "$IDM_INITIATOR" --no-discovery -q --verify 8M "iscsi://$IP:$PORT/$IQN/2" \
	>"$TMP/tcp_verify.out" 2>&1 &
tcp_v=$!
verify_all
wait "$tcp_v" || { cat "$TMP/tcp_verify.out"; fail "idm-initiator over TCP failed"; }
grep -Eq "verify: .*: OK" "$TMP/tcp_verify.out" || fail "the TCP verify did not say OK"
log "idm-initiator over TCP on LUN 2 alongside: OK"
# Each loop prints its own connections when it next runs: wait for the
# dump to name as many as there are sessions (or the bound), then assert.
iser_dumped() { [ $(($(iser_on_loop 0) + $(iser_on_loop 1))) -ge "$NSESS" ]; }
kill -USR1 "$TGT_PID"
wait_until 30 iser_dumped || true
n0=$(iser_on_loop 0)
n1=$(iser_on_loop 1)
placed=$(grep -c "new iSER session placed on loop" "$TMP/target.log")
log "SIGUSR1: $n0 iSER connection(s) on loop 0, $n1 on loop 1; $placed session(s) moved at login"
if [ "$n0" -lt 1 ] || [ "$n1" -lt 1 ]; then
	fail "iSER sessions not spread over both loops"
fi
[ $((n0 + n1)) -eq "$NSESS" ] || fail "$((n0 + n1)) iSER connections, not $NSESS"

log "pass 2: the kernel's sessions after idm-target stalled"
placed0=$(grep -c "new iSER session placed on loop" "$TMP/target.log")
kill -STOP "$TGT_PID"
log "idm-target stopped until the NOP-Outs time out"
sleep 6
kill -CONT "$TGT_PID"
# Linux logs in again with the session's TSIH; idm-target ended each
# session with its connection (ERL 0), so the kernel starts new ones,
# placed on the loops again
for ((i = 0; i < 120; i++)); do
	[ "$(iscsiadm -m session -P 1 2>/dev/null | grep -c 'iSCSI Session State: LOGGED_IN')" -eq "$NSESS" ] &&
		[ "$(grep -c "new iSER session placed on loop" "$TMP/target.log")" -gt "$placed0" ] && break
	sleep 0.5
done
iscsiadm -m session -P 1 2>/dev/null | grep -E 'iSCSI Session State' | sort | uniq -c | sed 's/^/   | /'
[ "$(iscsiadm -m session -P 1 2>/dev/null | grep -c 'iSCSI Session State: LOGGED_IN')" -eq "$NSESS" ] ||
	fail "not every session logged in again"
log "$(($(grep -c "new iSER session placed on loop" "$TMP/target.log") - placed0)) session(s) placed again"
wait_devs 30
for ((i = 0; i < NSESS; i++)); do check_region "$i"; done
log "the data written before reads back after the reconnections"
verify_all

log "pass 3: session reinstatement crossing loops (idm-initiator over iSER)"
# Run A's two sessions start one after the other, so one is placed on
# each loop; A is frozen, and run B, with the same initiator name and
# ISIDs, reinstates both: its connections arrive on loop 0, and the one
# whose old session is on loop 1 must finish its login there.
INAME=iqn.2026-11.org.libidm:reinstater
ISID=80aabbccdd00
URL=iser://$IP:$PORT/$IQN/2
INI=("$IDM_INITIATOR" -n "$INAME" --isid "$ISID" --no-discovery -q --replacement-timeout 0)
nsess() { grep -c "normal session tsih" "$TMP/target.log"; }
n_before=$(nsess)
# Not under timeout(1): $! must be idm-initiator itself, or SIGSTOP would
# freeze only the wrapper and leave run A's I/O going on through run B.
# Its --duration and the exit handler bound it.
"${INI[@]}" --noop-out-interval 0 --bench --sessions 2 --qd 2 --read-pct 100 --duration 60 \
	"$URL" >"$TMP/a.out" 2>&1 &
a_pid=$!
on_exit "kill -KILL $a_pid 2>/dev/null"
for ((i = 0; i < 100; i++)); do [ "$(nsess)" -ge $((n_before + 3)) ] && break; sleep 0.2; done
[ "$(nsess)" -ge $((n_before + 3)) ] || { cat "$TMP/a.out"; fail "run A did not log in its sessions"; }
sleep 1
kill -STOP "$a_pid"
moves0=$(grep -c "login continues on loop" "$TMP/target.log")
placed0=$(grep -c "new iSER session placed on loop" "$TMP/target.log")
reinst0=$(grep -c "closing connection: session reinstated" "$TMP/target.log")
timeout 60 "${INI[@]}" --verify 8M --bench --sessions 2 --qd 2 --read-pct 100 --duration 3 \
	"$URL" >"$TMP/b.out" 2>&1 || { cat "$TMP/b.out"; fail "run B (reinstating A's sessions) failed"; }
grep -Eq "verify: .*: OK" "$TMP/b.out" || { cat "$TMP/b.out"; fail "run B's verify did not say OK"; }
kill -KILL "$a_pid" 2>/dev/null
wait "$a_pid" 2>/dev/null
reinst=$(($(grep -c "closing connection: session reinstated" "$TMP/target.log") - reinst0))
crossed=$(($(grep -c "login continues on loop" "$TMP/target.log") - moves0 -
	($(grep -c "new iSER session placed on loop" "$TMP/target.log") - placed0)))
log "run B: $reinst session(s) of run A reinstated, $crossed login(s) finished on the loop owning the old session"
[ "$reinst" -ge 2 ] || fail "run B did not reinstate both of run A's sessions"
[ "$crossed" -ge 1 ] || fail "no reinstatement crossed loops"
target_alive
grep -E "placed on loop|login continues on loop|reinstated" "$TMP/target.log" | tail -n 8 | sed 's/^/   | /'

log "pass 4: logout, SIGTERM"
run_bounded 60 "$TMP/logout" iscsiadm -m node -T "$IQN" -p "$PORTAL" --logout || fail "logout"
if iscsiadm -m session >"$TMP/sessions" 2>&1; then
	cat "$TMP/sessions"
	fail "sessions left after logout"
fi
kill "$TGT_PID"
wait "$TGT_PID"
rc=$?
[ "$rc" -eq 0 ] || { tail -n 20 "$TMP/target.log"; fail "idm-target exited $rc"; }
log "PASS"
