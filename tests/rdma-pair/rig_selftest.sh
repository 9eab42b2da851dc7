#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The rig itself: guest A runs what B asks with A's identity, RC traffic
# crosses the link (ibv_rc_pingpong A <-> B), a cut stops it and a restore
# brings it back, carrier loss is seen on both NICs, and the wire counters
# are reported.
IDM_TEST_NAME=idm-pair-selftest
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
need ibv_rc_pingpong ibverbs-utils

log "guest A runs jobs for B"
out=$(pair_a_run 20 bash -c 'echo "$(hostname) $IDM_PAIR_ROLE $IDM_RDMA_IP $IDM_PAIR_PEER_IP"') ||
	fail "pair_a_run: $out"
echo "   | $out"
[ "$out" = "idm-pair-a A $A_IP $B_IP" ] || fail "A's job does not see A's identity"
pair_a_run 10 false && fail "pair_a_run did not return the job's failure"

pair_wire_begin
GID=$(pair_gid_index)
# pingpong ITERS PORT: server in A, client in B; the client's status.
pingpong() {
	local n=$1 port=$2 i rc=1
	pair_a_start pp bash -c ". '$PAIR_LIB'; exec ibv_rc_pingpong -d rxe0 -g \"\$(pair_gid_index)\" -n $n -p $port"
	pair_a_cleanup pp
	for ((i = 0; i < 20; i++)); do
		timeout 60 ibv_rc_pingpong -d "$IDM_RDMA_DEV" -g "$GID" -n "$n" -p "$port" "$A_IP" \
			>"$TMP/pp.out" 2>&1 && { rc=0; break; }
		rc=$?
		grep -q "Couldn't connect" "$TMP/pp.out" || break # not a server still starting
		sleep 0.5
	done
	sed 's/^/   | B: /' "$TMP/pp.out"
	return $rc
}

log "ibv_rc_pingpong, 500 x 4 KiB across the link"
pingpong 500 18515 || fail "ibv_rc_pingpong B -> A"
st=$(pair_a_stop pp) || true
sed 's/^/   | A: /' "$(pair_a_log pp)"
[ "$st" = 0 ] || fail "A's ibv_rc_pingpong ended with status $st"

log "link cut: nothing gets through"
pair_link cut || fail "pair_link cut"
CLEANUP_CMDS+=("pair_link restore")
pair_a_start pp ibv_rc_pingpong -d rxe0 -g "$GID" -n 10 -p 18516
if timeout 8 ibv_rc_pingpong -d "$IDM_RDMA_DEV" -g "$GID" -n 10 -p 18516 "$A_IP" >"$TMP/pp.out" 2>&1; then
	fail "ibv_rc_pingpong got through a cut link"
fi
echo "   | B: $(tail -n 1 "$TMP/pp.out")"
[ "$(cat "/sys/class/net/$IDM_PAIR_NETDEV/carrier")" = 1 ] || fail "B lost carrier on a cut"
pair_a_stop pp KILL >/dev/null
log "link restore: traffic again"
pair_link restore || fail "pair_link restore"
pingpong 100 18517 || fail "ibv_rc_pingpong after the restore"
pair_a_stop pp >/dev/null

log "carrier loss (pair_link down) on both NICs"
pair_link down || fail "pair_link down"
CLEANUP_CMDS+=("pair_link up")
cb=$(cat "/sys/class/net/$IDM_PAIR_NETDEV/carrier")
ca=$(pair_a_run 10 bash -c 'cat /sys/class/net/$IDM_PAIR_NETDEV/carrier')
echo "   | carrier: A $ca, B $cb"
[ "$cb" = 0 ] && [ "$ca" = 0 ] || fail "carrier still up after pair_link down"
pair_link up || fail "pair_link up"
cb=$(cat "/sys/class/net/$IDM_PAIR_NETDEV/carrier")
ca=$(pair_a_run 10 bash -c 'cat /sys/class/net/$IDM_PAIR_NETDEV/carrier')
echo "   | carrier: A $ca, B $cb"
[ "$cb" = 1 ] && [ "$ca" = 1 ] || fail "carrier not back after pair_link up"
pingpong 100 18518 || fail "ibv_rc_pingpong after the carrier came back"
pair_a_stop pp >/dev/null

pair_signal selftest-done
pair_wait selftest-done 5 || fail "pair_wait"
pair_wire_end selftest
log "PASS"
