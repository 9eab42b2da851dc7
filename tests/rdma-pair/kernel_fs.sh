#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The Linux kernel's iSER initiator (open-iscsi + ib_iser) in B against
# idm-target in A, across the link, with a filesystem on top: mkfs.ext4,
# mount, copy a tree of files of mixed sizes (1 B .. 4 MiB), sync, umount,
# fsck -n, mount again and compare every file's SHA-256. Reports whether
# the kernel's writes moved by RDMA Read (target pulls from the Write
# STag) or all went as immediate/unsolicited data in Sends: B captures the
# RDMA Read Requests that reach its NIC (BTH opcode 12).
# Usage: kernel_fs.sh PATH/TO/idm-target
IDM_TEST_NAME=idm-pair-kernel-fs
IDM_TARGET=${1:?usage: $0 idm-target}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../iser-interop/open-iscsi.sh
. "$(dirname "$0")/../iser-interop/open-iscsi.sh"
need mkfs.ext4 e2fsprogs
need fsck.ext4 e2fsprogs
need sha256sum coreutils
PY=/usr/bin/python3
[ -x "$PY" ] || skip "/usr/bin/python3 not installed (Debian package python3)"
iscsid_start
PORTAL_IP=$A_IP
target_alive() { pair_a_alive tgt; }

IQN=iqn.2026-11.org.libidm:pair-kernel-fs
pair_idm_target tgt "$IQN" ram:256M
login_disk "$IQN"

# RDMA Read Requests from A to B: a capture of only those (the filter looks
# at the BTH opcode, the first byte of the RoCEv2 UDP payload).
CAP=
if command -v dumpcap >/dev/null; then
	CAP=$TMP/rdma-read.pcapng
	dumpcap -q -i "$IDM_PAIR_NETDEV" -s 64 -f 'udp dst port 4791 and udp[8] == 12' -w "$CAP" \
		>"$TMP/dumpcap.log" 2>&1 &
	CAP_PID=$!
	CLEANUP_CMDS+=("stop_pid $CAP_PID")
fi

pair_wire_begin
log "mkfs.ext4 on $DEV"
run_bounded 180 "$TMP/mkfs" mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 "$DEV" ||
	fail "mkfs.ext4"
MNT=$TMP/mnt
mkdir -p "$MNT"
timeout 60 mount "$DEV" "$MNT" || fail "mount"
CLEANUP_CMDS+=("umount $MNT")

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
timeout 300 cp -a "$TMP/tree/." "$MNT/" || fail "cp to the iSER disk"
timeout 120 sync || fail "sync"
timeout 120 umount "$MNT" || fail "umount"
pair_a_alive tgt
log "fsck -n"
run_bounded 180 "$TMP/fsck" fsck.ext4 -n -f "$DEV" || fail "fsck.ext4 -n found problems"
log "mount again, compare"
timeout 60 mount -o ro "$DEV" "$MNT" || fail "second mount"
# (the second mount reads through the page cache of a fresh mount: the data
# comes from the target)
echo 3 >/proc/sys/vm/drop_caches
(cd "$MNT" && timeout 300 sha256sum --quiet -c "$TMP/sums") || fail "files differ after remount"
timeout 60 umount "$MNT" || fail "umount"
log "$(wc -l <"$TMP/sums") files identical after umount, fsck and remount"
pair_wire_end kernel-fs

if [ -n "$CAP" ]; then
	stop_pid "$CAP_PID"
	reads=$(capinfos -c -M "$CAP" 2>/dev/null | awk -F: '/Number of packets/ { gsub(/ /, "", $2); print $2 }')
	if [ "${reads:-0}" -gt 0 ]; then
		log "the kernel's writes: $reads RDMA Read Requests from the target (data pulled by RDMA Read)"
	else
		log "the kernel's writes: NO RDMA Read Request on the wire (all write data went in Sends: immediate/unsolicited)"
	fi
else
	log "dumpcap not installed (Debian package tshark): RDMA Read use not measured"
fi
logout_disk "$IQN"
log "PASS"
