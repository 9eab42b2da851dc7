#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A session that loses access, for acl.sh: the target asks it to log out
when a SIGHUP takes its initiator ACL rule away.

Usage: acl_peer.py MODE HOST PORT TARGET_NAME INITIATOR_NAME ISID_QUALIFIER

Logs in to HOST:PORT as INITIATOR_NAME (one Login Request, operational
stage straight to full feature phase), prints "logged in" and waits, at
most 60 s, for an Asynchronous Message. It must be AsyncEvent 1 (the
target requests a logout, RFC 7143 section 11.9.1); prints
    async logout request: parameter3 N
and then, by MODE:

  logout  sends a Logout Request (close the session) and prints
          "logout response R" once the Logout Response comes, then
          "closed" when the target closes the connection.
  ignore  does not log out and reads on until the target closes the
          connection: prints "closed after S s" (S from the request).

Exits 0 when the above happened, 1 otherwise (saying what came).
"""
import socket
import struct
import sys
import time

import raw_pdu


def main():
    mode, host, port, target, initiator, qual = sys.argv[1:7]
    s = socket.create_connection((host, int(port)), timeout=60)
    statsn, expcmdsn = raw_pdu.login(s, target, initiator, 65536, int(qual))
    print("logged in", flush=True)
    hdr, _ = raw_pdu.recv_pdu(s)
    if hdr is None:
        print("closed before any Asynchronous Message", flush=True)
        return 1
    if hdr[0] & 0x3f != 0x32 or hdr[36] != 1:
        print("got opcode %#x event %d, not an Async logout request" % (hdr[0] & 0x3f, hdr[36]),
              flush=True)
        return 1
    t0 = time.monotonic()
    statsn = struct.unpack(">I", hdr[24:28])[0]
    expcmdsn = struct.unpack(">I", hdr[28:32])[0]
    print("async logout request: parameter3 %d" % struct.unpack(">H", hdr[42:44])[0],
          flush=True)
    if mode == "logout":
        # Logout Request, immediate, reason 0 (close the session)
        b = struct.pack(">BBBBI", 0x46, 0x80, 0, 0, 0) + b"\0" * 8
        b += struct.pack(">IHHII", 0x10, 0, 0, expcmdsn, statsn + 1) + b"\0" * 16
        s.sendall(b)
        hdr, _ = raw_pdu.recv_pdu(s)
        if hdr is None or hdr[0] & 0x3f != 0x26:
            print("no Logout Response", flush=True)
            return 1
        print("logout response %d" % hdr[2], flush=True)
    while True:
        hdr, _ = raw_pdu.recv_pdu(s)
        if hdr is None:
            break
    if mode == "logout":
        print("closed", flush=True)
    else:
        print("closed after %.1f s" % (time.monotonic() - t0), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, socket.timeout) as e:
        print("error: %s" % e, flush=True)
        sys.exit(1)
