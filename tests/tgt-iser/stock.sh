#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# shellcheck disable=SC2154 # URL_stock, PID_stock, PORT_stock: set by start_tgtd
# For reference: Debian's stock tgtd (/usr/sbin/tgtd) with its own iSER
# driver (lld iser, tgt's iser.c), tried the way tgtd on libidm is tried
# in this folder: a target of lld iser on the guest's RDMA address, then
# libiscsi's iscsi-inq over iser://, the kernel's ib_iser (sendtargets
# discovery and login over iface iser) and, if a disk appears, a 1 MiB
# O_DIRECT write read back; twice: with an address ACL of ALL as tgtd on
# libidm is set up, then with the initiators' names bound as well (tgt's
# iSER login code wants both ACLs to match, its TCP login either, see
# round 1 below). Each step is bounded; what happened is
# printed with the lines of tgtd's debug log that say why. The test
# records stock tgtd's behaviour and does not fail because of it: it
# fails only when it cannot run its own steps (77 when something it
# needs is missing).
# Usage: stock.sh TGT-IDM-WORKDIR (for its tgtadm)
IDM_TEST_NAME=tgt-iser-stock
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
tgt_iser_setup "${1:-}"
need iscsi-inq libiscsi-bin
STOCK=/usr/sbin/tgtd
[ -x "$STOCK" ] || skip "no $STOCK (Debian package tgt)"
ldd "$STOCK" | grep -q librdmacm || skip "$STOCK is built without iSER (no librdmacm)"
# shellcheck source-path=SCRIPTDIR source=../iser-interop/open-iscsi.sh
. "$(dirname "$0")/../iser-interop/open-iscsi.sh"
iscsid_start

SLOG=$TMP/tgtd-stock.log
verdict=()
say() { log "[$ROUND] $*"; verdict+=("[$ROUND] $*"); }
ROUND=setup
why() {
	grep -aE 'iser|login|Login|shm|RNR|failed|error|Target .* is' "$SLOG" |
		grep -avE 'iscsi_rx_handler|tx_handler' | tail -n "${1:-12}" | cut -c1-200 | sed 's/^/   | tgtd: /'
}

# tgtd's iSCSI/TCP portal on $IP:PORT, its iSER driver listening on 3260
# (rdma_cm, all addresses; its default: tgt 1.0.85 refuses every --iser
# port=N with "invalid port supplied", its parser tests a stale errno),
# the target of lld iser
TGTD_ARGS=(-d 1)
if ! TGT_ADDR=$IP TGT_LLD=iser TGT_SCHEME=iser start_tgtd stock "$STOCK" 4 64M; then
	say "stock tgtd: cannot set up a target of lld iser"
	why 20
	log "RESULT (stock tgtd, not a failure of this test): ${verdict[*]}"
	exit 0
fi
# shellcheck disable=SC2154 # set by start_tgtd
PORT=3260
SIQN=$IQN:stock
URL_stock=iser://$IP:$PORT/$SIQN/1
timeout 5 "$TGTADM" -C 4 --lld iser --op show --mode target | sed 's/^/   | /' | head -n 12
target_alive() { tgtd_alive stock; }

P=$IP:$PORT
INQ_NAME=iqn.2026-11.org.libidm:stock-inq
KERNEL_NAME=$(sed -n 's/^InitiatorName=//p' /etc/iscsi/initiatorname.iscsi)
CLEANUP_CMDS+=("timeout 30 iscsiadm -m discoverydb -t st -p $P -I iser -o delete")
CLEANUP_CMDS+=("timeout 30 iscsiadm -m node -T $SIQN -p $P -o delete")
CLEANUP_CMDS+=("timeout 60 iscsiadm -m node -T $SIQN -p $P --logout")

# try_stock: iscsi-inq over iser://, then ib_iser discovery, login and a
# 1 MiB O_DIRECT write read back; each outcome recorded with say()
try_stock() {
	log "libiscsi: iscsi-inq $URL_stock"
	if run_bounded 60 "$TMP/inq" "${PEER[@]}" iscsi-inq -i "$INQ_NAME" "$URL_stock"; then
		say "iscsi-inq over iser:// answered ($(grep -m1 -E 'Vendor|Product' "$TMP/inq" | tr -s ' '))"
	else
		say "iscsi-inq over iser:// failed: $(grep -m1 -iE 'fail|error|status' "$TMP/inq" | cut -c1-120)"
	fi
	why 8
	target_alive

	log "ib_iser: discovery at $P over iface iser"
	if run_bounded 60 "$TMP/disc" iscsiadm -m discovery -t sendtargets -p "$P" -I iser &&
		grep -q " $SIQN\$" "$TMP/disc"; then
		say "ib_iser discovery found $SIQN"
		# a session that hangs must give up soon: later tests share this boot
		timeout 30 iscsiadm -m node -T "$SIQN" -p "$P" -o update \
			-n node.session.timeo.replacement_timeout -v 15 >/dev/null || true
		log "ib_iser: login"
		if run_bounded 60 "$TMP/login" iscsiadm -m node -T "$SIQN" -p "$P" -I iser --login; then
			dev=
			if iscsi_disk_wait 20; then dev=$DEV; fi
			if [ -z "$dev" ]; then
				say "ib_iser logged in, no disk appeared"
			else
				head -c 1048576 /dev/urandom >"$TMP/pat"
				if timeout 60 dd if="$TMP/pat" of="$dev" bs=1M oflag=direct status=none &&
					timeout 60 dd if="$dev" of="$TMP/back" bs=1M count=1 iflag=direct status=none &&
					cmp -s "$TMP/pat" "$TMP/back"; then
					say "ib_iser logged in; 1 MiB O_DIRECT written and read back equal on $dev"
				else
					say "ib_iser logged in; 1 MiB O_DIRECT write/read-back on $dev failed"
				fi
			fi
			run_bounded 60 "$TMP/logout" iscsiadm -m node -T "$SIQN" -p "$P" --logout >/dev/null || true
		else
			say "ib_iser login failed: $(grep -m1 -iE 'fail|error' "$TMP/login" | cut -c1-140)"
		fi
	else
		say "ib_iser discovery failed or did not report $SIQN: $(grep -m1 -iE 'fail|error|No portals' "$TMP/disc" | cut -c1-140)"
	fi
	why 12
}

# Round 1, set up as tgtd on libidm is (an address ACL of ALL, no
# initiator-name ACL). tgt's iSCSI/TCP login (iscsid.c) admits an
# initiator that matches either ACL; the copy of the login code in its
# iSER driver (iser_text.c) refuses unless both match, at login ("Target
# not found") and in sendtargets discovery (the target is left out).
ROUND="-I ALL only"
try_stock
# Round 2: the initiators' names bound too (tgtadm -Q), so that both
# ACLs match and stock tgt's iSER gets past its login check
for name in "$INQ_NAME" "$KERNEL_NAME"; do
	timeout 5 "$TGTADM" -C 4 --lld iser --op bind --mode target --tid 1 -Q "$name" ||
		say "tgtadm could not bind initiator name $name"
done
ROUND="-I ALL and -Q NAME"
try_stock
dmesg | grep -iE 'iser|iscsi' | tail -n 4 | sed 's/^/   | dmesg: /'
kill -0 "$PID_stock" 2>/dev/null || say "stock tgtd exited"
echo "RESULT (stock tgtd $(dpkg-query -W -f='${Version}' tgt 2>/dev/null), lld iser, in the soft-RoCE guest):"
printf '  - %s\n' "${verdict[@]}"
log "PASS (this test records stock tgtd's behaviour)"
