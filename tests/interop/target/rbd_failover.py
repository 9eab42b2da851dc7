#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A writer that records every write it saw acknowledged, and fails over
from one gateway to the next as dm-multipath's failover policy does, for
rbd_two_gateways.sh; and the reader that checks those writes.

Usage:
  rbd_failover.py write TARGET LUN BS ACKLOG FIRST COUNT SEED HOST:PORT[,HOST:PORT...]
  rbd_failover.py check TARGET LUN BS ACKLOG SEED HOST:PORT

write: logs in to the first portal, sends SYNCHRONIZE CACHE (librbd's
cache leaves write-through for write-back on the first flush, as it does
under a Linux initiator), then writes COUNT chunks of 4 KiB, one at a
time, from LBA FIRST on, each WRITE(10) with FUA. Chunk i holds
(SEED, LBA) repeated. After each GOOD status it appends the LBA to
ACKLOG (flushed: the test counts the lines). When the connection fails
(closed, reset, no answer within 90 s) it says so, logs in to the next
portal and sends the write that was not acknowledged again, then goes on.

check: reads back, through HOST:PORT in a new session, every chunk ACKLOG
names and compares it; prints how many were checked and how many were
lost (wrong or unreadable). Exit 0 when none was, 1 otherwise.
"""
import socket
import struct
import sys
import time

from raw_pdu import pad, recv_pdu

CHUNK = 4096
INAME = "iqn.2026-11.test:rbd-failover"
ISID = b"\x80\x52\x42\x44\x00\x01"


class Lost(Exception):
    """The connection to the gateway failed: fail over."""


def fail(why):
    print("FAIL: " + why, flush=True)
    sys.exit(1)


def chunk(seed, lba):
    return struct.pack(">QQ", seed, lba) * (CHUNK // 16)


class Conn:
    def __init__(self, portal, target, lun, bs):
        self.portal = portal
        host, port = portal.rsplit(":", 1)
        self.lun, self.bs = lun, bs
        try:
            self.s = socket.create_connection((host, int(port)), timeout=10)
        except OSError as e:
            raise Lost("connect: %s" % e) from e
        self.s.settimeout(90)
        self.itt = 1
        keys = ["InitiatorName=" + INAME, "SessionType=Normal",
                "TargetName=" + target, "MaxRecvDataSegmentLength=262144",
                "ImmediateData=No", "InitialR2T=Yes"]
        data = b"".join(k.encode() + b"\0" for k in keys)
        # CSG 1 -> NSG 3, T=1: operational stage straight to full feature
        b = struct.pack(">BBBBI", 0x43, 0x87, 0, 0, len(data))
        b += ISID + struct.pack(">H", 0)
        b += struct.pack(">IHHII", self.itt, 1, 0, 0, 0)
        b += b"\0" * 16
        hdr, _ = self.xchg(b + pad(data))
        if hdr[0] & 0x3f != 0x23:
            fail("no Login Response from %s" % portal)
        if hdr[36] or hdr[37]:
            fail("login to %s refused: status 0x%02x%02x" % (portal, hdr[36], hdr[37]))
        self.cmdsn = struct.unpack(">I", hdr[28:32])[0]
        self.itt += 1

    def xchg(self, pdu=None):
        try:
            if pdu:
                self.s.sendall(pdu)
            hdr, data = recv_pdu(self.s)
        except OSError as e:
            raise Lost(str(e)) from e
        if hdr is None:
            raise Lost("connection closed")
        return hdr, data

    def lunf(self):
        return struct.pack(">BB6x", 0, self.lun)

    def cmd(self, cdb, edtl, flags):
        itt = self.itt
        self.itt += 1
        b = struct.pack(">BBBBI", 0x01, 0x80 | flags, 0, 0, 0) + self.lunf()
        b += struct.pack(">III", itt, edtl, self.cmdsn) + b"\0" * 4
        b += cdb.ljust(16, b"\0")
        self.cmdsn += 1
        return itt, b

    def status(self, hdr, what):
        if hdr[3] != 0:
            fail("%s: SCSI status 0x%02x" % (what, hdr[3]))

    def flush(self):
        _, b = self.cmd(struct.pack(">BBIBHB", 0x35, 0, 0, 0, 0, 0), 0, 0)
        hdr, _ = self.xchg(b)
        while hdr[0] & 0x3f == 0x20:  # NOP-In
            hdr, _ = self.xchg()
        self.status(hdr, "SYNCHRONIZE CACHE")

    def write(self, lba, data):
        # byte 1 bit 3: FUA
        itt, b = self.cmd(struct.pack(">BBIBHB", 0x2a, 0x08, lba, 0,
                                      len(data) // self.bs, 0), len(data), 0x20)
        pdu = b
        while True:
            hdr, _ = self.xchg(pdu)
            pdu = None
            op = hdr[0] & 0x3f
            if op == 0x31:  # R2T: send what it asks for
                ttt = hdr[20:24]
                off, n = struct.unpack(">II", hdr[40:48])
                d = data[off:off + n]
                pdu = struct.pack(">BBBBI", 0x05, 0x80, 0, 0, len(d))
                pdu += self.lunf() + struct.pack(">I", itt) + ttt
                pdu += b"\0" * 12 + struct.pack(">III", 0, off, 0) + pad(d)
            elif op == 0x21:
                self.status(hdr, "WRITE at LBA %d" % lba)
                return
            elif op != 0x20:
                fail("unexpected opcode 0x%02x during WRITE" % op)

    def read(self, lba, n):
        _, b = self.cmd(struct.pack(">BBIBHB", 0x28, 0, lba, 0, n // self.bs, 0),
                        n, 0x40)
        got = bytearray(n)
        pdu = b
        while True:
            hdr, data = self.xchg(pdu)
            pdu = None
            op = hdr[0] & 0x3f
            if op == 0x25:
                off = struct.unpack(">I", hdr[40:44])[0]
                got[off:off + len(data)] = data
                if hdr[1] & 0x01:
                    self.status(hdr, "READ at LBA %d" % lba)
                    return bytes(got)
            elif op == 0x21:
                self.status(hdr, "READ at LBA %d" % lba)
                return bytes(got)
            elif op != 0x20:
                fail("unexpected opcode 0x%02x during READ" % op)


def failover(portals, p, acked, lba, why, target, lun, bs, seed):
    """The connection to portals[p] failed with the write at lba not
    acknowledged: send it again through the next portal that answers;
    returns that connection."""
    while True:
        p += 1
        if p == len(portals):
            fail("no portal left after %s: %s" % (portals[p - 1], why))
        print("failover: %s lost after %d acknowledged writes (%s); "
              "the write at LBA %d goes again through %s"
              % (portals[p - 1], acked, why, lba, portals[p]), flush=True)
        t1 = time.monotonic()
        try:
            c = Conn(portals[p], target, lun, bs)
            c.write(lba, chunk(seed, lba))
        except Lost as e:
            why = e
            continue
        print("failover: first write through %s done %.1f s after the loss"
              % (portals[p], time.monotonic() - t1), flush=True)
        return c


def write(target, lun, bs, acklog, first, count, seed, portals):
    portals = portals.split(",")
    step = CHUNK // bs
    p = 0
    c = Conn(portals[p], target, lun, bs)
    c.flush()
    print("writing through %s" % portals[p], flush=True)
    acked = 0
    t0 = time.monotonic()
    with open(acklog, "a", encoding="ascii") as log:
        i = 0
        while i < count:
            lba = first + i * step
            try:
                c.write(lba, chunk(seed, lba))
            except Lost as e:
                c = failover(portals, p, acked, lba, e, target, lun, bs, seed)
                p = portals.index(c.portal)
            log.write("%d\n" % lba)
            log.flush()
            acked += 1
            i += 1
    print("wrote %d chunks of %d bytes in %.1f s, all acknowledged"
          % (acked, CHUNK, time.monotonic() - t0), flush=True)


def check(target, lun, bs, acklog, seed, portal):
    with open(acklog, encoding="ascii") as f:
        lbas = [int(x) for x in f if x.strip()]
    c = Conn(portal, target, lun, bs)
    lost = 0
    for lba in lbas:
        if c.read(lba, CHUNK) != chunk(seed, lba):
            lost += 1
            if lost <= 5:
                print("lost: the acknowledged write at LBA %d reads back wrong" % lba)
    print("checked %d acknowledged writes through %s: %d lost"
          % (len(lbas), portal, lost), flush=True)
    sys.exit(1 if lost or not lbas else 0)


def main():
    a = sys.argv[1:]
    if len(a) == 9 and a[0] == "write":
        write(a[1], int(a[2]), int(a[3]), a[4], int(a[5]), int(a[6]), int(a[7]), a[8])
    elif len(a) == 7 and a[0] == "check":
        check(a[1], int(a[2]), int(a[3]), a[4], int(a[5]), a[6])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
