# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# open-iscsi + the kernel's ib_iser as an iSER initiator (sourced after
# lib.sh): iscsid, discovery and login over iface iser, logout. Used by
# kernel_initiator.sh (one guest) and by the two-guest tests of
# tests/rdma-pair/. The portal is ${PORTAL_IP:-$IP}:$PORT; target_alive,
# called after each step, is the caller's (lib.sh's checks a local
# idm-target).

# iscsid_start: the guest boots without iscsid; a private one, stopped
# (and its sessions ended) at the end.
iscsid_start() {
	need iscsiadm open-iscsi
	need iscsid open-iscsi
	need setsid util-linux
	need_module ib_iser
	need_module sd_mod
	mkdir -p /run/lock/iscsi /var/lib/iscsi /etc/iscsi
	[ -s /etc/iscsi/initiatorname.iscsi ] ||
		echo "InitiatorName=iqn.2026-11.org.libidm:kernel-ini" >/etc/iscsi/initiatorname.iscsi
	if ! pgrep -x iscsid >/dev/null; then
		# Its own session: on SIGTERM iscsid signals its whole process
		# group, which would otherwise include this script.
		setsid iscsid -f ${ISCSID_DEBUG:+-d "$ISCSID_DEBUG"} >"$TMP/iscsid.log" 2>&1 &
		ISCSID_PID=$!
		CLEANUP_CMDS+=("stop_pid $ISCSID_PID")
		CLEANUP_CMDS+=("timeout 10 iscsiadm -k 0")
		sleep 1
		kill -0 "$ISCSID_PID" 2>/dev/null || { cat "$TMP/iscsid.log"; fail "iscsid did not start"; }
	fi
}

# iscsi_disk_wait SECS: wait up to SECS for the disk of a logged-in
# session to appear as a block device; sets BLK (its sysfs directory) and
# DEV (/dev/NAME), or returns 1 with both empty.
iscsi_disk_wait() {
	local i blk
	BLK=
	DEV=
	for ((i = 0; i < $1 * 2; i++)); do
		for blk in /sys/class/iscsi_session/session*/device/target*/*/block/*; do
			if [ -e "$blk" ] && [ -b "/dev/${blk##*/}" ]; then
				BLK=$blk DEV=/dev/${blk##*/}
				return 0
			fi
		done
		sleep 0.5
	done
	return 1
}

# login_disk IQN: discovery and login over iface iser at $IP:$PORT;
# sets DEV (the new disk) and BLK (its sysfs directory).
login_disk() {
	local iqn=$1 portal=${PORTAL_IP:-$IP}:$PORT
	CLEANUP_CMDS+=("timeout 30 iscsiadm -m discoverydb -t st -p $portal -I iser -o delete")
	CLEANUP_CMDS+=("timeout 30 iscsiadm -m node -T $iqn -p $portal -o delete")
	CLEANUP_CMDS+=("timeout 60 iscsiadm -m node -T $iqn -p $portal --logout")
	log "discovery (sendtargets over iSER) at $portal"
	run_bounded 60 "$TMP/disc" iscsiadm -m discovery -t sendtargets -p "$portal" -I iser ||
		fail "discovery"
	grep -q "^$portal,1 $iqn\$" "$TMP/disc" || fail "discovery did not report $iqn at $portal"
	target_alive
	log "login over iface iser"
	run_bounded 90 "$TMP/login" iscsiadm -m node -T "$iqn" -p "$portal" -I iser --login ||
		fail "login"
	iscsiadm -m session -P 1 >"$TMP/session" 2>&1
	grep -E 'Target:|Iface Transport|iSCSI Connection State|iSCSI Session State' "$TMP/session" |
		sed 's/^/   | /'
	grep -q 'Iface Transport: iser' "$TMP/session" || fail "session does not use the iser transport"
	grep -q 'iSCSI Session State: LOGGED_IN' "$TMP/session" || fail "session is not LOGGED_IN"
	iscsi_disk_wait 35 || fail "no SCSI disk appeared after login"
	log "disk $DEV: $(($(cat "$BLK/size") * 512)) bytes," \
		"vendor '$(cat "$BLK/device/vendor")' model '$(cat "$BLK/device/model")'"
}

# logout_disk IQN: clean logout; the session and the disk must go away.
logout_disk() {
	local iqn=$1 i
	log "logout"
	run_bounded 60 "$TMP/logout" iscsiadm -m node -T "$iqn" -p "${PORTAL_IP:-$IP}:$PORT" --logout ||
		fail "logout"
	grep -q 'successful' "$TMP/logout" || fail "logout not reported successful"
	if iscsiadm -m session >"$TMP/sessions" 2>&1; then
		cat "$TMP/sessions"
		fail "a session is still there after logout"
	fi
	for ((i = 0; i < 50; i++)); do [ -b "$DEV" ] || break; sleep 0.1; done
	[ -b "$DEV" ] && fail "$DEV still exists after logout"
	target_alive
}

