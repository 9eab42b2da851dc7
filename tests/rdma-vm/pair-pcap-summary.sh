#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# pair-pcap-summary.sh PCAP: what crossed the two-guest rig's link, per RC
# connection, from the capture vm-pair took (one tshark pass, then awk).
#
# A connection is named by its rdma_cm exchange (ConnectRequest and
# ConnectReply share a MAD transaction ID: initiator QPN, target QPN and
# the service port); each direction is a flow "src -> dst QP 0x..".
# Per flow it counts messages by RC opcode: Send (First/Only), Send with
# Invalidate (Last/Only w/ Inv), RDMA Write (First/Only), RDMA Read
# Requests and Read Response packets; ACKs; NAKs from the AETH syndrome:
# RNR NAKs (0x20-0x3f), PSN sequence-error NAKs (0x60) and other NAKs
# (0x61-0x7f); Send packets with no payload (Send Only or Last of 0 bytes:
# nothing libidm posts on the wire; soft-RoCE makes one after lost ACKs,
# doc/iser.md); and retransmitted packets: a request PSN seen before in the
# same direction (the PSN space wraps at 2^24; a wrap resets the record).
# Read Responses and ACKs are not counted as retransmissions (the
# responder resends them after a duplicate request, which is counted).
set -euo pipefail
pcap=${1:?usage: pair-pcap-summary.sh PCAP}
command -v tshark >/dev/null || { echo "pair-pcap-summary: tshark not installed (Debian package tshark)"; exit 77; }
[ -s "$pcap" ] || { echo "pair-pcap-summary: no capture at $pcap"; exit 1; }

tshark -r "$pcap" -n -Y 'infiniband' -T fields -E separator=/t -E occurrence=f \
	-e frame.time_relative -e ip.src -e ip.dst -e infiniband.bth.opcode \
	-e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.aeth.syndrome \
	-e infiniband.mad.attributeid -e infiniband.mad.transactionid \
	-e infiniband.cm.req.localqpn -e infiniband.cm.req.serviceid.dport \
	-e infiniband.cm.rep.localqpn -e udp.length 2>/dev/null |
awk -F'\t' '
function flow(s, d, q) { return s " -> " d " QP " q }
function hex(x,   i, n, c) {	# "0x0cbc" -> 3260 (mawk has no strtonum)
	sub(/^0[xX]/, "", x); n = 0
	for (i = 1; i <= length(x); i++) { c = index("0123456789abcdef", tolower(substr(x, i, 1))); n = n * 16 + c - 1 }
	return n
}
BEGIN {
	madname["0x0012"] = "ConnectReject"; madname["0x0014"] = "ReadyToUse"
	madname["0x0015"] = "DisconnectRequest"; madname["0x0016"] = "DisconnectReply"
	madname["0x0011"] = "MessageReceiptAck"; madname["0x0018"] = "LoadAlternatePath"
}
{
	t = $1; src = $2; dst = $3; op = $4 + 0; qp = $5; psn = $6 + 0
	last_t = t
	if (qp == "0x000001" || qp == "0x00000001" || $8 != "") {	# QP1: CM MADs
		if ($8 == "0x0010" || $8 == "0x10") {		# ConnectRequest
			req_src[$9] = src; req_dst[$9] = dst; req_qpn[$9] = $10; req_port[$9] = ($11 == "") ? "?" : hex($11); req_t[$9] = t
			if (!($9 in seen_tid)) { seen_tid[$9] = 1; tids[++ntid] = $9 }
		} else if ($8 == "0x0013" || $8 == "0x13") {	# ConnectReply
			rep_qpn[$9] = $12
		} else if ($8 != "") {
			mads[$8]++
		}
		next
	}
	f = flow(src, dst, qp)
	if (!(f in pkts)) flows[++nflow] = f
	pkts[f]++
	if (op == 0 || op == 4 || op == 5) send[f]++
	# UDP header 8 + BTH 12 (+ immediate 4) + ICRC 4: a Send of 0 bytes
	if (((op == 2 || op == 4) && $13 + 0 == 24) || ((op == 3 || op == 5) && $13 + 0 == 28)) send0[f]++
	else if (op == 22 || op == 23) sendinv[f]++
	else if (op == 6 || op == 10 || op == 11) write[f]++
	else if (op == 12) rreq[f]++
	else if (op >= 13 && op <= 16) rresp[f]++
	if (op == 17) {
		syn = $7 + 0
		if (syn >= 96 && syn < 128) { if (syn == 96) seqnak[f]++; else othernak[f]++ }
		else if (syn >= 32 && syn < 64) rnrnak[f]++
		else acks[f]++
		next
	}
	if (op >= 13 && op <= 16) next
	# retransmissions: a request PSN this flow has already sent
	if ((f in lastpsn) && psn < lastpsn[f] - 8388608) { for (k in sent) if (index(k, f SUBSEP) == 1) delete sent[k] }
	if ((f, psn) in sent) retx[f]++
	sent[f, psn] = 1; lastpsn[f] = psn
}
END {
	printf "capture: %s s of traffic\n", last_t
	printf "connections (rdma_cm ConnectRequest -> ConnectReply):\n"
	for (i = 1; i <= ntid; i++) {
		x = tids[i]
		printf "  %8.3f s  %s (QP %s) -> %s:%s (QP %s)%s\n", req_t[x], req_src[x], req_qpn[x], req_dst[x], req_port[x], \
			(x in rep_qpn) ? rep_qpn[x] : "-", (x in rep_qpn) ? "" : "  [no reply]"
		conn[flow(req_src[x], req_dst[x], (x in rep_qpn) ? rep_qpn[x] : "?")] = "port " req_port[x] " initiator->target"
		conn[flow(req_dst[x], req_src[x], req_qpn[x])] = "port " req_port[x] " target->initiator"
	}
	if (ntid == 0) printf "  none in the capture\n"
	for (m in mads) printf "  other CM MADs: %s x %d\n", (m in madname) ? madname[m] : "attribute " m, mads[m]
	printf "%-42s %-28s %7s %6s %6s %6s %6s %7s %6s %5s %5s %5s %6s %5s\n", "flow (src -> dst QP)", "connection", "pkts", "Send", "SInv", "Write", "RdReq", "RdResp", "ACK", "RNR", "SeqNK", "NAK", "ReTx", "Send0"
	for (i = 1; i <= nflow; i++) {
		f = flows[i]
		printf "%-42s %-28s %7d %6d %6d %6d %6d %7d %6d %5d %5d %5d %6d %5d\n", f, (f in conn) ? conn[f] : "-", pkts[f], send[f], sendinv[f], write[f], rreq[f], rresp[f], acks[f], rnrnak[f], seqnak[f], othernak[f], retx[f], send0[f]
		tot_rnr += rnrnak[f]; tot_seq += seqnak[f]; tot_nak += othernak[f]; tot_retx += retx[f]; tot_p += pkts[f]; tot_send0 += send0[f]
	}
	printf "total: %d RoCE packets, %d RNR NAKs, %d sequence-error NAKs, %d other NAKs, %d retransmitted packets, %d 0-byte Sends\n", tot_p, tot_rnr, tot_seq, tot_nak, tot_retx, tot_send0
}'
