#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Write the seed corpus of tests/fuzz: corpus/<harness>/<name>, small
files in each harness's input format (see the comment at the top of each
fuzz_*.c), built from real login keys, PDUs and CDBs. Run it again after
changing a format; the files are committed so that a checkout needs no
Python to fuzz. Files it does not write (regress-*: inputs that once
crashed a harness, kept as regression tests) are left alone.
Usage: make-corpus.py [OUTDIR] (default: next to this file).
"""
import os
import struct
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def text(*pairs):
    return b"".join(k.encode() + b"=" + v.encode() + b"\0" for k, v in pairs)


def write(harness, name, data):
    d = os.path.join(OUT, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# Notice_Key_Values as idm-target and idm-initiator pass it.
NKV_TCP = text(("HeaderDigest", "CRC32C"), ("DataDigest", "None"),
               ("MaxBurstLength", "1048576"), ("FirstBurstLength", "262144"),
               ("ImmediateData", "Yes"), ("InitialR2T", "No"),
               ("MaxOutstandingR2T", "16"), ("ErrorRecoveryLevel", "0"),
               ("DataPDUInOrder", "Yes"), ("DataSequenceInOrder", "Yes"),
               ("InitiatorRecvDataSegmentLength", "262144"),
               ("TargetRecvDataSegmentLength", "262144"),
               ("MaxRecvDataSegmentLength", "262144"))
NKV_ISER = NKV_TCP + text(("RDMAExtensions", "Yes"),
                          ("TaggedBufferForSolicitedDataOnly", "No"),
                          ("iSERHelloRequired", "No"),
                          ("MaxOutstandingUnexpectedPDUs", "0"),
                          ("MaxAHSLength", "0x100"))


def params():
    write("params", "tcp-target", b"\x02" + NKV_TCP)
    write("params", "tcp-initiator", b"\x01" + NKV_TCP)
    write("params", "iser-target-twice", b"\x06" + NKV_ISER)
    write("params", "hex-and-lists", b"\x02" + text(
        ("HeaderDigest", "CRC32C,None"), ("MaxBurstLength", "0x40000"),
        ("FirstBurstLength", "0x10000"), ("TargetAddress", "10.0.0.1:3260,1" * 20),
        ("X-com.example.Key", "1")))
    write("params", "first-over-max", b"\x02" + text(
        ("MaxBurstLength", "512"), ("FirstBurstLength", "65536")))
    write("params", "padding-no-final-nul", b"\x00" + b"\0\0" + NKV_TCP[:-1])


# A normal session's first Login Request text, the operational stage,
# a discovery, CHAP, and a target's answers (what the initiator parses).
LOGIN_FIRST = text(("InitiatorName", "iqn.2026-11.org.libidm:ini"),
                   ("SessionType", "Normal"),
                   ("TargetName", "iqn.2026-11.org.libidm:fuzz"),
                   ("AuthMethod", "None"))
LOGIN_OPER = text(("HeaderDigest", "CRC32C,None"), ("DataDigest", "None"),
                  ("MaxConnections", "1"), ("InitialR2T", "Yes"),
                  ("ImmediateData", "Yes"), ("MaxRecvDataSegmentLength", "262144"),
                  ("MaxBurstLength", "262144"), ("FirstBurstLength", "65536"),
                  ("DefaultTime2Wait", "2"), ("DefaultTime2Retain", "0"),
                  ("MaxOutstandingR2T", "1"), ("DataPDUInOrder", "Yes"),
                  ("DataSequenceInOrder", "Yes"), ("ErrorRecoveryLevel", "0"),
                  ("IFMarker", "No"), ("OFMarker", "No"), ("OFMarkInt", "2048~8192"))
LOGIN_ISER = text(("RDMAExtensions", "Yes"), ("TargetRecvDataSegmentLength", "8192"),
                  ("InitiatorRecvDataSegmentLength", "262144"),
                  ("MaxOutstandingUnexpectedPDUs", "0"), ("MaxAHSLength", "256"),
                  ("TaggedBufferForSolicitedDataOnly", "No"), ("iSERHelloRequired", "No"))
DISCOVERY = text(("InitiatorName", "iqn.2026-11.org.libidm:ini"),
                 ("SessionType", "Discovery"), ("AuthMethod", "None"))
CHAP = text(("AuthMethod", "CHAP,None"), ("CHAP_A", "5,7"),
            ("CHAP_N", "user"), ("CHAP_R", "0x" + "ab" * 16),
            ("CHAP_C", "0bAAECAwQFBgcICQoLDA0ODw=="), ("CHAP_I", "7"))
ANSWERS = text(("TargetPortalGroupTag", "1"), ("HeaderDigest", "None"),
               ("MaxBurstLength", "1048576"), ("ImmediateData", "No"),
               ("TaskReporting", "RFC3720"), ("iSCSIProtocolLevel", "1"),
               ("X#vendor", "NotUnderstood"), ("InitialR2T", "Reject"))
SENDTARGETS = text(("TargetName", "iqn.2026-11.org.libidm:fuzz"),
                   ("TargetAddress", "[fe80::1]:3260,1"),
                   ("TargetAddress", "iscsi://user%secret@10.0.0.2:3261/iqn.x/3"),
                   ("SendTargets", "All"))


def keys():
    write("keys", "login-first", LOGIN_FIRST)
    write("keys", "login-operational", LOGIN_OPER)
    write("keys", "login-iser", LOGIN_ISER)
    write("keys", "discovery", DISCOVERY)
    write("keys", "chap", CHAP)
    write("keys", "target-answers", ANSWERS)
    write("keys", "sendtargets", SENDTARGETS)
    write("keys", "cut-by-continue", LOGIN_OPER[:-7])


def cdb(*b):
    return bytes(b) + bytes(16 - len(b))


def rec(ctl, edtl, c, data=b""):
    return bytes([ctl]) + struct.pack(">H", edtl) + c + data


R, W = 4, 8


def scsi():
    inquiry = rec(R, 255, cdb(0x12, 0, 0, 0, 255, 0))
    vpd = b"".join(rec(R, 255, cdb(0x12, 1, p, 0, 255, 0)) for p in (0, 0x80, 0x83, 0xb0, 0xb1, 0xb2))
    write("scsi", "inquiry", b"\0" + inquiry + vpd)
    write("scsi", "report-luns", b"\0" + rec(R, 4096, cdb(0xa0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0)))
    write("scsi", "tur-read-capacity", b"\0" + rec(0, 0, cdb(0)) +
          rec(R, 8, cdb(0x25)) + rec(R, 32, cdb(0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32)))
    w10 = rec(W, 1024, cdb(0x2a, 0, 0, 0, 0, 8, 0, 0, 2, 0), bytes(range(256)) * 4)
    r10 = rec(R, 1024, cdb(0x28, 0, 0, 0, 0, 8, 0, 0, 2, 0))
    write("scsi", "write-read-10", b"\0" + w10 + r10)
    w16 = rec(W, 4096, cdb(0x8a, 0, 0, 0, 0, 0, 0, 0, 0, 0x3f, 0, 0, 0, 1, 0, 0), b"\xa5" * 4096)
    write("scsi", "write-16-4k", b"\1" + w16 + rec(R, 4096, cdb(0x88, 0, 0, 0, 0, 0, 0, 0, 0, 0x3f, 0, 0, 0, 1, 0, 0)))
    write("scsi", "read-6-out-of-range", b"\0" + rec(R, 512, cdb(0x08, 0x1f, 0xff, 0xff, 1, 0)))
    write("scsi", "mode-sense-select", b"\0" + rec(R, 255, cdb(0x1a, 0, 0x3f, 0, 255, 0)) +
          rec(R, 255, cdb(0x5a, 0, 0x0a, 0, 0, 0, 0, 0, 255, 0)) +
          rec(W, 24, cdb(0x55, 0x10, 0, 0, 0, 0, 0, 0, 24, 0),
              bytes([0, 0, 0, 0, 0, 0, 0, 0, 0x0a, 10, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])))
    write("scsi", "unmap-write-same", b"\0" +
          rec(W, 24, cdb(0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0),
              bytes([0, 22, 0, 16, 0, 0, 0, 0]) + struct.pack(">QII", 4, 8, 0)) +
          rec(W, 512, cdb(0x93, 0x08, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0), b"\0" * 512))
    prout = lambda sa, key, sakey, t=0: rec(W, 24, cdb(0x5f, sa, t, 0, 0, 0, 0, 0, 24, 0),
                                            struct.pack(">QQ", key, sakey) + bytes(8))
    write("scsi", "persistent-reservations", b"\0" + prout(0, 0, 0x11) +
          rec(W | 1, 24, cdb(0x5f, 0, 0, 0, 0, 0, 0, 0, 24, 0), struct.pack(">QQ", 0, 0x22) + bytes(8)) +
          prout(1, 0x11, 0, 0x05) + rec(R, 255, cdb(0x5e, 0, 0, 0, 0, 0, 0, 0, 255, 0)) +
          rec(R, 255, cdb(0x5e, 1, 0, 0, 0, 0, 0, 0, 255, 0)) +
          rec(W | 1, 1024, cdb(0x2a, 0, 0, 0, 0, 0, 0, 0, 2, 0), bytes(1024)) +
          prout(3, 0x11, 0x22, 0x05))
    write("scsi", "reserve-release", b"\0" + rec(0, 0, cdb(0x16)) + rec(1, 0, cdb(0x12, 0, 0, 0, 36, 0)) +
          rec(1, 0, cdb(0x00)) + rec(0, 0, cdb(0x17)))
    write("scsi", "rsoc-sense-sync", b"\0" + rec(R, 4096, cdb(0xa3, 0x0c, 0, 0, 0, 0, 0, 0, 0x10, 0)) +
          rec(R, 255, cdb(0xa3, 0x0c, 1, 0x28, 0, 0, 0, 0, 0, 255)) + rec(R, 252, cdb(0x03, 1, 0, 0, 252, 0)) +
          rec(0, 0, cdb(0x35)) + rec(0, 0, cdb(0x1b, 0, 0, 0, 1, 0)) + rec(0, 0, cdb(0x1e, 0, 0, 0, 1, 0)) +
          rec(2, 0, cdb(0x00)))
    write("scsi", "compare-write-verify", b"\0" +
          rec(W, 1024, cdb(0x89, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0), bytes(1024)) +
          rec(W, 512, cdb(0x2f, 0x02, 0, 0, 0, 0, 0, 0, 1, 0), bytes(512)) +
          rec(W, 512, cdb(0x2e, 0, 0, 0, 0, 2, 0, 0, 1, 0), bytes(512)))


# ---------------------------------------------------------------- target
ISID = bytes([0x40, 0, 0, 0, 0, 1])
TNAME = "iqn.2026-11.org.libidm:fuzz"


def bhs(op, flags, ver=b"\0\0", data=b"", lun=bytes(8), itt=1, w20=0, w24=0, w28=0, rest=bytes(16)):
    h = bytes([op, flags]) + ver + b"\0" + struct.pack(">I", len(data))[1:] + lun + \
        struct.pack(">III", itt, w20, w24) + struct.pack(">I", w28) + rest
    assert len(h) == 48
    return h


def pdu(h, data=b"", sel=0):
    return bytes([sel]) + h + data


def login(csg, nsg, transit, data, itt=1, cmdsn=1, tsih=0, isid=ISID, cid=0, cont=False, sel=0):
    flags = (0x80 if transit else 0) | (0x40 if cont else 0) | csg << 2 | nsg
    lun = isid + struct.pack(">H", tsih)
    return pdu(bhs(0x43, flags, data=data, lun=lun, itt=itt, w20=cid << 16, w24=cmdsn, w28=0), data, sel)


def scsi_cmd(cdb_, edtl, itt, cmdsn, r=False, w=False, lun=0, data=b"", final=True, sel=0):
    flags = (0x80 if final else 0) | (0x40 if r else 0) | (0x20 if w else 0) | 1
    lunb = bytes([0, lun]) + bytes(6)
    return pdu(bhs(0x01, flags, data=data, lun=lunb, itt=itt, w20=edtl, w24=cmdsn, w28=1, rest=cdb_), data, sel)


def data_out(data, itt, ttt=0xffffffff, offset=0, sel=0):
    rest = bytes(4) + struct.pack(">I", 0) + struct.pack(">I", offset) + bytes(4)
    return pdu(bhs(0x05, 0x80, data=data, itt=itt, w20=ttt, rest=rest), data, sel)


def text_req(data, itt, cmdsn, ttt=0xffffffff, cont=False, sel=0):
    return pdu(bhs(0x04, 0x40 if cont else 0x80, data=data, itt=itt, w20=ttt, w24=cmdsn, w28=1), data, sel)


def nop_out(itt, cmdsn, data=b"", sel=0):
    return pdu(bhs(0x40, 0x80, data=data, itt=itt, w20=0xffffffff, w24=cmdsn, w28=1), data, sel)


def tmf(fn, itt, cmdsn, ref=0xffffffff, refcmdsn=0, sel=0):
    rest = struct.pack(">II", refcmdsn, 0) + bytes(8)
    return pdu(bhs(0x42, 0x80 | fn, itt=itt, w20=ref, w24=cmdsn, w28=1, rest=rest), b"", sel)


def logout(itt, cmdsn, reason=0, sel=0):
    return pdu(bhs(0x46, 0x80 | reason, itt=itt, w20=0, w24=cmdsn, w28=1), b"", sel)


FIRST = text(("InitiatorName", "iqn.2026-11.org.libidm:ini"), ("SessionType", "Normal"),
             ("TargetName", TNAME), ("AuthMethod", "None"))
# None first: the target takes it, and a TCP stream needs no CRC32C the
# fuzzer could not compute
OPER = LOGIN_OPER.replace(b"InitialR2T=Yes", b"InitialR2T=No").replace(
    b"HeaderDigest=CRC32C,None", b"HeaderDigest=None,CRC32C")


def normal_login(cfg_iser=False):
    keys = OPER + (LOGIN_ISER if cfg_iser else b"")
    return login(0, 1, True, FIRST) + login(1, 3, True, keys, itt=2)


def target():
    c = normal_login()
    write("target", "login-scsi-logout", b"\0" + c +
          scsi_cmd(cdb(0x12, 0, 0, 0, 255, 0), 255, 10, 1, r=True) +
          scsi_cmd(cdb(0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0), 256, 11, 2, r=True) +
          scsi_cmd(cdb(0x25), 8, 12, 3, r=True) +
          scsi_cmd(cdb(0x2a, 0, 0, 0, 0, 0, 0, 0, 2, 0), 1024, 13, 4, w=True, data=bytes(range(256)) * 2, final=False) +
          data_out(bytes(512), 13, offset=512) +
          scsi_cmd(cdb(0x28, 0, 0, 0, 0, 0, 0, 0, 2, 0), 1024, 14, 5, r=True) +
          nop_out(15, 6, b"ping") + logout(16, 7))
    write("target", "discovery-sendtargets", b"\0" +
          login(0, 3, True, DISCOVERY + text(("HeaderDigest", "None"), ("MaxRecvDataSegmentLength", "512"))) +
          text_req(text(("SendTargets", "All")), 5, 1) +
          text_req(text(("SendTargets", "")), 6, 2) + logout(7, 3))
    write("target", "iser-login", b"\1" + normal_login(True) +
          scsi_cmd(cdb(0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32), 32, 10, 1, r=True, lun=1) +
          text_req(text(("SendTargets", TNAME), ("X-vendor", "1")), 11, 2))
    write("target", "chap-start", b"\2" +
          login(0, 1, False, FIRST.replace(b"AuthMethod=None", b"AuthMethod=CHAP,None")) +
          login(0, 1, False, text(("CHAP_A", "5")), itt=2) +
          login(0, 1, True, text(("CHAP_N", "user"), ("CHAP_R", "0x" + "00" * 16)), itt=3))
    write("target", "login-continue-and-overrides", b"\x1c" +
          login(0, 1, False, FIRST[:20], cont=True) + login(0, 1, True, FIRST[20:]) +
          login(1, 3, False, OPER[:40], itt=2, cont=True) + login(1, 3, True, OPER[40:], itt=2) +
          scsi_cmd(cdb(0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0), 512, 20, 1, w=True) + data_out(b"\xa5" * 512, 20, ttt=1) +
          text_req(text(("SendTargets", "All")), 21, 2, cont=True) + text_req(b"", 21, 3))
    write("target", "tmf-and-window", b"\0" + c +
          scsi_cmd(cdb(0x00), 0, 30, 3) + scsi_cmd(cdb(0x00), 0, 31, 2) +
          tmf(1, 32, 4, ref=30, refcmdsn=3) + scsi_cmd(cdb(0x00), 0, 33, 1) +
          pdu(bhs(0x10, 0x80, itt=34), sel=4) + tmf(5, 35, 4) + pdu(bhs(0x1c, 0x80, itt=36)) +
          login(0, 1, True, FIRST, itt=37))
    # well-framed protocol errors idm-target Rejects, the session going on
    # (doc/api.md 7.1): Data-Out for an unknown ITT and an unknown TTT,
    # unassigned and target opcodes, Text without its final NUL
    write("target", "reject-and-go-on", b"\0" + c +
          scsi_cmd(cdb(0x2a, 0, 0, 0, 0, 0, 0, 0, 2, 0), 1024, 50, 1, w=True, final=False) +
          data_out(bytes(512), 0x999, offset=0) +
          data_out(bytes(512), 50, ttt=0x12345, offset=512) +
          data_out(bytes(1024), 50, offset=0) +
          pdu(bhs(0x1e, 0x80, data=b"vendor", itt=51), b"vendor") +
          pdu(bhs(0x21, 0x80, itt=52)) + pdu(bhs(0x25, 0x81, data=b"data", itt=53), b"data") +
          text_req(b"SendTargets=", 54, 2) + nop_out(55, 3, b"ping") + logout(56, 4))
    write("target", "reinstatement", b"\0" + c + scsi_cmd(cdb(0x00), 0, 40, 1) +
          login(0, 1, True, FIRST, sel=1) + login(1, 3, True, OPER, itt=2, sel=1) +
          scsi_cmd(cdb(0x00), 0, 41, 1, sel=1) + nop_out(42, 2, sel=2) +
          login(0, 3, True, FIRST + OPER, tsih=2, cid=0, sel=0))


def wire(records):
    """fuzz_target records -> the TCP byte stream of connection 0: each
    PDU padded to 4 bytes, as on the wire."""
    out, i = b"", 0
    while i + 49 <= len(records):
        sel, h = records[i], records[i + 1:i + 49]
        n = int.from_bytes(h[5:8], "big")
        d = records[i + 49:i + 49 + n]
        i += 49 + n
        if sel & 1 == 0:
            out += h + d + bytes(-len(d) % 4)
    return out


def tcp_target():
    d = os.path.join(OUT, "target")
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), "rb") as f:
            recs = f.read()
        if recs[0] & 1 == 0:  # iSER configurations have no TCP stream
            write("tcp_target", name, wire(recs[1:]))
    # a stream cut in the middle of a PDU
    c = wire(login(0, 1, True, FIRST))
    write("tcp_target", "cut-mid-pdu", c[:60])


params()
keys()
scsi()
target()
tcp_target()
