#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""What idm-initiator says when it cannot get going (suite 'tools'):
- iser:// on a host without an RDMA device: "no RDMA device";
- a host name that does not resolve: the resolver's message;
- a refused login, for every Status-Class/Status-Detail of RFC 7143
  section 11.13.5: class, detail and code, e.g.
  "initiator error: target not found (0x0203)", and where a redirection
  points. The target here is a few lines of Python on 127.0.0.1 that
  answers the first Login Request with the status under test.
Usage: clear_errors.py PATH/TO/idm-initiator"""
import os
import socket
import struct
import subprocess
import sys
import threading

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from toolcheck import check, finish, has_rdma, iser_built
# the raw-socket helpers of the Python peers of tests/interop
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "interop", "target"))
from raw_pdu import recv_exact  # noqa: E402

INI = sys.argv[1]
IQN = "iqn.2026-11.org.libidm:status"

STATUS = {
    0x0101: "target moved temporarily (0x0101)",
    0x0102: "target moved permanently (0x0102)",
    0x0200: "initiator error: initiator error (0x0200)",
    0x0201: "initiator error: authentication failure (0x0201)",
    0x0202: "initiator error: authorization failure (0x0202)",
    0x0203: "initiator error: target not found (0x0203)",
    0x0204: "initiator error: target removed (0x0204)",
    0x0205: "initiator error: unsupported version (0x0205)",
    0x0206: "initiator error: too many connections (0x0206)",
    0x0207: "initiator error: missing parameter (0x0207)",
    0x0208: "initiator error: can't include in session (0x0208)",
    0x0209: "initiator error: session type not supported (0x0209)",
    0x020a: "initiator error: session does not exist (0x020a)",
    0x020b: "initiator error: invalid request during login (0x020b)",
    0x0300: "target error: target error (0x0300)",
    0x0301: "target error: service unavailable (0x0301)",
    0x0302: "target error: out of resources (0x0302)",
    0x02ee: "initiator error: unknown status detail (0x02ee)",
}


def run_ini(url, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run([INI, "-q", "-t", "5", "--no-discovery", url],
                       capture_output=True, text=True, timeout=60, env=e)
    return p.returncode, p.stderr


def answer_login(ls, status, text):
    """Accept one connection, answer its Login Request with `status`."""
    try:
        c, _ = ls.accept()
    except OSError:
        return
    with c:
        c.settimeout(10)
        try:
            bhs = recv_exact(c, 48)
            dsl = int.from_bytes(bhs[5:8], "big")
            recv_exact(c, bhs[4] * 4 + (dsl + 3) // 4 * 4)
            h = bytearray(48)
            h[0] = 0x23                      # Login Response
            h[1] = 0x00                      # T=0, CSG=NSG=0
            h[5:8] = len(text).to_bytes(3, "big")
            h[8:14] = bhs[8:14]              # ISID
            h[16:20] = bhs[16:20]            # ITT
            struct.pack_into(">III", h, 24, 1, 1, 1)
            h[36], h[37] = status >> 8, status & 0xff
            c.sendall(bytes(h) + text + b"\0" * (-len(text) % 4))
            while c.recv(4096):
                pass
        except (OSError, EOFError):
            pass


def login_status(status):
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    ls.settimeout(20)
    port = ls.getsockname()[1]
    text = b"TargetAddress=192.0.2.7:3260,1\0" if status >> 8 == 1 else b""
    t = threading.Thread(target=answer_login, args=(ls, status, text))
    t.start()
    rc, err = run_ini(f"iscsi://127.0.0.1:{port}/{IQN}/1")
    ls.close()
    t.join(15)
    want = STATUS[status]
    if status >> 8 == 1:
        want = f"login redirected (not followed): {want} to 192.0.2.7:3260,1"
    else:
        want = f"login refused: {want}"
    check(rc == 1 and want in err, f"status 0x{status:04x}: \"{want}\"",
          f"rc={rc}\n{err}")


# iser:// without an RDMA device
if iser_built() and not has_rdma():
    rc, err = run_ini(f"iser://127.0.0.1:3260/{IQN}/1")
    check(rc == 1 and "provider iser not usable here: no RDMA device" in err
          and "Cannot allocate memory" not in err
          and "iser://127.0.0.1:3260: provider iser not usable here" in err,
          "iser:// without an RDMA device says so", f"rc={rc}\n{err}")
else:
    print("skip iser:// without an RDMA device: " +
          ("this host has one" if has_rdma() else "iser not built"))

# a URL scheme no provider serves: libidm says so before any connect
rc, err = run_ini(f"ftp://127.0.0.1:3260/{IQN}/1")
check(rc == 1 and 'ftp://127.0.0.1:3260: no provider serves URL scheme "ftp"' in err,
      "a scheme no provider serves says so", f"rc={rc}\n{err}")

# a name that never resolves (RFC 6761 .invalid)
rc, err = run_ini(f"iscsi://no-such-host.invalid:3260/{IQN}/1")
check(rc == 1 and "cannot resolve no-such-host.invalid:3260: " in err
      and "No route to host" not in err,
      "unresolvable host: the resolver's message", f"rc={rc}\n{err}")
try:
    import ctypes
    libc = ctypes.CDLL(None)
    libc.gai_strerror.restype = ctypes.c_char_p
    msg = libc.gai_strerror(-2).decode()  # EAI_NONAME
    check(msg in err or libc.gai_strerror(-3).decode() in err,
          f"... which is gai_strerror's (\"{msg}\" or EAI_AGAIN's)", err)
except (OSError, AttributeError):
    pass

for st in STATUS:
    login_status(st)

finish()
