# SPDX-License-Identifier: BSD-2-Clause
"""The raw-socket PDU helpers the Python peers of tests/interop/target
share (hostile_initiator.py, login_storm.py, nop_flood.py, slow_peer.py),
and with them tests/interop/initiator's hostile target."""
import struct
import sys


def pad(data):
    """data padded to a multiple of 4 bytes, as a data segment is sent."""
    return data + b"\0" * ((4 - len(data) % 4) % 4)


def recv_exact(s, n):
    """n bytes from a blocking socket; EOFError if the peer closes first."""
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def recv_pdu(s):
    """One PDU from a blocking socket, without digests: (BHS, data
    segment without its padding), or (None, None) if the peer closed."""
    hdr = b""
    while len(hdr) < 48:
        c = s.recv(48 - len(hdr))
        if not c:
            return None, None
        hdr += c
    dsl = struct.unpack(">I", b"\0" + hdr[5:8])[0]
    n = dsl + (4 - dsl % 4) % 4
    data = b""
    while len(data) < n:
        c = s.recv(n - len(data))
        if not c:
            return None, None
        data += c
    return hdr, data[:dsl]



def text_keys(data):
    """A text data segment ("k=v\\0k=v\\0") as a dict; what has no '=' is
    left out."""
    out = {}
    for kv in data.split(b"\0"):
        if b"=" in kv:
            k, v = kv.split(b"=", 1)
            out[k.decode()] = v.decode()
    return out

def login(s, target, initiator, mrdsl, isid_qualifier, fail_status=1):
    """A one-PDU login of a normal session straight to full feature phase
    (CSG 1 -> NSG 3, T=1) with the default keys but for
    MaxRecvDataSegmentLength; returns the Login Response's (StatSN,
    ExpCmdSN). Exits with fail_status, saying why, if the target closes
    the connection or refuses the login."""
    keys = ["InitiatorName=" + initiator, "SessionType=Normal",
            "TargetName=" + target, "MaxRecvDataSegmentLength=%d" % mrdsl]
    data = b"".join(k.encode() + b"\0" for k in keys)
    isid = b"\x80" + struct.pack(">IB", isid_qualifier, 0)
    # Login Request, immediate, T=1, CSG 1 -> NSG 3
    b = struct.pack(">BBBBI", 0x43, 0x87, 0, 0, len(data))
    b += isid + struct.pack(">H", 0)
    b += struct.pack(">IHHII", 1, 0, 0, 1, 0)
    b += b"\0" * 16
    s.sendall(b + pad(data))
    hdr, _ = recv_pdu(s)
    if hdr is None:
        print("login: the target closed the connection", flush=True)
        sys.exit(fail_status)
    if hdr[0] & 0x3f != 0x23 or hdr[36] or hdr[37]:
        print("login failed: opcode %#x status %d/%d" % (hdr[0], hdr[36], hdr[37]),
              flush=True)
        sys.exit(fail_status)
    return struct.unpack(">II", hdr[24:32])
