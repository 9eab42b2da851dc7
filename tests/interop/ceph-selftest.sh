#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The one-node Ceph of tests/lib/ceph.sh, by itself: it starts (monitor,
# memstore OSD, pool, image) within its hang guard, keeps its keyring
# private, moves data (a random file through `rbd import` and `rbd export`,
# compared byte for byte; `rbd bench` 4 KiB writes and reads at queue
# depth 16 on the image it made), and stops leaving no daemon and nothing
# in Ceph's system directories; a user with RBD's caps on the pool only
# (ceph_user) reads the image. Prints its start time and the daemons'
# resident memory, idle and after the I/O.
# Usage: ceph-selftest.sh
IDM_TEST_NAME=ceph-selftest
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/ceph.sh
. "$(dirname "$0")/../lib/ceph.sh"
need cmp diffutils

# what Ceph's packages would use without our configuration: must not
# change (each directory listed, or "absent")
sysdirs() {
	local d
	for d in /etc/ceph /var/lib/ceph /var/log/ceph /run/ceph /var/run/ceph; do
		if [ -d "$d" ]; then find "$d" -mindepth 1 | sort; else echo "$d absent"; fi
	done
}
sysdirs >"$TMP/sys.before"

log "starting the cluster"
ceph_up "$TMP/ceph"
log "idle daemons' RSS (KiB): $(ceph_rss)"
[ "$(stat -c %a "$CEPH_KEYRING")" = 600 ] || fail "keyring mode $(stat -c %a "$CEPH_KEYRING"), want 600"
run_bounded 30 "$TMP/info.out" rbd info --format json "$CEPH_POOL/$CEPH_IMAGE" || fail "rbd info"
grep -q "\"size\":$(numfmt --from=iec "$CEPH_IMAGE_SIZE")," "$TMP/info.out" ||
	fail "image size is not $CEPH_IMAGE_SIZE"

log "rbd import / export of 24 MiB + 5 KiB of random data"
head -c $((24 * 1048576 + 5120)) /dev/urandom >"$TMP/in.bin"
run_bounded 120 "$TMP/import.out" rbd import --no-progress "$TMP/in.bin" "$CEPH_POOL/selftest" ||
	fail "rbd import"
run_bounded 120 "$TMP/export.out" rbd export --no-progress "$CEPH_POOL/selftest" "$TMP/out.bin" ||
	fail "rbd export"
cmp "$TMP/in.bin" "$TMP/out.bin" || fail "exported data differs from the imported"
run_bounded 60 "$TMP/rm.out" rbd rm --no-progress "$CEPH_POOL/selftest" || fail "rbd rm"

for io in write read; do
	log "rbd bench: 4 KiB random ${io}s, 16 in flight, 16 MiB"
	run_bounded 120 "$TMP/bench-$io.out" rbd bench --io-type "$io" --io-size 4K \
		--io-threads 16 --io-total 16M --io-pattern rand "$CEPH_POOL/$CEPH_IMAGE" ||
		fail "rbd bench $io"
	grep -q '^elapsed:.*ops: 4096 ' "$TMP/bench-$io.out" || fail "rbd bench $io: not 4096 I/Os"
done
log "a user with RBD's caps on the pool only reads the image"
kr=$(ceph_user selftest)
[ "$(stat -c %a "$kr")" = 600 ] || fail "client.selftest keyring mode $(stat -c %a "$kr"), want 600"
run_bounded 60 "$TMP/user.out" rbd --id selftest --keyring "$kr" bench --io-type read \
	--io-size 64K --io-threads 4 --io-total 4M "$CEPH_POOL/$CEPH_IMAGE" ||
	fail "client.selftest cannot read the image"
log "daemons' RSS after the I/O (KiB): $(ceph_rss)"

log "stopping the cluster"
pids=$CEPH_PIDS
ceph_down
for p in $pids; do
	! kill -0 "$p" 2>/dev/null || fail "daemon $p still runs after ceph_down"
done
sysdirs >"$TMP/sys.after"
diff "$TMP/sys.before" "$TMP/sys.after" || fail "the cluster left files in Ceph's system directories"
echo "PASS: one-node Ceph up in $CEPH_START_SECONDS s, data verified, stopped clean"
