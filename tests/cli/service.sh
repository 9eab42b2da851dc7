#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# idm-target as a service: started only from a config file (login and a
# verified write through it), strict config errors naming FILE:LINE,
# write-protected LUNs (",ro" and a file the target may only read) seen
# by idm-initiator as DATA PROTECT / WRITE PROTECTED, and SIGHUP reload
# of the LUN list.
# usage: service.sh IDM_TARGET IDM_INITIATOR
IDM_TARGET=$(realpath "$1")
IDM_INITIATOR=$(realpath "$2")
. "$(dirname "$0")/lib.sh"

IQN=iqn.2026-11.org.libidm:cli
I=("$IDM_INITIATOR" --no-discovery)

# --- config file errors: FILE:LINE and exit 2
cfg_err() {
	local name=$1 pat=$2
	shift 2
	printf '%s\n' "$@" >"$TMP/bad.conf"
	expect_run "config: $name" 2 "$pat" "$IDM_TARGET" --log-target stderr -c "$TMP/bad.conf"
}
cfg_err "unknown setting" "bad.conf:2: unknown setting 'lunn'" "portal = 127.0.0.1:0" "lunn = ram:1M"
cfg_err "no =" "bad.conf:3: expected 'name = value', got 'lun ram:1M'" "# comment" "" "lun ram:1M"
cfg_err "empty value" "bad.conf:1: empty value" "lun ="
cfg_err "flag" "bad.conf:1: 'verbose' is not allowed in a config file" "verbose = 1"
cfg_err "nested config" "bad.conf:1: 'config' is not allowed in a config file" "config = /etc/x"
cfg_err "bad key" "bad.conf:2: MaxBurstLength='1': must be a number from 512 to 16777215" "lun = ram:1M" "key = MaxBurstLength=1"
cfg_err "bad chap" "bad.conf:1: chap needs USER:SECRET" "chap = nocolon"
cfg_err "bad name" "bad.conf:1: bad setting name 'Portal'" "Portal = 127.0.0.1:0"
cfg_err "bad block size" "bad.conf:1: block size '100': must be 512 or 4096" "block-size = 100"
cfg_err "bad lun" "LUN 1: unknown LUN type 'disk'" "lun = disk:/x"
expect_run "config: missing file" 2 "cannot read config file $TMP/none.conf: No such file or directory" "$IDM_TARGET" -c "$TMP/none.conf"

# --- a target started only from a config file
truncate -s 4M "$TMP/disk.img"
truncate -s 1M "$TMP/ro.img"
cat >"$TMP/target.conf" <<CONF
# idm-target test configuration
portal = 127.0.0.1:0
target-name = $IQN
alias = cli test
block-size = 512
provider = tcp
key = ImmediateData=No
key = MaxBurstLength = 65536
lun = 1=file:$TMP/disk.img
lun = 2=ram:1M,ro
log-level = info
CONF
# "key = MaxBurstLength = 65536": the value is "MaxBurstLength = 65536"
expect_run "config: key with spaces" 2 "target.conf:8: unknown key 'MaxBurstLength '" "$IDM_TARGET" --log-target stderr -c "$TMP/target.conf"
sed -i 's/^key = MaxBurstLength = 65536$/key = MaxBurstLength=65536/' "$TMP/target.conf"
start_target "$TMP/t.log" -c "$TMP/target.conf"
URL="iscsi://127.0.0.1:$PORT/$IQN"
CHAP=()
expect_run "config: login and verified write" 0 "verify: .*: OK" "${I[@]}" "${CHAP[@]}" --verify 256k "$URL/1"
grep -q "ImmediateData=No" "$TMP/out" || fail "ImmediateData=No from the config file not negotiated"
grep -q "MaxBurstLength=65536" "$TMP/out" || fail "MaxBurstLength=65536 from the config file not negotiated"

# --- write-protected LUNs
expect_run ",ro LUN: write refused" 1 "WRITE at LBA 0: CHECK CONDITION, sense key 0x7 ASC 0x27 ASCQ 0x00" "${I[@]}" "${CHAP[@]}" --verify 64k "$URL/2"
grep -q "LUN 2: ram:1M, 2048 blocks of 512 bytes, write protected" "$TMP/t.log" || fail "no write-protected notice for LUN 2"
expect_run ",ro LUN: reads work" 0 "LUN 2: type 0x00" "${I[@]}" "${CHAP[@]}" "$URL/2"

