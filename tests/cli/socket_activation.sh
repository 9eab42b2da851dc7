#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-target started the way systemd starts it from a socket unit, by
# systemd-socket-activate (Debian's systemd package). Accept=no: it
# serves the listening socket it was handed: discovery, logins and a
# verified write from idm-initiator and an INQUIRY from libiscsi's
# iscsi-inq, one process for all of them. Accept=yes: each connection
# gets an idm-target of its own that serves it and exits 0 when it ends.
# idm-adopt-example (a login on its own socket, then
# idm_conn_adopt_fd_ffp()) gets its INQUIRY answered by the Accept=no
# target. contrib/systemd/idm-target.socket passes systemd-analyze verify.
# usage: socket_activation.sh IDM_TARGET IDM_INITIATOR SOCKET_UNIT SERVICE_UNIT ADOPT_EXAMPLE
IDM_TARGET=$(realpath "$1")
IDM_INITIATOR=$(realpath "$2")
SOCKET_UNIT=$3
SERVICE_UNIT=$4
ADOPT_EXAMPLE=$(realpath "$5")
. "$(dirname "$0")/lib.sh"

need systemd-socket-activate systemd

IQN=iqn.2026-11.org.libidm:activated
URL_OF() { echo "iscsi://127.0.0.1:$1/$IQN/1"; }

# start_activated LOG [systemd-socket-activate options]: the target behind
# systemd-socket-activate on a free loopback port; sets PORT, SA_PID.
start_activated() {
	local log=$1
	shift
	PORT=$(free_port)
	systemd-socket-activate -E IDM_PROVIDER_PATH "$@" -l "127.0.0.1:$PORT" \
		"$IDM_TARGET" --log-target stderr -t "$IQN" --lun ram:4M >"$log" 2>&1 &
	SA_PID=$!
	on_exit "stop_pid $SA_PID"
	for _ in $(seq 50); do
		grep -q "^Listening on 127.0.0.1:$PORT" "$log" && return 0
		sleep 0.1
	done
	cat "$log"
	die "systemd-socket-activate did not listen"
}

# --- Accept=no: the listening socket
start_activated "$TMP/sa.log"
expect_run "Accept=no: discovery, login, verified write" 0 "verify: .*: OK" \
	"$IDM_INITIATOR" --verify 1M "$(URL_OF "$PORT")"
grep -q "listening on activated socket 3 (port $PORT, tcp)" "$TMP/sa.log" ||
	fail "no 'listening on activated socket 3' in the target log"
if command -v iscsi-inq >/dev/null; then
	expect_run "Accept=no: iscsi-inq (libiscsi)" 0 "Product:idm-target" \
		iscsi-inq -i iqn.2026-11.org.libidm:inq "$(URL_OF "$PORT")"
else
	echo "note: iscsi-inq not installed (Debian package libiscsi-bin): libiscsi case not run"
fi
expect_run "Accept=no: own login, then adopted in full feature phase (idm-adopt-example)" 0 \
	"INQUIRY through the adopted connection: LIBIDM +idm-target" \
	"$ADOPT_EXAMPLE" 127.0.0.1 "$PORT" "$IQN" 1
expect_run "Accept=no: the same target again" 0 "verify: .*: OK" \
	"$IDM_INITIATOR" --no-discovery --verify 256k "$(URL_OF "$PORT")"
[ "$(grep -c "^Execing" "$TMP/sa.log")" = 1 ] || fail "Accept=no: idm-target started more than once"
grep -q "died" "$TMP/sa.log" && fail "Accept=no: idm-target exited"
grep -q "portal settings" "$TMP/sa.log" && fail "Accept=no: portal notice without --portal"
stop_pid "$SA_PID"

# --- Accept=yes: one connection per target process
start_activated "$TMP/acc.log" --accept
for n in 1 2; do
	expect_run "Accept=yes: connection $n: login, verified write" 0 "verify: .*: OK" \
		"$IDM_INITIATOR" --no-discovery --verify 256k "$(URL_OF "$PORT")"
	for _ in $(seq 50); do
		[ "$(grep -c "died with code 0" "$TMP/acc.log")" = "$n" ] && break
		sleep 0.1
	done
	[ "$(grep -c "died with code 0" "$TMP/acc.log")" = "$n" ] ||
		{ fail "Accept=yes: connection $n: idm-target did not exit 0 after it"; cat "$TMP/acc.log"; }
done
grep -q "the activated connection ended" "$TMP/acc.log" || fail "Accept=yes: no 'connection ended' notice"
stop_pid "$SA_PID"

# --- LISTEN_FDS that do not fit: refused with exit status 2 (restarting
# would not help)
LISTEN_PID=999999 LISTEN_FDS=1 expect_run "LISTEN_PID of another process: not activated" 2 "no LUN given" \
	"$IDM_TARGET" --log-target stderr
expect_run "LISTEN_FDS=junk" 2 "socket activation: bad LISTEN_FDS 'junk'" \
	bash -c 'LISTEN_PID=$$ LISTEN_FDS=junk exec "$0" --log-target stderr --lun ram:1M' "$IDM_TARGET"
expect_run "LISTEN_FDS not open" 2 "socket activation: descriptor 3: not open" \
	bash -c 'exec 3<&-; LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" --log-target stderr --lun ram:1M' "$IDM_TARGET"

# --- the socket unit, next to the service it starts
if command -v systemd-analyze >/dev/null; then
	cp "$SOCKET_UNIT" "$TMP/idm-target.socket"
	printf 'lun = ram:1M\n' >"$TMP/idm-target.conf"
	sed -e "s|^ExecStart=[^ ]*|ExecStart=$IDM_TARGET|" \
	    -e "s|--config [^ ]*|--config $TMP/idm-target.conf|" "$SERVICE_UNIT" >"$TMP/idm-target.service"
	if ! timeout 30 systemd-analyze verify "$TMP/idm-target.socket" >"$TMP/out" 2>&1 || [ -s "$TMP/out" ]; then
		fail "systemd-analyze verify idm-target.socket"
		cat "$TMP/out"
	else
		echo "ok: systemd-analyze verify idm-target.socket: no complaint"
	fi
else
	echo "note: systemd-analyze not installed: socket unit not verified"
fi
finish
