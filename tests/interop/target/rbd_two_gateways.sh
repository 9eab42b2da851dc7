#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Two gateways in front of one Ceph RBD image (issue 37): a one-node
# cluster (tests/lib/ceph.sh) and two idm-target processes, gateway A and
# gateway B, serving the same image, each in a network namespace of its
# own joined by a veth pair to the test's namespace, where the cluster
# (on 10.213.0.1) and the initiator run. The gateways are active/passive,
# as dm-multipath's failover policy uses them: I/O goes through A until A
# is lost, then through B.
#   1. both report the same VPD pages 0x80 and 0x83 (multipath groups
#      the paths by them);
#   2. a pattern written through A reads back intact through B;
#   -  both alive, B writes, then A (RBD's exclusive lock moves from A to
#      B and back), and all of it reads back through both;
#   3. a write stream through A (rbd_failover.py: a SYNCHRONIZE CACHE,
#      then 4 KiB FUA writes, one at a time, each acknowledged one
#      logged) is cut by kill -9 of A
#      and goes on through B, the unacknowledged write sent again; every
#      write A or B acknowledged then reads back intact through B in a
#      new session (lost acknowledged writes: must be 0). B's first write
#      waits for RBD's exclusive lock, which dead A still holds, until
#      the OSD drops A's watch (osd_client_watch_timeout, 5 s here) and
#      B's librbd blocklists A and breaks the lock.
# Exit 77 without CAP_NET_ADMIN (namespaces, veth), Ceph's packages or an
# idm-target built with librbd.
# Usage: rbd_two_gateways.sh IDM_TARGET
# shellcheck source-path=SCRIPTDIR source=../../lib/netns.sh
. "$(dirname "$0")/../../lib/netns.sh"
netns_reexec IDM_RBD2GW_NS 150 "$0" "$@"
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
IDM_TARGET=$1
FAILOVER="$(dirname "$0")/rbd_failover.py"
CEPH_LIB="$(dirname "$0")/../../lib/ceph.sh"
[ -f "$CEPH_LIB" ] || skip "tests/lib/ceph.sh (the one-node cluster) is not in this tree"
# shellcheck source-path=SCRIPTDIR source=../../lib/ceph.sh
. "$CEPH_LIB"
need python3
need ip iproute2
need nsenter util-linux
timeout 60 "$IDM_TARGET" --portal 127.0.0.1:0 --rbd-conf /dev/null --rbd-timeout 1 \
	--lun rbd:p/i 2>&1 | grep -q "built without librbd" && skip "idm-target built without librbd"