# a file the target may only read: as root, run the target as nobody
RO_TARGET=("$IDM_TARGET")
if [ "$(id -u)" = 0 ]; then
	if command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$IDM_TARGET"; then
		RO_TARGET=(setpriv --reuid=65534 --regid=65534 --clear-groups "$IDM_TARGET")
		chmod 755 "$TMP"
		chmod 644 "$TMP/ro.img"
		RO_OK=1
	else
		echo "note: cannot drop root privileges here: read-only file case not run"
		RO_OK=0
	fi
else
	chmod 444 "$TMP/ro.img"
	RO_OK=1
fi
if [ "$RO_OK" = 1 ]; then
	rm -f "$TMP/port2"
	touch "$TMP/port2" && chmod 666 "$TMP/port2" && : >"$TMP/port2"
	"${RO_TARGET[@]}" --portal 127.0.0.1:0 --port-file "$TMP/port2" --log-target stderr \
		--target-name "$IQN" --lun "file:$TMP/ro.img" 2>"$TMP/ro.log" &
	RO_PID=$!
	PIDS="$PIDS $RO_PID"
	wait_file "$TMP/port2" "$RO_PID" 30
	grep -q "LUN 1: $TMP/ro.img is read-only for us: served write protected" "$TMP/ro.log" ||
		{ fail "no notice for the read-only file"; cat "$TMP/ro.log"; }
	expect_run "read-only file: write refused" 1 "WRITE at LBA 0: CHECK CONDITION, sense key 0x7 ASC 0x27 ASCQ 0x00" \
		"${I[@]}" --verify 64k "iscsi://127.0.0.1:$(cat "$TMP/port2")/$IQN/1"
	kill "$RO_PID"
	wait "$RO_PID"
fi

# --- chap in a config file (idm-initiator has no CHAP: LIO/libiscsi
# tests cover the exchange; here only that the file sets it)
printf 'portal = 127.0.0.1:0\nlun = ram:1M\nchap = user1:secret123456\n' >"$TMP/chap.conf"
expect_run "config: chap" 1 "login to $IQN failed|login .*failed" sh -c '
	"$1" -c "$2" --target-name "$3" --port-file "$4" --log-target stderr 2>/dev/null & t=$!
	for _ in $(seq 300); do [ -s "$4" ] && break; sleep 0.1; done
	"$5" --no-discovery "iscsi://127.0.0.1:$(cat "$4")/$3/1"; rc=$?
	kill $t; wait $t; exit $rc' sh "$IDM_TARGET" "$TMP/chap.conf" "$IQN" "$TMP/port3" "$IDM_INITIATOR"

