#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# The main job of libidm in one command: start idm-target with a RAM LUN
# on 127.0.0.1, run idm-initiator against it (discovery, login, LUN
# listing, a verified random-pattern write and read-back, a benchmark),
# print the results, stop the target.
#
#   cd build && ../examples/run-main-job.sh            # from a build dir
#   examples/run-main-job.sh build --size 256M --duration 5
#   examples/run-main-job.sh --installed               # the installed programs
#
# Exit status: 0 when every step passed and the data verified, 1 when a
# step failed, 2 on a usage error.
set -u

usage() {
	cat <<EOF
Usage: $0 [OPTIONS] [BUILD_DIR]
  -B, --build-dir DIR   meson build directory (default: the current one)
  --installed           the installed idm-target and idm-initiator (PATH)
                        with the installed library's providers instead
  --provider NAME       tcp (default) or iser
  --lun-size SIZE       RAM LUN size (default 256M)
  --size SIZE           bytes to write and verify (default 64M)
  --bs SIZE             benchmark block size (default 4k)
  --qd N                benchmark queue depth (default 16)
  --read-pct PCT        benchmark read percentage (default 100)
  --duration SEC        benchmark run time (default 3)
  --sessions N          benchmark sessions (default 1)
  --json                benchmark result as JSON
  --keep-logs           keep the target's log (printed path)
  -h, --help            this text
EOF
}

BUILD=.
PROVIDER=tcp
LUN_SIZE=256M
SIZE=64M
BS=4k
QD=16
READ_PCT=100
DURATION=3
SESSIONS=1
JSON=
KEEP=
INSTALLED=
while [ $# -gt 0 ]; do
	case $1 in
	-B|--build-dir) BUILD=$2; shift ;;
	--provider) PROVIDER=$2; shift ;;
	--lun-size) LUN_SIZE=$2; shift ;;
	--size) SIZE=$2; shift ;;
	--bs) BS=$2; shift ;;
	--qd) QD=$2; shift ;;
	--read-pct) READ_PCT=$2; shift ;;
	--duration) DURATION=$2; shift ;;
	--sessions) SESSIONS=$2; shift ;;
	--json) JSON=--json ;;
	--keep-logs) KEEP=1 ;;
	--installed) INSTALLED=1 ;;
	-h|--help) usage; exit 0 ;;
	[!-]*) BUILD=$1 ;;
	*) echo "$0: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

if [ -n "$INSTALLED" ]; then
	TARGET_BIN=$(command -v idm-target) || { echo "$0: no idm-target in PATH" >&2; exit 2; }
	INI_BIN=$(command -v idm-initiator) || { echo "$0: no idm-initiator in PATH" >&2; exit 2; }
else
	TARGET_BIN=$BUILD/examples/target/idm-target
	INI_BIN=$BUILD/examples/initiator/idm-initiator
fi
for b in "$TARGET_BIN" "$INI_BIN"; do
	if [ ! -x "$b" ]; then
		echo "$0: $b not found: run from a meson build directory or pass -B DIR" >&2
		exit 2
	fi
done
# Use the providers of this build tree (meson test sets this already).
if [ -z "$INSTALLED" ] && [ -z "${IDM_PROVIDER_PATH:-}" ]; then
	IDM_PROVIDER_PATH=$(cd "$BUILD" && pwd)/providers/tcp:$(cd "$BUILD" && pwd)/providers/iser
	export IDM_PROVIDER_PATH
fi
case $PROVIDER in
tcp) SCHEME=iscsi ;;
iser) SCHEME=iser ;;
*) echo "$0: --provider tcp|iser" >&2; exit 2 ;;
esac

TMP=$(mktemp -d /tmp/idm-main-job.XXXXXX)
TGT_PID=
cleanup() {
	if [ -n "$TGT_PID" ] && kill -0 "$TGT_PID" 2>/dev/null; then
		kill -TERM "$TGT_PID" 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
			kill -0 "$TGT_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$TGT_PID" 2>/dev/null
		wait "$TGT_PID" 2>/dev/null
	fi
	if [ -n "$KEEP" ]; then
		echo "target log kept in $TMP/target.log"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

IQN=iqn.2026-11.org.libidm:main-job
echo "== idm-target: $IQN, RAM LUN of $LUN_SIZE, $PROVIDER on 127.0.0.1"
# Port 0: the target picks a free port and writes it to the port file.
"$TARGET_BIN" --portal 127.0.0.1:0 --port-file "$TMP/port" --provider "$PROVIDER" \
	--target-name "$IQN" --lun "ram:$LUN_SIZE" >"$TMP/target.log" 2>&1 &
TGT_PID=$!
for _ in $(seq 1 100); do
	[ -s "$TMP/port" ] && break
	kill -0 "$TGT_PID" 2>/dev/null || break
	sleep 0.1
done
PORT=$(cat "$TMP/port" 2>/dev/null)
if [ -z "$PORT" ] || ! port_open "$PORT"; then
	echo "$0: idm-target did not start:" >&2
	tail -n 20 "$TMP/target.log" >&2
	exit 1
fi
echo "== idm-target listens on 127.0.0.1:$PORT"

URL=$SCHEME://127.0.0.1:$PORT
rc=0
echo "== idm-initiator: discovery, login, LUNs, verify $SIZE"
timeout -k 5 120 "$INI_BIN" --verify "$SIZE" --verify-io 1m "$URL" || rc=1
if [ $rc -eq 0 ]; then
	echo "== idm-initiator: benchmark ${DURATION}s, bs $BS, QD $QD, $READ_PCT% reads, $SESSIONS session(s)"
	timeout -k 5 $((${DURATION%.*} + 60)) "$INI_BIN" -q --bench $JSON \
		--bs "$BS" --qd "$QD" --read-pct "$READ_PCT" --duration "$DURATION" \
		--sessions "$SESSIONS" "$URL" || rc=1
fi
if ! kill -0 "$TGT_PID" 2>/dev/null; then
	echo "$0: idm-target died during the run:" >&2
	tail -n 20 "$TMP/target.log" >&2
	rc=1
fi
if [ $rc -eq 0 ]; then
	echo "== main job: PASS"
else
	echo "== main job: FAIL (target log tail follows)"
	tail -n 20 "$TMP/target.log"
fi
exit $rc
