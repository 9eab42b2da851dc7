#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A hostile iSCSI initiator for idm-target: malformed and out-of-spec
PDUs over 127.0.0.1. The target must answer with the right error, or
drop the connection, and keep serving everyone else; it must never
crash. Usage: hostile_initiator.py PORT TARGET_NAME"""
import socket
import struct
import sys

from raw_pdu import pad, recv_pdu

PORT = int(sys.argv[1])
TNAME = sys.argv[2]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def bhs(op, flags=0, dsl=0, lun=b"\0" * 8, itt=1, f20=0, f24=0, f28=0, rest=b""):
    b = struct.pack(">BBHI", op, flags, 0, dsl & 0xffffff) + lun
    b += struct.pack(">IIII", itt, f20, f24, f28)
    b += rest.ljust(16, b"\0")
    assert len(b) == 48
    return b


def login_pdu(keys, flags=0x87, isid=b"\x80\x00\x00\x00\x00\x01", tsih=0, cmdsn=1, itt=1):
    data = b"".join(k.encode() + b"\0" for k in keys)
    b = struct.pack(">BBBBI", 0x43, flags, 0, 0, len(data))
    b += isid + struct.pack(">H", tsih)
    b += struct.pack(">IHHII", itt, 0, 0, cmdsn, 0)
    b += b"\0" * 16
    return b + pad(data)


def conn():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    s.settimeout(5)
    return s


def closed(s):
    """True if the target closed the connection (EOF or reset)."""
    try:
        while True:
            h, _ = recv_pdu(s)
            if h is None:
                return True
    except (socket.timeout, TimeoutError):
        return False
    except OSError:
        return True


def login_status(keys, **kw):
    s = conn()
    s.sendall(login_pdu(keys, **kw))
    try:
        h, d = recv_pdu(s)
    except OSError:
        h = None
    s.close()
    if h is None:
        return None
    return (h[36] << 8) | h[37]


NORMAL = ["InitiatorName=iqn.2026-11.test:hostile", "SessionType=Normal",
          "TargetName=" + TNAME, "AuthMethod=None"]

# --- login phase -----------------------------------------------------------
check(login_status(["InitiatorName=iqn.x", "TargetName=iqn.nobody"]) == 0x0203,
      "unknown TargetName: status 0x0203 (not found)")
check(login_status(["SessionType=Normal", "TargetName=" + TNAME]) == 0x0207,
      "no InitiatorName: status 0x0207 (missing parameter)")
check(login_status(["InitiatorName"]) == 0x0200, "key without '=': status 0x0200")
check(login_status(["K%d=v" % i for i in range(300)]) == 0x0200,
      "300 keys: status 0x0200")
check(login_status(NORMAL, tsih=0x7777) == 0x020a,
      "unknown TSIH: status 0x020a (session does not exist)")
check(login_status(NORMAL, flags=0xc7) == 0x020b, "T and C both set: status 0x020b")
check(login_status(NORMAL, flags=0x8a) == 0x020b, "NSG 2 (reserved): status 0x020b")
check(login_status(NORMAL + ["MaxBurstLength=12"]) == 0x0000,
      "out-of-range MaxBurstLength answered Reject, login goes on")

s = conn()
s.sendall(login_pdu(["InitiatorName=iqn.x", "MaxRecvDataSegmentLength=100"]))
check(closed(s), "MaxRecvDataSegmentLength below 512: login refused, connection closed")

s = conn()
s.sendall(bhs(0x01, 0x80))  # SCSI command before login
check(closed(s), "SCSI Command during login: connection closed")

s = conn()
s.sendall(b"\xff" * 48)  # garbage header
check(closed(s), "garbage BHS: connection closed")

s = conn()
# a continued login text split in the middle of a key
p1 = login_pdu(NORMAL[:2] + ["TargetName=" + TNAME[:5]], flags=0x47)
p1 = p1[:48 + 4 * ((len(p1) - 48) // 4)]
s.sendall(p1)
h, _ = recv_pdu(s)
check(h is not None and h[0] & 0x3f == 0x23 and h[36] == 0,
      "Login with C bit: empty Login Response")
s.close()


# --- full feature phase ----------------------------------------------------
def ffp():
    s = conn()
    s.sendall(login_pdu(NORMAL + ["ImmediateData=Yes", "InitialR2T=Yes",
                                  "MaxRecvDataSegmentLength=8192"]))
    h, d = recv_pdu(s)
    assert h[36] == 0 and h[1] & 0x80, "login failed: %r" % h
    return s, struct.unpack(">I", h[24:28])[0] + 1


def scsi(s, cdb, cmdsn, itt, edtl=0, flags=0xc0, lun=1, data=b""):
    l = struct.pack(">BB", 0, lun) + b"\0" * 6
    b = struct.pack(">BBHI", 0x01, flags, 0, len(data)) + l
    b += struct.pack(">IIII", itt, edtl, cmdsn, 0)
    b += cdb.ljust(16, b"\0")
    s.sendall(b + pad(data))


def response(s):
    """Skip Data-In; return (opcode, response byte, status) of the reply."""
    while True:
        h, d = recv_pdu(s)
        if h is None:
            return None
        op = h[0] & 0x3f
        if op == 0x25 and not (h[1] & 0x01):
            continue
        return op, h[2], h[3], d


s, statsn = ffp()
scsi(s, b"\x28\0\xff\xff\xff\xff\0\0\x08", 1, 10, edtl=4096)
r = response(s)
check(r and r[2] == 2, "READ10 beyond the end: CHECK CONDITION")
scsi(s, b"\xc9", 2, 11)
r = response(s)
check(r and r[2] == 2 and r[3][2 + 2] & 0xf == 5 and r[3][2 + 12] == 0x20,
      "vendor opcode: ILLEGAL REQUEST / INVALID COMMAND OPERATION CODE")
scsi(s, b"\x00", 3, 12, lun=200)
r = response(s)
check(r and r[2] == 2 and r[3][2 + 12] == 0x25, "TUR to missing LUN: LOGICAL UNIT NOT SUPPORTED")
scsi(s, b"\x12\0\0\xff\xff", 4, 13, edtl=0xffffffff)
r = response(s)
check(r is not None and r[0] in (0x21, 0x25), "INQUIRY with EDTL 4 GiB: answered")
# REPORT LUNS asking for 4 GiB of data with EDTL 16
scsi(s, b"\xa0\0\0\0\0\0\xff\xff\xff\xff", 5, 14, edtl=16)
r = response(s)
check(r is not None, "REPORT LUNS with small EDTL: answered")
# TMF on a LUN that does not exist
s.sendall(bhs(0x42, 0x85, lun=b"\0\x63" + b"\0" * 6, itt=15, f20=0xffffffff, f24=6))
r = response(s)
check(r and r[0] == 0x22 and r[1] == 2, "LUN RESET of a missing LUN: LUN does not exist")
# CmdSN far outside the window is dropped silently; a NOP-Out answers
scsi(s, b"\x00", 0x40000000, 16)
s.sendall(bhs(0x40, 0x80, itt=17, f20=0xffffffff, f24=6))
r = response(s)
check(r and r[0] == 0x20, "CmdSN outside the window ignored, NOP-Out answered")
# SNACK at ErrorRecoveryLevel 0 -> Reject
s.sendall(bhs(0x10, 0x80, itt=18))
r = response(s)
check(r and r[0] == 0x3f, "SNACK at ERL 0: Reject")
# Text with an unknown TTT -> Reject
s.sendall(bhs(0x44, 0x80, itt=19, f20=0x1234, f24=6))
r = response(s)
check(r and r[0] == 0x3f, "Text with a stale TTT: Reject")


# --- well-framed protocol errors: Reject, and the connection goes on -----
# (RFC 7143 11.17; doc/api.md 7.1). Each Reject must carry the rejected
# PDU's BHS as its data, and a NOP-Out must still be answered after it.
def rejected(s, sent, reason, what):
    r = response(s)
    check(r is not None and r[0] == 0x3f and r[1] == reason and r[3] == sent[:48],
          "%s: Reject reason 0x%02x with the BHS echoed (got %r)"
          % (what, reason, r and r[:3]))


def still_up(s, itt, what):
    s.sendall(bhs(0x40, 0x80, itt=itt, f20=0xffffffff, f24=6))
    r = response(s)
    check(r is not None and r[0] == 0x20, what + ": connection still answers a NOP-Out")


p = bhs(0x05, 0x80, dsl=512, itt=0x999, f20=0xffffffff)
s.sendall(p + b"\0" * 512)
rejected(s, p, 0x09, "Data-Out for an unknown ITT")
still_up(s, 0x31, "Data-Out for an unknown ITT")
p = bhs(0x1e, 0x80, dsl=5, itt=0x32)
s.sendall(p + pad(b"hello"))
rejected(s, p, 0x05, "unassigned initiator opcode 0x1e with data")
still_up(s, 0x33, "opcode 0x1e")
p = bhs(0x21, 0x80, itt=0x34)
s.sendall(p)
rejected(s, p, 0x04, "a target opcode (SCSI Response) from the initiator")
still_up(s, 0x35, "opcode 0x21")
p = bhs(0x44, 0x80, dsl=12, itt=0x36, f20=0xffffffff, f24=6)
s.sendall(p + pad(b"SendTargets="))
rejected(s, p, 0x04, "Text Request without the final NUL")
still_up(s, 0x37, "Text without NUL")
p = bhs(0x44, 0x80, dsl=13, itt=0x38, f20=0xffffffff, f24=6)
s.sendall(p + pad(b"SendTargets=\0"))
r = response(s)
check(r is not None and r[0] == 0x24 and b"TargetName=" in r[3],
      "Text Request with its NUL: answered")
# a framing error still ends the connection: DataSegmentLength 16 MiB - 1
s.sendall(bhs(0x40, 0x80, dsl=0xffffff, itt=0x39, f20=0xffffffff, f24=6))
check(closed(s), "NOP-Out with a 16 MiB data segment: connection closed")

# --- multi-task abort (Implementer's Guide, RFC 7143 4.2.3.3) ------------
def ffp_solicited():
    s = conn()
    s.sendall(login_pdu(NORMAL + ["ImmediateData=No", "InitialR2T=Yes",
                                  "MaxRecvDataSegmentLength=8192"]))
    h, d = recv_pdu(s)
    assert h[36] == 0 and h[1] & 0x80, "login failed: %r" % h
    return s


def write_with_r2t(s, cmdsn, itt):
    scsi(s, b"\x2a\0\0\0\0\0\0\0\x08", cmdsn, itt, edtl=4096, flags=0xa0)
    h, _ = recv_pdu(s)
    assert h is not None and h[0] & 0x3f == 0x31, "no R2T: %r" % h
    return struct.unpack(">I", h[20:24])[0]


s = ffp_solicited()
ttt = write_with_r2t(s, 1, 0x100)
# ABORT TASK SET, immediate, CmdSN 2 (the next one)
s.sendall(bhs(0x42, 0x82, lun=b"\0\x01" + b"\0" * 6, itt=0x101, f20=0xffffffff, f24=2))
s.settimeout(0.5)
try:
    early = recv_pdu(s)[0]
except (socket.timeout, TimeoutError):
    early = None
s.settimeout(5)
check(early is None, "ABORT TASK SET waits while the aborted WRITE's R2T is unanswered")
# answer the R2T: the TMF response follows, no SCSI Response for the WRITE
s.sendall(bhs(0x05, 0x80, dsl=4096, lun=b"\0\x01" + b"\0" * 6, itt=0x100, f20=ttt)
          + b"\0" * 4096)
r = response(s)
check(r and r[0] == 0x22 and r[1] == 0,
      "TMF response (function complete) once the Data-Out arrived, none for the WRITE")
s.close()

s = ffp_solicited()
ttt = write_with_r2t(s, 1, 0x180)
# a Data-Out whose TTT was never issued: Reject, the R2T's stays valid
p = bhs(0x05, 0x80, dsl=4096, lun=b"\0\x01" + b"\0" * 6, itt=0x180, f20=ttt ^ 0x5a5a0000)
s.sendall(p + b"\0" * 4096)
rejected(s, p, 0x09, "Data-Out with a TTT never issued")
s.sendall(bhs(0x05, 0x80, dsl=4096, lun=b"\0\x01" + b"\0" * 6, itt=0x180, f20=ttt)
          + b"\0" * 4096)
r = response(s)
check(r and r[0] == 0x21 and r[2] == 0,
      "the WRITE completes with the right TTT after the Reject")
s.close()

s = ffp_solicited()
write_with_r2t(s, 1, 0x200)
s.sendall(bhs(0x42, 0x85, lun=b"\0\x01" + b"\0" * 6, itt=0x201, f20=0xffffffff, f24=2))
s.settimeout(6)
r = response(s)
check(r and r[0] == 0x22 and r[1] == 0,
      "LUN RESET with the R2T never answered: response after the deadline")
s.close()

# --- reinstatement (RFC 7143 6.3.4, 6.3.5) --------------------------------
ISID2 = b"\x80\x00\x00\x00\x00\x42"
s1 = conn()
s1.sendall(login_pdu(NORMAL, isid=ISID2))
h, _ = recv_pdu(s1)
tsih = struct.unpack(">H", h[14:16])[0]
scsi(s1, b"\x00", 1, 1)
response(s1)
s2 = conn()
s2.sendall(login_pdu(NORMAL, isid=ISID2, tsih=tsih, cmdsn=2))
h, _ = recv_pdu(s2)
check(h is not None and h[36] == 0 and struct.unpack(">H", h[14:16])[0] == tsih,
      "connection reinstatement (same TSIH and CID) accepted")
check(closed(s1), "the reinstated connection is closed")
scsi(s2, b"\x00", 2, 2)
r = response(s2)
check(r and r[0] == 0x21 and r[2] == 0, "the session goes on over the new connection")
s3 = conn()
s3.sendall(login_pdu(NORMAL, isid=ISID2))
h, _ = recv_pdu(s3)
check(h is not None and h[36] == 0 and struct.unpack(">H", h[14:16])[0] != tsih,
      "session reinstatement (same ISID, TSIH 0): new session")
check(closed(s2), "the old session's connection is closed")
s3.close()

# --- still serving ---------------------------------------------------------
s, statsn = ffp()
scsi(s, b"\x00", 1, 1)
r = response(s)
check(r and r[0] == 0x21 and r[2] == 0, "target still serves a new session")
s.sendall(bhs(0x46, 0x80, itt=2, f24=2))
r = response(s)
check(r and r[0] == 0x26 and r[1] == 0, "Logout answered")
s.close()

sys.exit(1 if failures else 0)
