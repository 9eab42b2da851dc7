# SPDX-License-Identifier: BSD-2-Clause
"""The raw-socket PDU helpers the Python peers of tests/interop/target
share (hostile_initiator.py, login_storm.py, nop_flood.py)."""
import struct


def pad(data):
    """data padded to a multiple of 4 bytes, as a data segment is sent."""
    return data + b"\0" * ((4 - len(data) % 4) % 4)


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
