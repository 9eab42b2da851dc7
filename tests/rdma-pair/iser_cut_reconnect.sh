#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# iser_cut_reconnect.sh IDM_INITIATOR IDM_TARGET [cut|down]: idm-target in
# guest A serves a mixed benchmark from guest B; 6 s in, the link is cut
# (frames dropped both ways, carriers up; "down": carrier loss) for 30 s
# and restored. Both ends must give up the old connection on their own,
# and then a new connection from B (login, INQUIRY, logout) must be
# accepted by the same idm-target within 5 s of the link's return. The
# measured time is printed; the 5 s bound is the pass criterion.
set -u
INI=${1:?usage: $0 idm-initiator idm-target [cut|down]}
TGT=${2:?usage: $0 idm-initiator idm-target [cut|down]}
MODE=${3:-cut}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=/dev/null
. "${IDM_PAIR_LIB:-$here/../rdma-vm/pair-lib.sh}"
pair_require
IQN=iqn.2026-11.org.libidm:pair-cut
URL=iser://$IDM_PAIR_A_IP/$IQN/1
case "$MODE" in
cut) off=cut on=restore ;;
down) off=down on=up ;;
*) echo "usage: $0 idm-initiator idm-target [cut|down]"; exit 2 ;;
esac
fail=0

pair_a_start tgt "$TGT" -v -p "$IDM_PAIR_A_IP:3260" -P iser -t "$IQN" -l ram:64M ||
	{ echo "FAIL: cannot start idm-target in A"; exit 1; }
pair_a_wait_log tgt 'listening on' 60 || { echo "FAIL: idm-target did not listen"; exit 1; }

timeout -k 5 150 "$INI" -v -q --no-discovery --bench --duration 120 --rw-mix 50 -b 64k \
	"$URL" > "$PAIR_TMP/bench.out" 2> "$PAIR_TMP/bench.log" &
bench=$!
sleep 6
pair_link "$off" || { echo "FAIL: pair_link $off"; kill "$bench"; exit 1; }
sleep 30
pair_link "$on" || { echo "FAIL: pair_link $on"; kill "$bench"; exit 1; }
back=$(date +%s.%N)

# The first connection after the link's return, retried until 5 s have
# passed (an attempt that ends early, e.g. refused, is tried again).
ok=0
n=0
while :; do
	n=$((n + 1))
	left=$(echo "5 - ($(date +%s.%N) - $back)" | bc)
	[ "$(echo "$left > 0" | bc)" = 1 ] || break
	if timeout -k 2 "$(echo "$left + 0.5" | bc)" "$INI" -q --no-discovery -t 5 "$URL" \
		> /dev/null 2> "$PAIR_TMP/reconnect.$n.log"; then
		ok=1
		break
	fi
	sleep 0.2
done
took=$(echo "$(date +%s.%N) - $back" | bc | cut -c1-6)
if [ "$ok" = 1 ] && [ "$(echo "$took <= 5" | bc)" = 1 ]; then
	echo "reconnect: accepted and served $took s after the link's return (attempt $n)"
else
	echo "FAIL: no new connection served within 5 s of the link's return ($took s, $n attempts)"
	tail -n 5 "$PAIR_TMP"/reconnect.*.log
	fail=1
fi
# A later one must work too (the target keeps listening).
if timeout -k 2 30 "$INI" -q --no-discovery -t 10 "$URL" > /dev/null 2> "$PAIR_TMP/again.log"; then
	echo "second connection after the cut: ok"
else
	echo "FAIL: second connection after the cut"; tail -n 5 "$PAIR_TMP/again.log"; fail=1
fi

# The benchmark's connection died in the cut: it must have ended by now,
# or end within its liveness deadline, with an error.
i=0
while [ "$i" -lt 100 ] && kill -0 "$bench" 2> /dev/null; do
	sleep 0.2
	i=$((i + 1))
done
if kill -0 "$bench" 2> /dev/null; then
	echo "FAIL: the benchmark across the cut did not notice it"; kill "$bench"; fail=1
fi
wait "$bench"
echo "benchmark across the cut: exit status $? ($(grep -m1 -oE 'connection lost: .*' "$PAIR_TMP/bench.log"))"
echo "--- idm-target:"; grep -E 'connection|session' "$(pair_a_log tgt)" | tail -n 12
pair_a_stop tgt > /dev/null
[ "$fail" = 0 ] && echo "PASS: idm-target accepts a new connection after a link $MODE"
exit "$fail"
