#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Peers that are slow, stopped or gone, for slow_reader.sh,
stopped_reader.sh and vanished_peer.sh (issue #20, item 5).

Usage: slow_peer.py MODE HOST PORT TARGET_NAME [ARGS]

Each logs in to HOST:PORT (one Login Request, operational stage straight
to full feature phase) and then, by MODE:

  slow SECONDS RATE RCVBUF CAP
      A live reader with a tiny receive buffer (SO_RCVBUF=RCVBUF, set
      before connecting): sends immediate NOP-Outs, each asking for a
      NOP-In, as fast as the target takes them (at most CAP unanswered),
      and reads the answers at RATE PDUs a second, for SECONDS. Then it
      sends no more, reads what is left at full speed and checks that
      every ping got its answer, in order. Prints
          slow reader: SENT pings, ANSWERED answers in order, alive after S s
      and exits 0; exits 1 when the connection is lost or an answer is
      missing or out of order.
  stop RCVBUF
      A reader that stops: sends NOP-Outs until the target no longer takes
      any (its answers fill our receive buffer, which is never read) and
      waits for the target to close the connection, at most 60 s.
      Prints "closed after S s (ERROR)" (S counted from the login) and
      exits 0, or "still open after 60 s" and exits 1.
  vanish COUNT SIZE
      Sends COUNT NOP-Outs with SIZE bytes of ping data each (echoed in
      the NOP-In), prints "ready" once the first answer is in, then reads
      on until killed: the test takes our link away meanwhile.
  idle
      Logs in, prints "ready" and sleeps until killed.

Exit 2 when the login fails.
"""
import select
import socket
import struct
import sys
import time

import raw_pdu
from raw_pdu import pad, recv_pdu

MODE = sys.argv[1]
HOST = sys.argv[2]
PORT = int(sys.argv[3])
TNAME = sys.argv[4]
ARGS = sys.argv[5:]
BHS = 48
OP_NOP_IN = 0x20


def nop_out(itt, cmdsn, statsn, data=b""):
    """An immediate NOP-Out asking for a NOP-In (ITT != 0xffffffff)."""
    b = struct.pack(">BBBBI8sIIII16s", 0x40, 0x80, 0, 0, len(data), b"\0" * 8,
                    itt, 0xffffffff, cmdsn, statsn + 1, b"")
    return b + pad(data)


def connect(rcvbuf=0, tag="slowpeer"):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        # before connect: the window scale is chosen from it
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(10)
    s.connect((HOST, PORT))
    statsn, cmdsn = raw_pdu.login(s, TNAME, "iqn.2026-11.test:" + tag, 65536, 9,
                                  fail_status=2)
    return s, statsn, cmdsn


class Answers:
    """NOP-Ins parsed from a byte stream, checked to come in ITT order."""

    def __init__(self):
        self.buf = bytearray()
        self.count = 0
        self.next_itt = 1
        self.error = None

    def feed(self, chunk, limit=None):
        """Take chunk; return the number of complete PDUs parsed (at most
        limit: the rest stays buffered)."""
        self.buf += chunk
        n = 0
        while len(self.buf) >= BHS and (limit is None or n < limit):
            dsl = struct.unpack(">I", b"\0" + bytes(self.buf[5:8]))[0]
            total = BHS + dsl + (4 - dsl % 4) % 4
            if len(self.buf) < total:
                break
            op = self.buf[0] & 0x3f
            itt = struct.unpack(">I", bytes(self.buf[16:20]))[0]
            if op != OP_NOP_IN:
                self.error = "opcode %#x instead of a NOP-In" % op
            elif itt != self.next_itt and self.error is None:
                self.error = "NOP-In ITT %d, expected %d (an answer lost)" % (
                    itt, self.next_itt)
            del self.buf[:total]
            self.next_itt += 1
            self.count += 1
            n += 1
        return n


def slow():
    seconds, rate, rcvbuf, cap = float(ARGS[0]), float(ARGS[1]), int(ARGS[2]), int(ARGS[3])
    s, statsn, cmdsn = connect(rcvbuf, "slowreader")
    s.setblocking(False)
    ans = Answers()
    made = 0           # pings built
    out = bytearray()  # built, not yet accepted by the socket
    start = time.monotonic()
    end = start + seconds
    next_read = start
    err = None
    while err is None and ans.error is None:
        now = time.monotonic()
        if now >= end:
            break
        if len(out) < 64 * BHS and made - ans.count < cap:
            for _ in range(min(256, cap - (made - ans.count))):
                made += 1
                out += nop_out(made, cmdsn, statsn)
        want_w = bool(out)
        timeout = max(0.0, min(next_read, end) - now)
        r, w, _ = select.select([s] if now >= next_read else [],
                                [s] if want_w else [], [], timeout)
        if w:
            try:
                n = s.send(out)
                del out[:n]
            except BlockingIOError:
                pass
            except OSError as e:
                err = e
                break
        if r:
            # one PDU per 1/RATE s: read exactly what completes it
            need = BHS - len(ans.buf) if len(ans.buf) < BHS else 0
            if not need:
                dsl = struct.unpack(">I", b"\0" + bytes(ans.buf[5:8]))[0]
                need = BHS + dsl + (4 - dsl % 4) % 4 - len(ans.buf)
            try:
                chunk = s.recv(max(need, 1))
            except BlockingIOError:
                chunk = None
            except OSError as e:
                err = e
                break
            if chunk == b"":
                err = "the target closed the connection"
                break
            if chunk and ans.feed(chunk, 1):
                next_read += 1.0 / rate
                if next_read < time.monotonic() - 1.0:
                    next_read = time.monotonic()  # no catching up in bursts
    alive = time.monotonic() - start
    if err is None and ans.error is None:
        # the rest at full speed: what is built goes out, all answers in
        drain_end = time.monotonic() + 120
        while ans.count < made and time.monotonic() < drain_end:
            r, w, _ = select.select([s], [s] if out else [], [], 1.0)
            try:
                if w:
                    del out[:s.send(out)]
                if r:
                    chunk = s.recv(1 << 16)
                    if chunk == b"":
                        err = "the target closed the connection"
                        break
                    ans.feed(chunk)
            except BlockingIOError:
                pass
            except OSError as e:
                err = e
                break
            if ans.error:
                break
    total = time.monotonic() - start
    if err is not None or ans.error is not None or ans.count != made:
        print("slow reader: FAILED after %.1f s (slow phase %.1f s): %s; "
              "%d pings sent, %d answers" % (
                  total, alive, err or ans.error or "answers missing",
                  made, ans.count), flush=True)
        return 1
    print("slow reader: %d pings, %d answers in order, alive after %.1f s of "
          "slow reading (%.1f s in all)" % (made, ans.count, alive, total),
          flush=True)
    s.close()
    return 0


def tcp_state(s):
    # struct tcp_info starts with tcpi_state
    return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0]


def stop():
    rcvbuf = int(ARGS[0])
    s, statsn, cmdsn = connect(rcvbuf, "stoppedreader")
    start = time.monotonic()
    s.setblocking(False)
    batch = b"".join(nop_out(i + 1, cmdsn, statsn) for i in range(4096))
    view = memoryview(batch)
    pos = 0
    err = None
    while time.monotonic() - start < 60:
        try:
            n = s.send(view[pos:])
            pos = (pos + n) % len(batch)
            continue
        except BlockingIOError:
            pass
        except OSError as e:
            err = e
            break
        e = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if e:
            err = OSError(e, "socket error")
            break
        if tcp_state(s) != 1:  # TCP_ESTABLISHED
            err = "state %d" % tcp_state(s)
            break
        time.sleep(0.05)
    if err is None:
        print("still open after 60 s", flush=True)
        return 1
    print("closed after %.1f s (%s)" % (time.monotonic() - start, err),
          flush=True)
    return 0


def vanish():
    count, size = int(ARGS[0]), int(ARGS[1])
    s, statsn, cmdsn = connect(0, "vanishing")
    payload = bytes(range(256)) * (size // 256 + 1)
    s.sendall(b"".join(nop_out(i + 1, cmdsn, statsn, payload[:size])
                       for i in range(count)))
    s.settimeout(None)
    first = True
    while True:
        hdr, _ = recv_pdu(s)
        if hdr is None:
            print("the target closed the connection", flush=True)
            return 0
        if first:
            print("ready", flush=True)
            first = False


def idle():
    s, _, _ = connect(0, "idle")
    print("ready", flush=True)
    while True:
        time.sleep(60)
    s.close()  # never: the socket must live as long as we do


if __name__ == "__main__":
    sys.exit({"slow": slow, "stop": stop, "vanish": vanish,
              "idle": idle}[MODE]())
