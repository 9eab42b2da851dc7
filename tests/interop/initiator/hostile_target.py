#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A deliberately broken iSCSI target for one connection on 127.0.0.1.

It logs in an initiator normally, up to the point a scenario picks, then
sends something a correct target never would. The test checks that the
initiator fails that connection with a reason, in bounded time, without
crashing. Usage: hostile_target.py SCENARIO PORT_FILE
"""
import os
import socket
import struct
import sys
import time

# the raw iSCSI helpers of the tests that play an initiator
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target"))
from raw_pdu import recv_exact  # noqa: E402

BHS = 48


def recv_pdu(s):
    bhs = recv_exact(s, BHS)
    ahs = bhs[4] * 4
    dsl = int.from_bytes(bhs[5:8], "big")
    pad = (4 - dsl % 4) % 4
    rest = recv_exact(s, ahs + dsl + pad) if ahs + dsl + pad else b""
    return bhs, rest[ahs:ahs + dsl]


def pdu(op, flags, itt, data=b"", dsl=None, fields=None, b2=0, b3=0):
    """A target PDU: op, flags, ITT; fields maps byte offset -> u32."""
    h = bytearray(BHS)
    h[0] = op
    h[1] = flags
    h[2] = b2
    h[3] = b3
    n = len(data) if dsl is None else dsl
    h[5:8] = n.to_bytes(3, "big")
    h[16:20] = struct.pack(">I", itt)
    for off, v in (fields or {}).items():
        h[off:off + 4] = struct.pack(">I", v)
    pad = (4 - len(data) % 4) % 4
    return bytes(h) + data + b"\0" * pad


class Target:
    def __init__(self, conn):
        self.c = conn
        self.statsn = 100
        self.exp_cmdsn = 1

    def sn_fields(self):
        return {24: self.statsn, 28: self.exp_cmdsn, 32: self.exp_cmdsn + 16}

    def login_rsp(self, req, flags, text, status=0, itt=None):
        itt = struct.unpack(">I", req[16:20])[0] if itt is None else itt
        f = self.sn_fields()
        h = bytearray(pdu(0x23, flags, itt, text, fields=f))
        h[8:14] = req[8:14]          # ISID
        if flags & 0x03 == 3 and flags & 0x80:
            h[14:16] = b"\x00\x07"   # TSIH
        h[36] = status >> 8
        h[37] = status & 0xff
        self.statsn += 1
        self.c.sendall(bytes(h))

    def login(self, scenario):
        req, _ = recv_pdu(self.c)  # security stage
        if scenario == "login-bad-itt":
            self.login_rsp(req, 0x81, b"AuthMethod=None\0", itt=0x12345678)
            return False
        if scenario == "login-refused":
            self.login_rsp(req, 0x00, b"", status=0x0203)
            return False
        if scenario == "login-bad-stage":
            self.login_rsp(req, 0x87, b"AuthMethod=None\0")
            return False
        if scenario == "login-garbage-text":
            self.login_rsp(req, 0x81, b"AuthMethod=None\0NoEqualsSign\0")
            return False
        if scenario == "login-endless-continue":
            # C=1 forever: the initiator must cap what it accumulates
            for _ in range(64):
                self.login_rsp(req, 0x40, b"X" * 4000 + b"=1\0")
                req, _ = recv_pdu(self.c)
            return False
        if scenario == "login-bad-answer":
            self.login_rsp(req, 0x81, b"AuthMethod=None\0")
            req, _ = recv_pdu(self.c)
            # MaxBurstLength above the offer is not a legal MIN result
            self.login_rsp(req, 0x87, b"MaxBurstLength=99999999\0")
            return False
        self.login_rsp(req, 0x81, b"AuthMethod=None\0")
        req, _ = recv_pdu(self.c)  # operational stage
        self.login_rsp(req, 0x87,
                       b"HeaderDigest=None\0DataDigest=None\0"
                       b"MaxRecvDataSegmentLength=8192\0")
        return True

    def ffp(self, scenario):
        bhs, _ = recv_pdu(self.c)  # the first SCSI command (REPORT LUNS)
        itt = struct.unpack(">I", bhs[16:20])[0]
        self.exp_cmdsn = struct.unpack(">I", bhs[24:28])[0] + 1
        f = self.sn_fields()
        if scenario == "ffp-unknown-itt":
            self.c.sendall(pdu(0x21, 0x80, itt ^ 0x5a5a, fields=f))
        elif scenario == "ffp-sense-overflow":
            sense = struct.pack(">H", 200) + b"\x70" + b"\0" * 9
            self.c.sendall(pdu(0x21, 0x80, itt, sense, fields=f, b3=0x02))
        elif scenario == "ffp-reject-cmd":
            # RFC 7143 11.17: Reject (command not supported) carrying the
            # command's header; the initiator fails that command alone
            self.c.sendall(pdu(0x3f, 0x80, 0xffffffff, bhs, fields=f, b2=0x05))
            self.statsn += 1
        elif scenario == "ffp-bad-opcode":
            self.c.sendall(pdu(0x3a, 0x80, itt, fields=f))
        elif scenario == "ffp-datain-overflow":
            # offset + length beyond the command's buffer
            f2 = dict(f)
            f2[40] = 0x00100000
            self.c.sendall(pdu(0x25, 0x80, itt, b"\xaa" * 512, fields=f2))
        elif scenario == "ffp-huge-dsl":
            # DataSegmentLength far beyond our MaxRecvDataSegmentLength
            self.c.sendall(pdu(0x20, 0x80, 0xffffffff, b"", dsl=0xffffff,
                               fields=f)[:BHS])
        elif scenario == "ffp-close":
            self.c.close()
            return
        elif scenario == "ffp-async-logout":
            # Asynchronous Message, event 1: "logout within 0 s"
            h = bytearray(pdu(0x32, 0x80, 0xffffffff, fields=f))
            h[36] = 1
            self.c.sendall(bytes(h))
        elif scenario == "ffp-async-drop":
            # Asynchronous Message, event 2: "the target will drop this
            # connection" (RFC 7143 11.9.1), then it does
            h = bytearray(pdu(0x32, 0x80, 0xffffffff, fields=f))
            h[36] = 2
            self.c.sendall(bytes(h))
            time.sleep(0.2)
            self.c.close()
            return
        elif scenario == "ffp-silent":
            pass
        else:
            raise SystemExit("unknown scenario " + scenario)
        # then wait for the initiator to give up and close
        self.c.settimeout(20)
        try:
            while self.c.recv(65536):
                pass
        except OSError:
            pass


def listen_port_file(port_file, backlog):
    """A listening socket on 127.0.0.1 (a free port, accept() timing out
    after 20 s), its port written to port_file whole (renamed into place)
    for the test script to read."""
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(backlog)
    ls.settimeout(20)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(ls.getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    return ls


def main():
    scenario, port_file = sys.argv[1], sys.argv[2]
    ls = listen_port_file(port_file, 1)
    conn, _ = ls.accept()
    conn.settimeout(20)
    t = Target(conn)
    try:
        if t.login(scenario):
            t.ffp(scenario)
        else:
            conn.settimeout(20)
            while conn.recv(65536):
                pass
    except (EOFError, OSError):
        pass
    time.sleep(0.1)


if __name__ == "__main__":
    main()
