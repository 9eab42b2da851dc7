#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Does soft-RoCE send only the Sends it was given, when ACKs get lost?
# (doc/iser.md, "A 0-byte Send from soft-RoCE"). rxe-zero-send (verbs and
# rdma_cm only, no libidm) streams checked Sends from B to a server in A
# while B drops most ACKs that arrive (tc ingress, u32 on the BTH opcode,
# gact "random determ": 1 in N passes), with a ~4 ms ACK timeout: B's rxe
# retransmits all the time, and the ACKs that do get through arrive in the
# middle of its retransmissions.
#
#   multi   Sends of 256 B, 8 KiB and 96 KiB in turn (1, 3 and 25 packets
#           at the rig's 4096-byte RoCE MTU): what the iSER initiator sends
#           with IDM_ISER_STAG=mr, commands with and without immediate
#           data; 1 ACK in 8 passes
#   single  Sends of 64, 512 and 900 B: every one fits one packet; 1 ACK
#           in 64 passes (one ACK per message: as many retransmissions)
#
# The server counts 0-byte messages (the client posts none), messages out
# of sequence or with wrong bytes, and the client the completion that
# ended its run (a fatal NAK comes back as "remote invalid request").
# The test prints both, per run:
#   rxe-zero-send[multi]: server: 5170 good, 1 zero-byte, 0 bad ...
# and passes when the single-packet run is clean: that Sends of one
# packet are immune is what the iSER provider's workaround rests on. The
# multi-packet run is the reproducer: its counts are reported, not
# judged (a kernel whose rxe is fixed runs it clean too).
# Usage: rxe_zero_send.sh PATH/TO/rxe-zero-send
IDM_TEST_NAME=idm-pair-zero-send
ZS=${1:?usage: $0 PATH/TO/rxe-zero-send}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v tc > /dev/null || skip "tc (iproute2) not installed"
SECS=${IDM_ZERO_SEND_SECONDS:-20}
DEV=$IDM_PAIR_NETDEV

ack_drop_on() { # ack_drop_on N: 1 ACK in N passes
	modprobe -q -a sch_ingress cls_u32 act_gact 2>/dev/null
	tc qdisc add dev "$DEV" handle ffff: ingress &&
	# RoCEv2 (UDP 4791), BTH opcode 0x11 (RC Acknowledge) 28 bytes into
	# the IPv4 packet: drop, but let every N-th one through
	tc filter add dev "$DEV" parent ffff: protocol ip prio 1 u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff \
		match u8 0x11 0xff at 28 \
		action gact drop random determ pass "$1"
}
ack_drop_off() { tc qdisc del dev "$DEV" handle ffff: ingress 2>/dev/null || true; }
on_exit ack_drop_off

declare -A SIZES=([multi]="256,8k,96k" [single]="64,512,900") PASS=([multi]=8 [single]=64)
port=7400
single_ok=0
for mode in multi single; do
	port=$((port + 1))
	pair_a_start "zs-$mode" "$ZS" server "$A_IP" "$port" $((SECS + 60)) ||
		fail "cannot start the server in A"
	pair_a_cleanup "zs-$mode"
	pair_a_wait_log "zs-$mode" '^server: listening' 30 || fail "the server in A did not start"
	ack_drop_on "${PASS[$mode]}" || fail "cannot set the ACK filter on $DEV"
	pair_wire_begin
	log "$mode: Sends of ${SIZES[$mode]} B for $SECS s, 1 of every ${PASS[$mode]} ACKs let through"
	crc=0
	run_bounded $((SECS + 60)) "$TMP/client-$mode" "$ZS" client "$A_IP" "$port" "$SECS" \
		"${SIZES[$mode]}" || crc=$?
	ack_drop_off
	pair_a_wait_log "zs-$mode" '^server: [0-9]' 30 || true
	pair_wire_end "zero-send-$mode"
	src=$(pair_a_stop "zs-$mode") || true
	echo "rxe-zero-send[$mode]: $(grep '^client:' "$TMP/client-$mode" || echo "client: no summary (status $crc)")"
	echo "rxe-zero-send[$mode]: $(grep '^server: [0-9]' "$(pair_a_log "zs-$mode")" || echo "server: no summary (status $src)")"
	if [ "$mode" = single ] && [ "$crc" = 0 ] && [ "$src" = 0 ]; then
		single_ok=1
	fi
done
[ "$single_ok" = 1 ] || fail "single-packet Sends were not delivered clean through lost ACKs"
log "PASS (single-packet Sends clean; the multi-packet counts above are the reproducer's)"
