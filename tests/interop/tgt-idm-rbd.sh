#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tgtd on libidm (contrib/tgt) serving a Ceph RBD image through tgt's own
# rbd backing store (bs_rbd.so, built with the port: build-tgt-idm.sh),
# on the one-node cluster of tests/lib/ceph.sh: `tgtadm --bstype rbd
# --backing-store POOL/IMAGE --bsopts conf=...;id=...`, then
# idm-initiator --verify (I/O sizes 512 B to 16 MiB, digests off and on),
# and a random file written through QEMU's iscsi driver that `rbd export`
# must give back from the image byte for byte (the data went to Ceph, not
# to some buffer of tgtd's). tgtd and the cluster are stopped in order at
# the end, and tgtd must have exited.
# Usage: tgt-idm-rbd.sh PATH/TO/idm-initiator [WORKDIR of build-tgt-idm.sh]
# shellcheck disable=SC2034,SC2154 # IDM_TEST_NAME is read by the lib; URL_*, PID_* set by start_tgtd
IDM_TEST_NAME=tgt-idm-rbd
# shellcheck source-path=SCRIPTDIR source=tgt-idm-lib.sh
. "$(dirname "$0")/tgt-idm-lib.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/ceph.sh
. "$(dirname "$0")/../lib/ceph.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/qemu.sh
. "$(dirname "$0")/../lib/qemu.sh"
INI=${1:?usage: $0 idm-initiator [workdir]}
[ -x "$INI" ] || skip "no idm-initiator at $INI"
find_tgt_idm "${2:-}"
[ "${TGT_RBD:-0}" = 1 ] ||
	skip "tgtd on libidm was built without tgt's rbd backing store (install librbd-dev and librados-dev, then contrib/build-ports.sh BUILDDIR tgt)"
need_qemu_iscsi
need cmp diffutils

log "starting the one-node Ceph"
ceph_up "$TMP/ceph"
log "cluster RSS (KiB): $(ceph_rss)"

log "tgtd-on-libidm with LUN 1 on rbd:$CEPH_POOL/$CEPH_IMAGE"
TGT_LUN_ARGS=(--bstype rbd --backing-store "$CEPH_POOL/$CEPH_IMAGE"
	--bsopts "conf=$CEPH_CONF;id=$CEPH_USER")
start_tgtd idm "$TGTD_IDM" 5 0 || { tail -20 "$TMP/tgtd-idm.log"; fail "tgtd-on-libidm did not start with an rbd LUN"; }
adm=("$TGTADM" -C 5 --lld iscsi)
timeout 5 "${adm[@]}" --op show --mode target >"$TMP/show.out" || fail "tgtadm show"
grep -q "Backing store type: rbd" "$TMP/show.out" || { cat "$TMP/show.out"; fail "LUN 1 is not rbd"; }
grep -q "Backing store path: $CEPH_POOL/$CEPH_IMAGE" "$TMP/show.out" || fail "LUN 1 is not $CEPH_POOL/$CEPH_IMAGE"
for key in HeaderDigest DataDigest; do
	timeout 5 "${adm[@]}" --op update --mode target --tid 1 -n "$key" -v None,CRC32C ||
		fail "tgtadm $key"
done
alive() {
	kill -0 "$PID_idm" 2>/dev/null && return 0
	tail -20 "$TMP/tgtd-idm.log"
	die "tgtd-on-libidm died"
}

SIZES=512,4k,64k,256k,1m,4m,16m
for dig in none crc32c; do
	log "idm-initiator --verify 32M, I/O sizes $SIZES, digests $dig"
	run_bounded 180 "$TMP/ini.out" "$INI" -v -q -t 60 --header-digest "$dig" \
		--data-digest "$dig" --verify 32M --verify-io "$SIZES" "$URL_idm" ||
		{ tail -20 "$TMP/tgtd-idm.log"; fail "verify, digests $dig"; }
	grep -q 'verify: .*: OK' "$TMP/ini.out" || fail "verify, digests $dig: no OK"
	alive
done

log "a random file through QEMU's iscsi driver, read back by rbd export"
head -c $((8 * 1048576 + 4608)) /dev/urandom >"$TMP/rand.bin"
run_bounded 120 "$TMP/conv.out" qemu-img convert -n -f raw -O raw "$TMP/rand.bin" "$URL_idm" ||
	fail "qemu-img convert onto the LUN"
alive
run_bounded 120 "$TMP/export.out" rbd export --no-progress "$CEPH_POOL/$CEPH_IMAGE" "$TMP/image.bin" ||
	fail "rbd export"
cmp -n "$(stat -c %s "$TMP/rand.bin")" "$TMP/rand.bin" "$TMP/image.bin" ||
	fail "the image does not hold what was written through tgtd"
echo "ok   rbd export gives back the 8 MiB + 4.5 KiB written over iSCSI"
log "cluster RSS after the I/O (KiB): $(ceph_rss)"

log "stopping tgtd, then the cluster"
timeout 10 "${adm[@]}" --op delete --force --mode target --tid 1 || fail "tgtadm delete target"
timeout 10 "${adm[@]}" --op delete --mode system || fail "tgtadm delete system"
gone() { ! kill -0 "$PID_idm" 2>/dev/null; }
wait_until 30 gone || fail "tgtd did not exit after delete system"
ceph_down
echo "PASS: tgtd-on-libidm serves rbd:$CEPH_POOL/$CEPH_IMAGE with tgt's bs_rbd (cluster up in $CEPH_START_SECONDS s)"
