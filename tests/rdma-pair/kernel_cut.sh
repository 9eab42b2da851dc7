#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# For comparison: the kernel's initiator (open-iscsi over iscsi_tcp or
# ib_iser, noop_out_interval/timeout 5/5, replacement_timeout 120) in
# guest B against idm-target in guest A, dd writing then reading back a
# pattern while the link is cut for CUT_S (30) seconds. Prints when the
# kernel noticed and when iscsid had the session back; the data must
# read back equal and no dd may fail. With --tgt, the target in A is tgtd
# on libidm (contrib/tgt), its portal of libidm provider tcp or tcp,iser.
# Usage: kernel_cut.sh tcp|iser IDM-TARGET | --tgt TGT-IDM-WORKDIR
PROV=${1:?usage: $0 tcp|iser idm-target | --tgt workdir}
TGT=${2:?}
IDM_TEST_NAME=idm-pair-kernel-cut-$PROV
IDM_TARGET=$TGT
# shellcheck source-path=SCRIPTDIR source=cut-lib.sh
. "$(dirname "$0")/cut-lib.sh"
# shellcheck source-path=SCRIPTDIR source=../iser-interop/open-iscsi.sh
. "$(dirname "$0")/../iser-interop/open-iscsi.sh"
[ "$TGT" != --tgt ] || pair_tgtd_need "${3:-}"
IQN=iqn.2026-11.org.libidm:pair-kcut
IFACE=default
[ "$PROV" = iser ] && IFACE=iser
[ "$PROV" = tcp ] && { modprobe iscsi_tcp 2>/dev/null || skip "no iscsi_tcp module"; }
iscsid_start
if [ "$TGT" = --tgt ]; then
	pair_tgtd tgt "$IQN" "$([ "$PROV" = iser ] && echo tcp,iser || echo tcp)"
else
	cut_idm_target tgt "$IQN" "$PROV"
fi
P="$A_IP:$PORT"
CLEANUP_CMDS+=("timeout 30 iscsiadm -m node -T $IQN -p $P -o delete")
CLEANUP_CMDS+=("timeout 60 iscsiadm -m node -T $IQN -p $P --logout")
timeout 60 iscsiadm -m discovery -t st -p "$P" -I "$IFACE" >/dev/null ||
	fail "discovery"
for kv in node.session.timeo.replacement_timeout=120 \
	node.conn[0].timeo.noop_out_interval=5 \
	node.conn[0].timeo.noop_out_timeout=5; do
	timeout 30 iscsiadm -m node -T "$IQN" -p "$P" -o update \
		-n "${kv%%=*}" -v "${kv#*=}" >/dev/null || fail "iscsiadm update ${kv%%=*}"
done
timeout 90 iscsiadm -m node -T "$IQN" -p "$P" -I "$IFACE" --login >/dev/null ||
	fail "login"
iscsi_disk_wait 30 || fail "no disk for LUN 1"
dev=$DEV
dd if=/dev/urandom of="$TMP/pattern" bs=1M count=16 status=none
# dd in a loop: write the pattern, read it back, compare, until 15 s
# after the link is back
(
	n=0
	while [ ! -e "$TMP/stop" ]; do
		n=$((n + 1))
		dd if="$TMP/pattern" of="$dev" bs=1M oflag=direct status=none || { echo "pass $n: write failed"; exit 1; }
		dd if="$dev" of="$TMP/back" bs=1M count=16 iflag=direct status=none || { echo "pass $n: read failed"; exit 1; }
		cmp -s "$TMP/pattern" "$TMP/back" || { echo "pass $n: data differ"; exit 1; }
		echo "pass $n ok"
	done
) >"$TMP/dd.log" 2>&1 &
ddpid=$!
up_cut=
( sleep 1; echo go >"$TMP/go" ) &
cut_during "$ddpid" "$TMP/go" go
up_cut=$(awk '{print $1}' /proc/uptime)
# recovery: from the link's return until the session is logged in again
# (iscsiadm's view; checked about every 0.5 s)
rec=
for ((i = 0; i < 180; i++)); do
	st=$(timeout 10 iscsiadm -m session -P 1 2>/dev/null | grep -E 'iSCSI (Session|Connection) State:' | tr -s ' \t' ' ')
	if [[ $st == *"Connection State: LOGGED IN"*"Session State: LOGGED_IN"* ]]; then
		rec=$(since "$RESTORE_AT" "$(now)")
		break
	fi
	sleep 0.5
done
log "kernel ($PROV): session logged in again ${rec:-NOT within 90} s after the link came back"
sleep 10
touch "$TMP/stop"
wait "$ddpid"
rc=$?
tail -n 3 "$TMP/dd.log" | sed 's/^/  | /'
# kernel times are seconds of uptime; up_cut was read as the link came
# back, CUT_S s after the cut began
c=$(awk -v u="$up_cut" -v s="$CUT_S" 'BEGIN { printf "%.3f", u - s }')
dmesg | tr -d '[]' | awk -v c="$c" '$1 + 0 >= c { t = $1; $1 = ""; printf "  | [cut%+6.1f s]%s\n", t - c, $0 }' |
	grep -iE "iscsi|ping|conn|session|iser" | head -n 12
det=$(dmesg | tr -d '[]' | awk -v c="$c" '$1 + 0 >= c && /ping timeout|detected conn error|conn error/ { printf "%.1f", $1 - c; exit }')
log "kernel ($PROV): detection ${det:-?} s after the cut"
grep -iE "operational after recovery|recovery" "$TMP/iscsid.log" 2>/dev/null | tail -n 2 | sed 's/^/  | iscsid: /'
[ $rc -eq 0 ] || fail "dd failed during the cut (see above)"
[ -n "$rec" ] || fail "the session did not come back within 90 s of the link"
log "PASS"
