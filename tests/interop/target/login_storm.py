#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Half-open logins against an iSCSI target, for login_storm.sh.

Usage: login_storm.py PORT TARGET_NAME COUNT SOURCES MODES

Opens COUNT TCP connections to 127.0.0.1:PORT, spread round-robin over
SOURCES local addresses (127.0.2.F ... 127.0.2.F+SOURCES-1, F from
STORM_FIRST, default 1: the loopback answers for all of 127/8, so each
source is a distinct initiator address for the target's per-address
cap), at most STORM_WINDOW (default 256) connecting at once; 1 opens
them one after the other. MODES is a comma-separated list the
connections take in turn:

  nothing   connect, send nothing
  partial   half a Basic Header Segment
  login     one Login Request that stays in the security stage (T=0):
            answered, then the initiator stalls
  continue  one Login Request with the C bit and 1 KiB of text: the target
            must hold the text until the rest comes, which never does
  ffp       a complete login (operational stage straight to full feature
            phase): a Login Response other than success is a failure (a
            connection the target refused is counted as closed); the
            session then idles

It never sends anything else. Once every connection is open (or failed
to) and the target's refusals have arrived, it prints "opened OPEN
CLOSED", and then answers commands on stdin:

  count     "open OPEN closed CLOSED": how many of our connections the
            target has closed (EOF or reset) and how many it still holds
  quit      close everything and exit 0

Exit 1 on a failure (a connect that did not complete, a failed 'ffp'
login), 77 when the open-file limit cannot be raised to COUNT + 64.
"""
import errno
import os
import resource
import selectors
import socket
import struct
import sys
import time

from raw_pdu import pad, recv_pdu

PORT = int(sys.argv[1])
TNAME = sys.argv[2]
COUNT = int(sys.argv[3])
SOURCES = int(sys.argv[4])
MODES = sys.argv[5].split(",")
# connects in flight at once (the listen backlog is 128)
WINDOW = int(os.environ.get("STORM_WINDOW", "256"))
FIRST = int(os.environ.get("STORM_FIRST", "1"))
CONNECT_TIMEOUT = 20


def login_pdu(keys, flags, isid, cmdsn=1, itt=1):
    data = b"".join(k.encode() + b"\0" for k in keys)
    b = struct.pack(">BBBBI", 0x43, flags, 0, 0, len(data))
    b += isid + struct.pack(">H", 0)
    b += struct.pack(">IHHII", itt, 0, 0, cmdsn, 0)
    b += b"\0" * 16
    return b + pad(data)


def payload(mode, i):
    isid = b"\x80" + struct.pack(">IB", i, 0)
    name = "InitiatorName=iqn.2026-11.test:storm%d" % i
    keys = [name, "SessionType=Normal", "TargetName=" + TNAME]
    if mode == "nothing":
        return b""
    if mode == "partial":
        return login_pdu(keys, 0x00, isid)[:24]
    if mode == "login":   # CSG 0, NSG 1, T=0: the target answers and waits
        return login_pdu(keys + ["AuthMethod=None"], 0x01, isid)
    if mode == "continue":  # C=1: text continues in a PDU that never comes
        return login_pdu(keys + ["X-storm=" + "x" * 1024], 0x41, isid)
    if mode == "ffp":     # CSG 1 -> NSG 3 with T=1: full feature phase
        return login_pdu(keys + ["MaxRecvDataSegmentLength=8192"], 0x87, isid)
    raise SystemExit("unknown mode " + mode)


def raise_nofile(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= need:
        return
    if hard != resource.RLIM_INFINITY and hard < need:
        print("SKIP: the open-file limit (hard %d) is below %d" % (hard, need))
        sys.exit(77)
    resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


def recv_login_rsp(s):
    """The status of the first Login Response on a blocking socket."""
    s.settimeout(10)
    hdr, _ = recv_pdu(s)
    if hdr is None:
        return None
    s.setblocking(False)
    if hdr[0] & 0x3f != 0x23:
        return None
    return (hdr[36] << 8) | hdr[37]


def still_open(s):
    """Drain what the target sent; False once it closed or reset."""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return False
    except BlockingIOError:
        return True
    except OSError:
        return False


def main():
    raise_nofile(COUNT + 64)
    sel = selectors.DefaultSelector()
    socks, pending, failed = [], {}, 0
    i = 0
    deadline = time.monotonic() + CONNECT_TIMEOUT
    while i < COUNT or pending:
        while i < COUNT and len(pending) < WINDOW:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.2.%d" % (FIRST + i % SOURCES), 0))
            s.setblocking(False)
            r = s.connect_ex(("127.0.0.1", PORT))
            if r not in (0, errno.EINPROGRESS):
                raise SystemExit("connect: %s" % os.strerror(r))
            pending[s] = i
            sel.register(s, selectors.EVENT_WRITE)
            i += 1
        if time.monotonic() > deadline:
            print("FAIL: %d connects still pending after %d s" %
                  (len(pending), CONNECT_TIMEOUT), flush=True)
            sys.exit(1)
        for key, _ in sel.select(timeout=1):
            s = key.fileobj
            n = pending.pop(s)
            sel.unregister(s)
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                failed += 1  # refused before the handshake finished
                s.close()
                continue
            mode = MODES[n % len(MODES)]
            data = payload(mode, n)
            try:
                if data:
                    s.send(data)  # small: fits the socket buffer at once
                if mode == "ffp":
                    s.setblocking(True)
                    st = recv_login_rsp(s)
                    if st is not None and st != 0:
                        print("FAIL: login %d: status %s" % (n, st), flush=True)
                        sys.exit(1)
            except OSError:
                pass  # refused at accept: counted as closed below
            socks.append(s)
    # the target refuses over its caps right after accepting: count once
    # the closes have arrived (two equal counts 0.2 s apart, 3 s at most)
    nopen, prev = -1, -2
    settle = time.monotonic() + 3
    while nopen != prev and time.monotonic() < settle:
        prev = nopen
        time.sleep(0.2)
        nopen = sum(1 for s in socks if still_open(s))
    print("opened %d %d" % (nopen, len(socks) - nopen + failed), flush=True)
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "count":
            nopen = sum(1 for s in socks if still_open(s))
            print("open %d closed %d" % (nopen, len(socks) - nopen + failed),
                  flush=True)
        elif cmd == "quit":
            break
    for s in socks:
        s.close()


main()
