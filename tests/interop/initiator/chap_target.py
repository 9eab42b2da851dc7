#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A target that plays CHAP against idm-initiator's checks of the target
side (mutual CHAP), on 127.0.0.1. Scenarios:

  reflect       the first connection logs in with mutual CHAP done right
                (the target knows both secrets), closes at the first
                command; on the reconnection the target sends the
                initiator's own challenge of the first login back as its
                challenge (a reflection), which the initiator must refuse.
  skip-mutual   the target leaves the security stage (T=1) right after
                the initiator's response, without answering its
                challenge.
  wrong-alg     the target picks CHAP_A=5 when only 7 was offered.

Usage: chap_target.py SCENARIO PORT_FILE USER SECRET MUTUAL_USER MUTUAL_SECRET
"""
import hashlib
import os
import sys

from hostile_target import Target, listen_port_file, recv_pdu

# the raw iSCSI helpers of the tests that play an initiator
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target"))
from raw_pdu import text_keys as keys  # noqa: E402

ALGS = {5: "md5", 6: "sha1", 7: "sha256", 8: "sha3_256"}




def text(*pairs):
    return b"".join(k.encode() + b"=" + v.encode() + b"\0" for k, v in pairs)


def digest(alg, cid, secret, chal):
    return hashlib.new(ALGS[alg], bytes([cid]) + secret.encode() + chal).digest()


def serve(t, scenario, n, state, user, secret, muser, msecret):
    """One connection; n counts them from 0. Returns when it is done."""
    req, _ = recv_pdu(t.c)                       # AuthMethod
    t.login_rsp(req, 0x00, text(("AuthMethod", "CHAP")))
    req, data = recv_pdu(t.c)                    # CHAP_A
    offered = keys(data).get("CHAP_A", "")
    alg = int(offered.split(",")[0])
    if scenario == "wrong-alg":
        alg = 5 if alg != 5 else 6
    chal = os.urandom(16 if alg == 5 else 32 if alg in (7, 8) else 20)
    if scenario == "reflect" and n > 0:
        chal = state["ini_chal"]                 # the initiator's own
    t.login_rsp(req, 0x00, text(("CHAP_A", str(alg)), ("CHAP_I", "9"),
                                ("CHAP_C", "0x" + chal.hex())))
    req, data = recv_pdu(t.c)                    # CHAP_N, CHAP_R, CHAP_I, CHAP_C
    k = keys(data)
    if k.get("CHAP_N") != user or bytes.fromhex(k.get("CHAP_R", "0x")[2:]) != \
            digest(alg, 9, secret, chal):
        t.login_rsp(req, 0x00, b"", status=0x0201)
        return
    ini_chal = bytes.fromhex(k["CHAP_C"][2:])
    state.setdefault("ini_chal", ini_chal)
    if scenario == "skip-mutual":
        t.login_rsp(req, 0x81, b"")
    else:
        t.login_rsp(req, 0x81, text(("CHAP_N", muser), ("CHAP_R", "0x" + digest(
            alg, int(k["CHAP_I"]), msecret, ini_chal).hex())))
    req, _ = recv_pdu(t.c)                       # operational stage
    t.login_rsp(req, 0x87, b"HeaderDigest=None\0DataDigest=None\0"
                           b"MaxRecvDataSegmentLength=8192\0")
    recv_pdu(t.c)                                # the first command: drop


def main():
    scenario, port_file, user, secret, muser, msecret = sys.argv[1:7]
    ls = listen_port_file(port_file, 4)
    state = {}
    for n in range(6):
        try:
            conn, _ = ls.accept()
        except OSError:
            break
        conn.settimeout(20)
        try:
            serve(Target(conn), scenario, n, state, user, secret, muser, msecret)
        except (EOFError, OSError, ValueError, KeyError):
            pass
        conn.close()


if __name__ == "__main__":
    main()
