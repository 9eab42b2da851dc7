#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A TCP relay on 127.0.0.1 that breaks the path once, for recovery tests.

Usage: cut_proxy.py MODE TARGET_PORT PORT_FILE [LOG]

It listens on a free loopback port (written to PORT_FILE), and relays
every accepted connection to 127.0.0.1:TARGET_PORT. Once BYTES have been
relayed in total (both ways, all connections), it breaks the path:

  reset:BYTES       the connections open then are reset (RST) both ways
  cut:BYTES:SECS    a cut link: for SECS seconds nothing is relayed on any
                    connection, old or new (new ones are accepted and left
                    silent); after that only connections opened later are
                    relayed, those of before stay silent until their ends
                    close them. Both ends see no FIN and no RST, as when
                    frames are dropped.

Events go to LOG (or stderr) with times since the break. It stops by
itself 300 s after starting.
"""
import select
import socket
import struct
import sys
import time


def main():
    mode, tport, port_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    logf = open(sys.argv[4], "a") if len(sys.argv) > 4 else sys.stderr
    parts = mode.split(":")
    kind, limit = parts[0], int(parts[1])
    secs = float(parts[2]) if kind == "cut" else 0
    if kind not in ("reset", "cut"):
        raise SystemExit("bad mode " + mode)

    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(8)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(ls.getsockname()[1]))
    import os
    os.rename(port_file + ".tmp", port_file)

    t_start = time.monotonic()
    t_break = None
    relayed = 0
    pairs = {}   # socket -> (peer socket, generation)
    dead = set()  # sockets of connections opened before the break

    def log(msg):
        t = time.monotonic() - (t_break or t_start)
        print("cut_proxy: %s%.1f s: %s" % ("+" if t_break else "", t, msg),
              file=logf, flush=True)

    def close(s):
        p = pairs.pop(s, (None,))[0]
        pairs.pop(p, None)
        for x in (s, p):
            if x:
                dead.discard(x)
                try:
                    x.close()
                except OSError:
                    pass

    while time.monotonic() - t_start < 300:
        cutting = (t_break is not None and kind == "cut" and
                   time.monotonic() - t_break < secs)
        rd = [ls] + [s for s in pairs if s not in dead and not cutting]
        # silent sockets are still watched for their end closing them
        rd += [s for s in pairs if s in dead or cutting]
        r, _, _ = select.select(rd, [], [], 0.1)
        for s in r:
            if s is ls:
                c, _ = ls.accept()
                u = socket.create_connection(("127.0.0.1", tport))
                pairs[c] = (u, 0)
                pairs[u] = (c, 0)
                if cutting:
                    dead.update((c, u))
                log("connection %d accepted%s" % (c.fileno(),
                    " during the cut: silent" if cutting else ""))
                continue
            if s not in pairs:
                continue
            if s in dead or cutting:
                # a silent path: swallow what comes, notice a close
                try:
                    d = s.recv(65536)
                except OSError:
                    d = b""
                if not d:
                    # its FIN is "dropped": the other end never hears of
                    # it and has to find out by itself
                    log("one end of a silent connection closed it")
                    p = pairs.pop(s)[0]
                    dead.discard(s)
                    s.close()
                    if p in pairs:
                        pairs[p] = (None, 0)
                        dead.add(p)
                continue
            try:
                d = s.recv(65536)
            except OSError:
                d = b""
            if not d:
                close(s)
                continue
            try:
                pairs[s][0].sendall(d)
            except OSError:
                close(s)
                continue
            relayed += len(d)
            if t_break is None and relayed >= limit:
                t_break = time.monotonic()
                if kind == "reset":
                    log("reset of %d connection(s)" % (len(pairs) // 2))
                    for x in list(pairs):
                        x.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                     struct.pack("ii", 1, 0))
                    for x in list(pairs):
                        close(x)
                else:
                    log("link cut for %.0f s" % secs)
                    dead.update(pairs)
                break  # pairs changed
        if (t_break is not None and kind == "cut" and cutting and
                time.monotonic() - t_break >= secs):
            log("link back")


if __name__ == "__main__":
    main()
