# SPDX-License-Identifier: BSD-2-Clause
"""A CHAP initiator by hand, for what idm-initiator never sends: it
answers idm-target's challenge right (MD5, with the secret it is given)
and asks for mutual CHAP with the target's own challenge sent back
(CHAP_C = the target's CHAP_C), the reflection RFC 7143 12.1.3 says a
target must refuse. Prints the status of the last Login Response:
"status 0x0201" when refused, "status 0x0000" when let through.
usage: chap_reflect.py PORT TARGET-IQN USER SECRET"""
import hashlib
import socket
import struct
import sys

from raw_pdu import pad, recv_pdu, text_keys as keys




def request(s, itt, kvs, transit):
    data = b"".join(k.encode() + b"=" + v.encode() + b"\0" for k, v in kvs)
    flags = (0x80 | 0x01) if transit else 0x00  # CSG 0, NSG 1
    b = struct.pack(">BBBBI", 0x43, flags, 0, 0, len(data))
    b += b"\x80\0\0\0\x01\0" + struct.pack(">H", 0)
    b += struct.pack(">IHHII", itt, 0, 0, 1, 0)
    b += b"\0" * 16
    s.sendall(b + pad(data))
    hdr, body = recv_pdu(s)
    if hdr is None:
        print("closed", flush=True)
        sys.exit(0)
    return hdr, keys(body)


def main():
    port, iqn, user, secret = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
    first = [("InitiatorName", "iqn.2026-11.org.libidm:reflector"),
             ("SessionType", "Normal"), ("TargetName", iqn), ("AuthMethod", "CHAP")]
    hdr, k = request(s, 1, first, True)
    if k.get("AuthMethod") != "CHAP":
        print("no CHAP offered: %r" % k, flush=True)
        sys.exit(1)
    hdr, k = request(s, 2, [("CHAP_A", "5")], False)
    cid, chal = int(k["CHAP_I"]), bytes.fromhex(k["CHAP_C"][2:])
    resp = hashlib.md5(bytes([cid]) + secret.encode() + chal).hexdigest()
    hdr, k = request(s, 3, [("CHAP_N", user), ("CHAP_R", "0x" + resp),
                            ("CHAP_I", str((cid + 1) % 256)), ("CHAP_C", k["CHAP_C"])], True)
    print("status 0x%02x%02x" % (hdr[36], hdr[37]), flush=True)


main()