# --- SIGHUP: LUN 3 added, LUN 2 removed, LUN 1 kept (its data too)
sed -i '/^lun = 2=ram:1M,ro$/d' "$TMP/target.conf"
echo "lun = 3=ram:2M" >>"$TMP/target.conf"
kill -HUP "$TARGET_PID"
wait_until 30 log_has 1 "reload: "
grep -q "reload: 2 LUNs (1 unchanged)" "$TMP/t.log" || { fail "SIGHUP: no reload"; cat "$TMP/t.log"; }
# benches: a bench logs in twice (a probe, then the session whose I/O
# starts at once); it runs until SIGINT (--duration is its hang guard),
# so that the reloads below fall inside it whatever the machine's load
logins() { grep -c "normal session tsih" "$TMP/t.log"; }
# I/O on LUN 1 while LUN 3 is removed and added again: it must not notice
n=$(logins)
timeout 120 "$IDM_INITIATOR" --no-discovery -q --bench --duration 60 "$URL/1" >"$TMP/bench.out" 2>&1 &
BENCH=$!
wait_until 30 log_has $((n + 2)) "normal session tsih" || fail "SIGHUP under I/O: the bench did not log in"
n=$(grep -c "reload: " "$TMP/t.log")
sed -i '/^lun = 3=ram:2M$/d' "$TMP/target.conf"
kill -HUP "$TARGET_PID"
wait_until 30 log_has $((n + 1)) "reload: "
echo "lun = 3=ram:2M" >>"$TMP/target.conf"
kill -HUP "$TARGET_PID"
wait_until 30 log_has $((n + 2)) "reload: "
kill -INT "$BENCH"
wait "$BENCH" || { fail "I/O during SIGHUP reloads failed"; cat "$TMP/bench.out"; }
[ "$(grep -c "LUN 3 removed" "$TMP/t.log")" = 1 ] || fail "SIGHUP under I/O: LUN 3 not removed once"
expect_run "SIGHUP: LUN list" 0 "^LUNs: 1 3$" "${I[@]}" "${CHAP[@]}" "$URL/3"
expect_run "SIGHUP: new LUN 3 takes writes" 0 "verify: .*: OK" "${I[@]}" "${CHAP[@]}" --verify 128k "$URL/3"
# a bad LUN in the file: the reload is refused, the list stays
echo "lun = 4=disk:/x" >>"$TMP/target.conf"
kill -HUP "$TARGET_PID"
wait_until 30 log_has 1 "reload failed"
grep -q "reload failed: LUN list unchanged" "$TMP/t.log" || fail "SIGHUP with a bad LUN: not refused"
expect_run "SIGHUP refused: LUN list unchanged" 0 "^LUNs: 1 3$" "${I[@]}" "${CHAP[@]}" "$URL/1"
# an unknown setting added to the file: refused like a start would be
sed -i '/^lun = 4=disk:\/x$/d' "$TMP/target.conf"
echo "lun = 4=ram:1M" >>"$TMP/target.conf"
echo "bogus-name = 1" >>"$TMP/target.conf"
kill -HUP "$TARGET_PID"
wait_until 30 log_has 1 "nothing reloaded"
grep -q "unknown setting 'bogus-name'; nothing reloaded" "$TMP/t.log" ||
	fail "SIGHUP with an unknown setting: not refused"
expect_run "SIGHUP with an unknown setting: LUN list unchanged" 0 "^LUNs: 1 3$" "${I[@]}" "${CHAP[@]}" "$URL/1"
sed -i '/^bogus-name = 1$/d; /^lun = 4=ram:1M$/d' "$TMP/target.conf"
# LUN 1 (a file) and LUN 3 (RAM) removed under I/O: the commands in
# flight complete, the next ones get an error, the target carries on
sed -i '/^lun = 4=disk:\/x$/d; /^lun = 1=file:/d; /^lun = 3=ram:2M$/d' "$TMP/target.conf"
echo "lun = 5=ram:1M" >>"$TMP/target.conf"
n=$(logins)
for l in 1 3; do
	timeout 120 "$IDM_INITIATOR" --no-discovery -q --bench --duration 60 --read-pct 50 \
		"$URL/$l" >"$TMP/bench$l.out" 2>&1 &
	eval "B$l=\$!"
done
wait_until 30 log_has $((n + 4)) "normal session tsih" || fail "LUNs removed under I/O: the benches did not log in"
kill -HUP "$TARGET_PID"
wait_until 30 log_has 1 "reload: 1 LUNs \(0 unchanged\)"
# a bench's first failed command prints "bench: session N: ..." (it is
# not sent again): then each has seen the removal
for l in 1 3; do
	wait_until 30 grep -q "bench: session" "$TMP/bench$l.out"
	kill -INT "$(eval "echo \$B$l")"
done
wait "$B1"; rc1=$?
wait "$B3"; rc3=$?
for l in 1 3; do
	grep -Eq "^ errors: [1-9]" "$TMP/bench$l.out" ||
		{ fail "I/O to removed LUN $l: no errors reported"; tail -5 "$TMP/bench$l.out"; }
done
[ "$rc1" = 1 ] && [ "$rc3" = 1 ] || fail "I/O to removed LUNs: exit $rc1/$rc3, want 1/1"
grep -q "reload: 1 LUNs (0 unchanged)" "$TMP/t.log" || fail "SIGHUP under I/O: no reload"
expect_run "SIGHUP under I/O: LUN list" 0 "^LUNs: 5$" "${I[@]}" "$URL/5"
kill -0 "$TARGET_PID" || fail "target died"
stop_target || fail "target exit status $?"
finish