T0=$(date +%s.%N)
since() { awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# --- the network: the cluster on 10.213.0.1 (lo, here); gateway N in
# its own namespace at 10.213.N.2, a veth pair to 10.213.N.1 here and
# its default route through it
ip link set lo up || skip "cannot bring lo up in the namespace"
ip addr add 10.213.0.1/32 dev lo || die "cannot add 10.213.0.1"
# gw_net N: gateway N's namespace (tests/lib/netns.sh), its default
# route back here; sets HOLDER[N], the process that holds it
HOLDER=()
gw_net() {
	local n=$1
	netns_peer "10.213.$n.1" "10.213.$n.2" "$n"
	"${IN_PEER[@]}" ip route add default via "10.213.$n.1" ||
		die "cannot route from gateway $n's namespace"
	HOLDER[n]=$NETNS_HOLDER
}
gw_net 1
gw_net 2

# --- the cluster, reached by both namespaces; a dead client's watch
# (and so its hold on the exclusive lock) ends after 5 s, not 30
export CEPH_ADDR=10.213.0.1 CEPH_IMAGE_SIZE=64M
export CEPH_CONF_EXTRA="osd client watch timeout = 5"
ceph_up "$TMP/ceph"
# the gateways' cephx user: RBD's caps on the pool (mon 'profile rbd'
# includes the right to blocklist another client, which breaking a dead
# gateway's lock takes)
KR=$(ceph_user gw)

# gw_start NAME N: idm-target in gateway N's namespace on 10.213.N.2,
# the image as LUN 1 (the same --lun on both: the same identifiers);
# sets PID_NAME; gw_wait NAME N waits for its port and sets PORTAL_NAME
# (IP:PORT). Both start at once: each connects to the cluster first.
gw_start() {
	local name=$1 n=$2 pid ns
	ns=(nsenter "--net=/proc/${HOLDER[n]}/ns/net")
	rm -f "$TMP/$name.port"
	"${ns[@]}" "$IDM_TARGET" --port-file "$TMP/$name.port" --portal "10.213.$n.2:0" \
		--target-name "$IQN" --allow-all -v --rbd-conf "$CEPH_CONF" --rbd-user gw \
		--rbd-keyring "$KR" --lun "1=rbd:$CEPH_POOL/$CEPH_IMAGE" \
		>/dev/null 2>>"$TMP/$name.log" &
	pid=$!
	on_exit "stop_pid $pid"
	eval "PID_$name=$pid"
}
gw_wait() {
	local name=$1 n=$2 pid pf=$TMP/$1.port
	eval "pid=\$PID_$name"
	wait_file "$pf" "$pid" 60 || { tail -n 20 "$TMP/$name.log"; die "gateway $name did not start"; }
	eval "PORTAL_$name=10.213.$n.2:$(cat "$pf")"
}
gw_start A 1
gw_start B 2
gw_wait A 1
gw_wait B 2
echo "gateways up at $(since) s: A at $PORTAL_A, B at $PORTAL_B"

# --- 1. the same identity through both paths
if command -v iscsi-inq >/dev/null; then
	# VPD 0x80 (unit serial number) and 0x83 (device identification):
	# what multipath builds the WWID from
	ids() { for p in 128 131; do timeout 20 iscsi-inq -e 1 -c $p "iscsi://$1/$IQN/1" 2>&1; done; }
	idA=$(ids "$PORTAL_A") idB=$(ids "$PORTAL_B")
	sA=$(printf '%s\n' "$idA" | grep -o "Unit Serial Number:\[IDM[^]]*\]")
	check "the same VPD 0x80 and 0x83 through A and B ($sA)" test -n "$sA" -a "$idA" = "$idB"
fi

BS=512
fo() { timeout -k 5 "$(scaled 120)" python3 "$FAILOVER" "$@"; }
# --- 2. a pattern through A, read back through B
: >"$TMP/ack1"
if fo write "$IQN" 1 $BS "$TMP/ack1" 0 256 1 "$PORTAL_A" >"$TMP/w1.out" 2>&1 &&
	fo check "$IQN" 1 $BS "$TMP/ack1" 1 "$PORTAL_B" >"$TMP/c1.out" 2>&1; then
	echo "ok   1 MiB written through A reads back through B: $(tail -1 "$TMP/c1.out")"
else
	echo "FAIL pattern through A, read through B:"; cat "$TMP/w1.out" "$TMP/c1.out"
	fails=$((fails + 1))
fi

# --- two live writers: B writes while A holds the exclusive lock (B's
# librbd asks A's for it, A's gives it up), then A again (it comes back)
: >"$TMP/ack3"
if fo write "$IQN" 1 $BS "$TMP/ack3" 4096 64 3 "$PORTAL_B" >"$TMP/w3.out" 2>&1 &&
	fo write "$IQN" 1 $BS "$TMP/ack3" 8192 64 3 "$PORTAL_A" >>"$TMP/w3.out" 2>&1 &&
	fo check "$IQN" 1 $BS "$TMP/ack3" 3 "$PORTAL_B" >"$TMP/c3.out" 2>&1 &&
	fo check "$IQN" 1 $BS "$TMP/ack3" 3 "$PORTAL_A" >>"$TMP/c3.out" 2>&1; then
	echo "ok   both gateways alive: writes through B, then A, read back through both"
else
	echo "FAIL two live writers:"; cat "$TMP/w3.out" "$TMP/c3.out"; fails=$((fails + 1))
fi

# --- 3. a write stream through A, A killed, on through B
: >"$TMP/ack2"
FIRST=16384 COUNT=2000 CUT=400
fo write "$IQN" 1 $BS "$TMP/ack2" $FIRST $COUNT 2 "$PORTAL_A,$PORTAL_B" >"$TMP/w2.out" 2>&1 &
WRITER=$!
PIDS="$PIDS $WRITER"
acks() { [ "$(wc -l <"$TMP/ack2")" -ge "$1" ]; }
wait_until 60 acks $CUT || { cat "$TMP/w2.out"; die "the writer did not reach $CUT acknowledged writes"; }
kill -KILL "$PID_A"
{ wait "$PID_A"; } 2>/dev/null
echo "gateway A killed (SIGKILL) after $(wc -l <"$TMP/ack2") acknowledged writes, at $(since) s"
if wait "$WRITER" && grep -q "^failover: first write" "$TMP/w2.out"; then
	echo "ok   the stream went on through B: $(grep failover "$TMP/w2.out" | tr '\n' ' ')"
else
	echo "FAIL the writer did not fail over to B and finish:"; cat "$TMP/w2.out"
	fails=$((fails + 1))
fi
if fo check "$IQN" 1 $BS "$TMP/ack2" 2 "$PORTAL_B" >"$TMP/c2.out" 2>&1; then
	echo "ok   $(tail -1 "$TMP/c2.out")"
else
	echo "FAIL acknowledged writes through B:"; cat "$TMP/c2.out"; fails=$((fails + 1))
fi
# B's librbd broke dead A's lock: it blocklisted A's client first
if timeout -k 5 "$(scaled 60)" ceph osd blocklist ls 2>/dev/null | grep -q "^10.213.1.2:"; then
	echo "ok   gateway A's client is on the OSD blocklist (B broke its lock)"
else
	echo "FAIL gateway A's client is not blocklisted"; fails=$((fails + 1))
fi
kill -0 "$PID_B" 2>/dev/null || { tail -20 "$TMP/B.log"; die "gateway B died"; }
echo "total $(since) s"
[ "$fails" = 0 ] || { tail -20 "$TMP/B.log"; exit 1; }
echo PASS
