# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# A filesystem on an iSCSI disk, checked end to end (sourced after lib.sh;
# used by tests/rdma-pair/kernel_fs.sh and tests/tgt-iser/kernel.sh):
#   fs_need          skip (77) without e2fsprogs, sha256sum or /usr/bin/python3
#   fs_workload DEV  mkfs.ext4, mount, copy a tree of 72 files of mixed sizes
#                    (1 B .. 4 MiB), sync, umount, fsck -n, mount again
#                    read-only, compare every file's SHA-256, umount.
# target_alive (the caller's) runs after the first umount.

fs_need() {
	need mkfs.ext4 e2fsprogs
	need fsck.ext4 e2fsprogs
	need sha256sum coreutils
	PY=/usr/bin/python3
	[ -x "$PY" ] || skip "/usr/bin/python3 not installed (Debian package python3)"
}

fs_workload() {
	local dev=$1 mnt=$TMP/mnt
	log "mkfs.ext4 on $dev"
	run_bounded 180 "$TMP/mkfs" mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 "$dev" ||
		fail "mkfs.ext4"
	mkdir -p "$mnt"
	timeout 60 mount "$dev" "$mnt" || fail "mount"
	CLEANUP_CMDS+=("umount $mnt")

	# One process makes the whole tree (a process costs ~0.2 s under TCG).
	log "a tree of files of mixed sizes"
	"$PY" - "$TMP/tree" <<'PY' || fail "cannot make the tree"
import os, random, sys
random.seed(5047)
root = sys.argv[1]
sizes = [1, 511, 512, 4095, 4096, 8193, 65536, 131072 + 7, 1 << 20, 4 << 20]
n = 0
for d in range(6):
    p = os.path.join(root, "d%d" % d, "sub")
    os.makedirs(p)
    for i in range(12):
        size = sizes[(d * 12 + i) % len(sizes)] + random.randrange(0, 3000)
        with open(os.path.join(p if i % 2 else os.path.dirname(p), "f%02d" % i), "wb") as f:
            f.write(os.urandom(size))
        n += size
print("tree: 72 files, %d bytes" % n)
PY
	(cd "$TMP/tree" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$TMP/sums" ||
		fail "checksums of the tree"
	log "copy, sync, umount"
	timeout 300 cp -a "$TMP/tree/." "$mnt/" || fail "cp to the iSCSI disk"
	timeout 120 sync || fail "sync"
	timeout 120 umount "$mnt" || fail "umount"
	target_alive
	log "fsck -n"
	run_bounded 180 "$TMP/fsck" fsck.ext4 -n -f "$dev" || fail "fsck.ext4 -n found problems"
	log "mount again, compare"
	timeout 60 mount -o ro "$dev" "$mnt" || fail "second mount"
	# (the second mount reads through the page cache of a fresh mount: the
	# data comes from the target)
	echo 3 >/proc/sys/vm/drop_caches
	(cd "$mnt" && timeout 300 sha256sum --quiet -c "$TMP/sums") || fail "files differ after remount"
	timeout 60 umount "$mnt" || fail "umount"
	log "$(wc -l <"$TMP/sums") files identical after umount, fsck and remount"
}
