# SPDX-License-Identifier: BSD-2-Clause
"""The workloads bench/run measures, and which initiator can run which."""

from dataclasses import dataclass

KIB = 1024
MIB = 1024 * 1024


@dataclass(frozen=True)
class Workload:
    name: str
    bs: int            # bytes per I/O
    qd: int            # commands in flight per session
    read: bool         # 100% reads, else 100% writes
    sessions: int = 1
    digests: bool = False  # CRC32C header (and data, where the initiator can)

    @property
    def total_qd(self):
        return self.qd * self.sessions


def _w(name, bs, qd, read, sessions=1, digests=False):
    return Workload(name, bs, qd, read, sessions, digests)


# Every access is random (aligned to the block size for idm-initiator;
# iscsi-perf picks any LBA). The sessions sweep keeps the total queue
# depth at 64: 1 x 64, 4 x 16, 16 x 4, 64 x 1.
ALL = [
    _w("4k-randread-qd1", 4 * KIB, 1, True),
    _w("4k-randwrite-qd1", 4 * KIB, 1, False),
    _w("4k-randread-qd32", 4 * KIB, 32, True),
    _w("4k-randwrite-qd32", 4 * KIB, 32, False),
    _w("128k-randread-qd8", 128 * KIB, 8, True),
    _w("128k-randwrite-qd8", 128 * KIB, 8, False),
    _w("1m-randread-qd4", MIB, 4, True),
    _w("1m-randwrite-qd4", MIB, 4, False),
    _w("4k-randread-qd32-dig", 4 * KIB, 32, True, digests=True),
    _w("4k-randwrite-qd32-dig", 4 * KIB, 32, False, digests=True),
    _w("1m-randread-qd4-dig", MIB, 4, True, digests=True),
    _w("1m-randwrite-qd4-dig", MIB, 4, False, digests=True),
    _w("4k-randread-1x64", 4 * KIB, 64, True, sessions=1),
    _w("4k-randread-4x16", 4 * KIB, 16, True, sessions=4),
    _w("4k-randread-16x4", 4 * KIB, 4, True, sessions=16),
    _w("4k-randread-64x1", 4 * KIB, 1, True, sessions=64),
]

QUICK = ["4k-randread-qd32", "4k-randwrite-qd32", "1m-randread-qd4-dig",
         "4k-randread-4x16"]

BY_NAME = {w.name: w for w in ALL}


def select(names):
    """Workloads by name, in the order of ALL; unknown names raise."""
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise ValueError("unknown workload(s): " + ", ".join(unknown) +
                         " (see --list)")
    wanted = set(names)
    return [w for w in ALL if w.name in wanted]


def initiator_can_run(initiator, w):
    """(True, None) or (False, why). libiscsi's iscsi-perf only reads."""
    if initiator == "iscsi-perf" and not w.read:
        return False, "iscsi-perf only reads"
    return True, None
