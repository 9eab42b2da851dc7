#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# systemd-analyze verify of the idm-target unit, pointed at the idm-target
# of the build tree and a config file of its own; then the sd_notify
# protocol: idm-target sends READY=1 once listening, RELOADING=1 and
# READY=1 around a SIGHUP reload, STOPPING=1 on SIGTERM; where the log
# goes: the journal stream, syslog.
# usage: systemd_unit.sh UNIT IDM_TARGET
UNIT=$1
IDM_TARGET=$(realpath "$2")
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip "python3 not installed"

printf 'portal = 127.0.0.1:0\nlun = ram:1M\n' >"$TMP/idm-target.conf"
sed -e "s|^ExecStart=[^ ]*|ExecStart=$IDM_TARGET|" \
    -e "s|--config [^ ]*|--config $TMP/idm-target.conf|" "$UNIT" >"$TMP/idm-target.service"
grep -q "^ExecStart=$IDM_TARGET --config $TMP/idm-target.conf$" "$TMP/idm-target.service" ||
	{ fail "unexpected ExecStart in $UNIT"; finish; }
if ! command -v systemd-analyze >/dev/null; then
	NO_ANALYZE=1
elif ! timeout 30 systemd-analyze verify "$TMP/idm-target.service" >"$TMP/out" 2>&1; then
	fail "systemd-analyze verify failed"
	cat "$TMP/out"
elif [ -s "$TMP/out" ]; then
	fail "systemd-analyze verify printed something"
	cat "$TMP/out"
else
	echo "ok: systemd-analyze verify: no complaint"
fi

# the notify socket: a python3 datagram listener collects the messages
python3 - "$TMP/notify.sock" "$TMP/notify.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(20)
with open(sys.argv[2], "w") as log:
    try:
        while True:
            m = s.recv(4096).decode()
            log.write(m if m.endswith("\n") else m + "\n")
            log.flush()
            if "STOPPING=1" in m:
                break
    except socket.timeout:
        pass
PY
LISTENER=$!
PIDS="$PIDS $LISTENER"
for _ in $(seq 50); do [ -S "$TMP/notify.sock" ] && break; sleep 0.1; done
NOTIFY_SOCKET=$TMP/notify.sock start_target "$TMP/t.log" -c "$TMP/idm-target.conf"
for _ in $(seq 50); do grep -q READY=1 "$TMP/notify.log" 2>/dev/null && break; sleep 0.1; done
grep -q "^READY=1$" "$TMP/notify.log" || fail "no READY=1"
kill -HUP "$TARGET_PID"
for _ in $(seq 50); do [ "$(grep -c READY=1 "$TMP/notify.log")" = 2 ] && break; sleep 0.1; done
grep -q "^RELOADING=1$" "$TMP/notify.log" || fail "no RELOADING=1"
grep -q "^MONOTONIC_USEC=[0-9]*$" "$TMP/notify.log" || fail "no MONOTONIC_USEC with RELOADING=1"
[ "$(grep -c "^READY=1$" "$TMP/notify.log")" = 2 ] || fail "no READY=1 after the reload"
stop_target || fail "idm-target exit status $?"
wait "$LISTENER"
grep -q "^STOPPING=1$" "$TMP/notify.log" || fail "no STOPPING=1"
echo "notify messages: $(tr '\n' ' ' <"$TMP/notify.log")"

# JOURNAL_STREAM naming our stderr: "<N>" priority prefixes, no timestamp;
# the same variable with another stderr (inherited): plain lines
: >"$TMP/j.log"
JOURNAL_STREAM=$(stat -c %d:%i "$TMP/j.log") timeout --preserve-status -s INT 1 \
	"$IDM_TARGET" --portal 127.0.0.1:0 --lun ram:1M 2>>"$TMP/j.log"
grep -q "^<6>info: listening on 127.0.0.1:" "$TMP/j.log" ||
	{ fail "journal stream: no '<6>info:' line"; cat "$TMP/j.log"; }
: >"$TMP/j2.log"
JOURNAL_STREAM=$(stat -c %d:%i "$TMP/j.log") timeout --preserve-status -s INT 1 \
	"$IDM_TARGET" --portal 127.0.0.1:0 --lun ram:1M 2>>"$TMP/j2.log"
grep -q "idm-target info: listening on" "$TMP/j2.log" && ! grep -q "^<" "$TMP/j2.log" ||
	{ fail "inherited JOURNAL_STREAM: not plain stderr lines"; cat "$TMP/j2.log"; }
# syslog: a private mount namespace with our own /dev/log (root only);
# --log-target syslog, and auto with stderr on /dev/null
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	cat >"$TMP/syslog.sh" <<'SH'
set -u
TMP=$1 TGT=$2
mount --make-rprivate / || exit 9
mkdir "$TMP/olddev" && mount --rbind /dev "$TMP/olddev" && mount -t tmpfs tmpfs /dev || exit 9
for f in null zero urandom random; do
	touch "/dev/$f" && mount --bind "$TMP/olddev/$f" "/dev/$f" || exit 9
done
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
s.settimeout(3)
with open(sys.argv[1], "w") as out:
    try:
        while True:
            out.write(s.recv(4096).decode() + "\n")
            out.flush()
    except socket.timeout:
        pass
' "$TMP/syslog.log" &
for _ in $(seq 50); do [ -S /dev/log ] && break; sleep 0.1; done
timeout --preserve-status -s INT 1 "$TGT" --portal 127.0.0.1:0 --lun ram:1M --log-target syslog 2>"$TMP/syslog.err" || exit 1
timeout --preserve-status -s INT 1 "$TGT" --portal 127.0.0.1:0 --lun 7=ram:1M 2>/dev/null || exit 1
wait
SH
	unshare --mount --propagation private bash "$TMP/syslog.sh" "$TMP" "$IDM_TARGET"
	rc=$?
	if [ "$rc" = 9 ]; then
		echo "note: no private /dev here: syslog output not checked"
	else
		[ "$rc" = 0 ] || fail "syslog run: exit $rc"
		grep -q "^<30>.* idm-target\[[0-9]*\]: listening on 127.0.0.1:" "$TMP/syslog.log" ||
			{ fail "--log-target syslog: no daemon.info line"; cat "$TMP/syslog.log"; }
		grep -q "^<30>.* idm-target\[[0-9]*\]: LUN 7: ram:1M" "$TMP/syslog.log" ||
			{ fail "auto with stderr on /dev/null: not to syslog"; cat "$TMP/syslog.log"; }
		[ -s "$TMP/syslog.err" ] && { fail "--log-target syslog wrote to stderr"; cat "$TMP/syslog.err"; }
		echo "ok: syslog: $(grep -c . "$TMP/syslog.log") lines, e.g. $(head -1 "$TMP/syslog.log")"
	fi
else
	echo "note: not root or no unshare: syslog output not checked"
fi

if [ -n "${NO_ANALYZE:-}" ] && [ "$FAILS" = 0 ]; then
	skip "systemd-analyze not installed (Debian package systemd): the unit was not verified (the sd_notify and journal checks passed)"
fi
finish
