#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""NOP-Out flood that never reads the answers, for nop_flood.sh.

Usage: nop_flood.py PORT TARGET_NAME COUNT SECONDS

Logs in to 127.0.0.1:PORT (one Login Request, operational stage straight
to full feature phase), prints "flooding", then sends COUNT immediate NOP-Outs, each asking
for a NOP-In (ITT other than 0xffffffff), and never reads a byte again.
The socket is non-blocking and written in large batches: once the target
stops reading, the kernel's buffers fill and the sender waits. It stops
when COUNT went out, after SECONDS, or when nothing was accepted for 3 s
(the target pushes back), and prints

    sent SENT of COUNT in SECS s (done|budget|stalled|closed)

then keeps the connection open, still unread, until a line on stdin (or
EOF), so that the target holds its side meanwhile. Exit 1 when the login
fails.
"""
import select
import socket
import struct
import sys
import time

import raw_pdu

PORT = int(sys.argv[1])
TNAME = sys.argv[2]
COUNT = int(sys.argv[3])
BUDGET = float(sys.argv[4])
STALL = 3.0
BATCH = 20000  # NOP-Outs per buffer: 960,000 bytes


def nop_batch(statsn, cmdsn):
    out = bytearray()
    for i in range(BATCH):
        # immediate NOP-Out, F bit, LUN 0, ITT i + 1, TTT 0xffffffff
        out += struct.pack(">BBHI8sIIII16s", 0x40, 0x80, 0, 0, b"\0" * 8,
                           i + 1, 0xffffffff, cmdsn, statsn + 1, b"")
    return bytes(out)


def main():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
    statsn, cmdsn = raw_pdu.login(s, TNAME, "iqn.2026-11.test:nopflood", 8192, 7)
    s.setblocking(False)
    print("flooding", flush=True)
    batch = nop_batch(statsn, cmdsn)
    total = COUNT * 48
    sent = 0
    start = last = time.monotonic()
    view = memoryview(batch)
    pos = 0
    why = "done"
    while sent < total:
        now = time.monotonic()
        if now - start >= BUDGET:
            why = "budget"
            break
        if now - last >= STALL:
            why = "stalled"
            break
        _, w, _ = select.select([], [s], [], 0.2)
        if not w:
            continue
        try:
            n = s.send(view[pos:pos + min(len(batch) - pos, total - sent)])
        except BlockingIOError:
            continue
        except OSError:
            why = "closed"
            break
        sent += n
        pos = (pos + n) % len(batch)
        last = time.monotonic()
    print("sent %d of %d in %.1f s (%s)" % (sent // 48, COUNT,
                                             time.monotonic() - start, why),
          flush=True)
    sys.stdin.readline()
    s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
