#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""READ(10)s through libiscsi's iovector API (ctypes; libiscsi.so.7 as
the environment's LD_LIBRARY_PATH finds it) over iSER on one session:
the first into two segments with a gap between them (scattered), the
second into one buffer. Prints one line each:
  scattered STATUS ERROR-TEXT-OR-"ok"|"mismatch"
  contiguous STATUS "ok"|"mismatch"|ERROR-TEXT
STATUS is the task's status (0 GOOD) or "none" (no task). Data must be
PATTERN. Exit status 2 when the login fails.
usage: sg_probe.py HOST:PORT IQN LUN LBA PATTERN [tcp]  (iSER unless tcp)"""
import ctypes
import sys


class ScsiIovec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


def main():
    portal, iqn, lun, lba, pat = sys.argv[1:6]
    lun, lba, pat = int(lun), int(lba), int(pat, 0)
    lib = ctypes.CDLL("libiscsi.so.7")
    lib.iscsi_create_context.restype = ctypes.c_void_p
    lib.iscsi_create_context.argtypes = [ctypes.c_char_p]
    lib.iscsi_get_error.restype = ctypes.c_char_p
    lib.iscsi_get_error.argtypes = [ctypes.c_void_p]
    for f in ("iscsi_init_transport", "iscsi_set_session_type"):
        getattr(lib, f).argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.iscsi_set_targetname.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.iscsi_full_connect_sync.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    lib.iscsi_read10_iov_sync.restype = ctypes.c_void_p
    lib.iscsi_read10_iov_sync.argtypes = [
        ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_int,
        ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
        ctypes.POINTER(ScsiIovec), ctypes.c_int]
    lib.scsi_free_scsi_task.argtypes = [ctypes.c_void_p]
    for f in ("iscsi_logout_sync", "iscsi_destroy_context"):
        getattr(lib, f).argtypes = [ctypes.c_void_p]

    ctx = lib.iscsi_create_context(b"iqn.2026-11.org.libidm:sg-probe")
    err = lambda: lib.iscsi_get_error(ctx).decode(errors="replace")
    if sys.argv[6:7] != ["tcp"]:
        lib.iscsi_init_transport(ctx, 1)  # ISER_TRANSPORT
    lib.iscsi_set_targetname(ctx, iqn.encode())
    lib.iscsi_set_session_type(ctx, 2)  # ISCSI_SESSION_NORMAL
    if lib.iscsi_full_connect_sync(ctx, portal.encode(), lun) != 0:
        print("login failed:", err())
        return 2
    seg = 65536
    # one allocation, the segments a segment's length apart: never adjacent
    mem = ctypes.create_string_buffer(3 * seg)
    base = ctypes.addressof(mem)

    def read(iovs, what):
        arr = (ScsiIovec * len(iovs))(*[ScsiIovec(a, n) for a, n in iovs])
        total = sum(n for _, n in iovs)
        ctypes.memset(base, 0, 3 * seg)
        task = lib.iscsi_read10_iov_sync(ctx, lun, lba, total, 512, 0, 0, 0, 0, 0,
                                         arr, len(iovs))
        if not task:
            print(what, "none", err())
            return
        status = ctypes.c_int.from_address(task).value
        if status != 0:
            print(what, status, err())
        else:
            ok = all(ctypes.string_at(a, n) == bytes([pat]) * n for a, n in iovs)
            print(what, status, "ok" if ok else "mismatch")
        lib.scsi_free_scsi_task(task)
        sys.stdout.flush()

    read([(base, seg), (base + 2 * seg, seg)], "scattered")
    read([(base, 2 * seg)], "contiguous")
    lib.iscsi_logout_sync(ctx)
    lib.iscsi_destroy_context(ctx)
    return 0


if __name__ == "__main__":
    sys.exit(main())
