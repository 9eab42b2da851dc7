#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Session and connection reinstatement against idm-target, for
threads.sh: with several loops a new connection lands on whichever loop
the kernel picks, and the target must move it to the loop that owns the
session it reinstates or joins.

Usage: reinstate.py PORT TARGET_NAME LUN ROUNDS

Each round opens a connection and logs in with the same ISID: even
rounds with TSIH 0 (session reinstatement: a new session replaces the
old), odd rounds with the current TSIH and CID (connection
reinstatement: the new connection takes over the session). Then it
writes a pattern of its own to 4 KiB of LUN (one block per round) and
reads back every block written so far, checking each byte. The previous
connection is left for the target to close. Exit 0 when every login
succeeded and every read matched, 1 otherwise.
"""
import socket
import struct
import sys

from raw_pdu import pad, recv_pdu

PORT, TNAME, LUN, ROUNDS = (int(sys.argv[1]), sys.argv[2], int(sys.argv[3]),
                            int(sys.argv[4]))
ISID = b"\x80\x12\x34\x56\x78\x9a"
INAME = "iqn.2026-11.test:reinstate"
BS = 4096


def fail(why):
    print("FAIL: " + why, flush=True)
    sys.exit(1)


def lun_field():
    return struct.pack(">BB6x", 0, LUN) if LUN < 256 else \
        struct.pack(">BB6x", 0x40 | (LUN >> 8), LUN & 0xff)


class Conn:
    def __init__(self, tsih):
        self.s = socket.create_connection(("127.0.0.1", PORT), timeout=10)
        self.itt = 1
        keys = ["InitiatorName=" + INAME, "SessionType=Normal",
                "TargetName=" + TNAME, "MaxRecvDataSegmentLength=262144",
                "ImmediateData=No", "InitialR2T=Yes"]
        data = b"".join(k.encode() + b"\0" for k in keys)
        # CSG 1 -> NSG 3, T=1: operational stage straight to full feature
        b = struct.pack(">BBBBI", 0x43, 0x87, 0, 0, len(data))
        b += ISID + struct.pack(">H", tsih)
        b += struct.pack(">IHHII", self.itt, 1, 0, 0, 0)  # ITT, CID 1
        b += b"\0" * 16
        self.s.sendall(b + pad(data))
        hdr, _ = recv_pdu(self.s)
        if hdr is None or hdr[0] & 0x3f != 0x23:
            fail("no Login Response")
        if hdr[36] or hdr[37]:
            fail("login refused: status 0x%02x%02x" % (hdr[36], hdr[37]))
        self.tsih = struct.unpack(">H", hdr[14:16])[0]
        self.cmdsn = struct.unpack(">I", hdr[28:32])[0]  # ExpCmdSN
        self.itt += 1

    def cmd(self, cdb, edtl, write):
        itt = self.itt
        self.itt += 1
        flags = 0x80 | (0x20 if write else 0x40)
        b = struct.pack(">BBBBI", 0x01, flags, 0, 0, 0) + lun_field()
        b += struct.pack(">III", itt, edtl, self.cmdsn) + b"\0" * 4
        b += cdb.ljust(16, b"\0")
        self.cmdsn += 1
        self.s.sendall(b)
        return itt

    def write(self, lba, data):
        itt = self.cmd(struct.pack(">BBIBHB", 0x2a, 0, lba, 0, 1, 0),
                       len(data), True)
        while True:
            hdr, _ = recv_pdu(self.s)
            if hdr is None:
                fail("connection closed during WRITE")
            op = hdr[0] & 0x3f
            if op == 0x31:  # R2T: send what it asks for
                ttt = hdr[20:24]
                off, n = struct.unpack(">II", hdr[40:48])
                d = data[off:off + n]
                b = struct.pack(">BBBBI", 0x05, 0x80, 0, 0, len(d))
                b += lun_field() + struct.pack(">I", itt) + ttt
                b += b"\0" * 12 + struct.pack(">III", 0, off, 0)  # DataSN 0
                self.s.sendall(b + pad(d))
            elif op == 0x21:
                if hdr[3] != 0:
                    fail("WRITE status 0x%02x" % hdr[3])
                return
            elif op != 0x20:  # NOP-In aside, nothing else is expected
                fail("unexpected opcode 0x%02x during WRITE" % op)

    def read(self, lba, n):
        self.cmd(struct.pack(">BBIBHB", 0x28, 0, lba, 0, n, 0), n * BS, False)
        got = bytearray(n * BS)
        while True:
            hdr, data = recv_pdu(self.s)
            if hdr is None:
                fail("connection closed during READ")
            op = hdr[0] & 0x3f
            if op == 0x25:
                off = struct.unpack(">I", hdr[40:44])[0]
                got[off:off + len(data)] = data
                if hdr[1] & 0x01:  # S: status in the last Data-In
                    if hdr[3] != 0:
                        fail("READ status 0x%02x" % hdr[3])
                    return bytes(got)
            elif op == 0x21:
                if hdr[3] != 0:
                    fail("READ status 0x%02x" % hdr[3])
                return bytes(got)
            elif op != 0x20:
                fail("unexpected opcode 0x%02x during READ" % op)


def pattern(r):
    return bytes((r * 7 + i * 13) & 0xff for i in range(BS))


def main():
    conns = []
    tsih = 0
    for r in range(ROUNDS):
        c = Conn(tsih if r % 2 else 0)
        if r % 2 and c.tsih != tsih:
            fail("connection reinstatement got TSIH %d, not %d" % (c.tsih, tsih))
        tsih = c.tsih
        conns.append(c)
        c.write(r, pattern(r))
        back = c.read(0, r + 1)
        for i in range(r + 1):
            if back[i * BS:(i + 1) * BS] != pattern(i):
                fail("round %d: block %d reads back wrong" % (r, i))
    for c in conns:
        c.s.close()
    print("reinstate: %d rounds, data verified" % ROUNDS, flush=True)


main()
