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
import hashlib
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
CHAP_ALL = text(("CHAP_A", "8,7,6,5"), ("CHAP_A", "SHA3-256,SHA256,x,,99"),
                ("CHAP_R", "0x" + "ab" * 32), ("CHAP_R", "0xabc"), ("CHAP_R", "0b@@"),
                ("CHAP_C", "0x" + "cd" * 1100), ("CHAP_I", "256"), ("CHAP_N", "n" * 300))
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
    write("keys", "chap-algorithms-and-values", CHAP_ALL)
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
    # protected (config bit 5, no allow-all): the peer is not loopback,
    # so a normal login is refused (0x0202) and SendTargets lists
    # nothing; with CHAP (bit 1) the login goes on to the exchange
    write("target", "protected-refused", b"\x20" + c + logout(10, 1))
    write("target", "protected-discovery", b"\x20" +
          login(0, 3, True, DISCOVERY + text(("HeaderDigest", "None"), ("MaxRecvDataSegmentLength", "512"))) +
          text_req(text(("SendTargets", "All")), 5, 1) + logout(6, 2))
    write("target", "protected-chap", b"\x22" +
          login(0, 1, False, FIRST.replace(b"AuthMethod=None", b"AuthMethod=CHAP,None")) +
          login(0, 1, False, text(("CHAP_A", "5")), itt=2))
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
    # initiator ACLs (config mode 2, 0x80): the seeds' initiator sees LUN
    # 1 only (REPORT LUNS, LUN 0 not supported, resets), another name is
    # refused and discovers nothing; mode 3 (0xc0): the rules change when
    # time passes, the session is asked to log out (Async Message) and does
    write("target", "acl-luns", b"\x80" + c +
          scsi_cmd(cdb(0xa0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0), 256, 10, 1, r=True) +
          scsi_cmd(cdb(0x25), 8, 11, 2, r=True, lun=0) + scsi_cmd(cdb(0x00), 0, 12, 3, lun=1) +
          scsi_cmd(cdb(0x12, 0, 0, 0, 255, 0), 255, 13, 4, r=True, lun=0) +
          tmf(5, 14, 5) + tmf(6, 15, 5) + logout(16, 5))
    write("target", "acl-refused", b"\x80" +
          login(0, 1, True, FIRST.replace(b"libidm:ini", b"libidm:nobody")) +
          login(0, 3, True, DISCOVERY.replace(b"libidm:ini", b"libidm:nobody") +
                text(("HeaderDigest", "None"), ("MaxRecvDataSegmentLength", "512")), sel=1) +
          text_req(text(("SendTargets", "All")), 5, 1, sel=1))
    write("target", "acl-reload", b"\xc0" + c +
          scsi_cmd(cdb(0x00), 0, 10, 1, lun=1, sel=4) + scsi_cmd(cdb(0x00), 0, 11, 2, lun=1) +
          nop_out(12, 3, sel=4) + logout(13, 3))
    write("target", "reinstatement", b"\0" + c + scsi_cmd(cdb(0x00), 0, 40, 1) +
          login(0, 1, True, FIRST, sel=1) + login(1, 3, True, OPER, itt=2, sel=1) +
          scsi_cmd(cdb(0x00), 0, 41, 1, sel=1) + nop_out(42, 2, sel=2) +
          login(0, 3, True, FIRST + OPER, tsih=2, cid=0, sel=0))

    chap()


# CHAP (fuzz_target.c config bit 1, mode 1): the fuzz build's challenge is
# 00 01 02 ... of the digest's length with CHAP_I 1 (ex_chap.c), so the
# seeds answer it right and reach what follows: mutual CHAP, the
# operational stage, a command.
CHAP_ALGS = {5: "md5", 6: "sha1", 7: "sha256", 8: "sha3_256"}


def chap_r(alg, secret, cid=1, chal=None):
    h = hashlib.new(CHAP_ALGS[alg])
    if chal is None:
        chal = bytes(range(h.digest_size))
    h.update(bytes([cid]) + secret.encode() + chal)
    return "0x" + h.hexdigest()


def chap_login(alg_list, answer, first=None, itt0=1, sel=0):
    """A CHAP login's three requests; sel=2 on a new connection (the
    initiator resets the one the target closed after a failure)."""
    first = first or FIRST.replace(b"AuthMethod=None", b"AuthMethod=CHAP,None")
    return (login(0, 1, False, first, itt=itt0, sel=sel) +
            login(0, 1, False, text(("CHAP_A", alg_list)), itt=itt0 + 1) +
            login(0, 1, True, text(*answer), itt=itt0 + 2))


def chap():
    cmd = scsi_cmd(cdb(0x12, 0, 0, 0, 255, 0), 255, 10, 1, r=True)
    oper = login(1, 3, True, OPER, itt=4)
    # one-way, each algorithm the default list takes (config bit 1)
    for alg in (8, 7, 6, 5):
        write("target", "chap-%s" % CHAP_ALGS[alg], b"\2" +
              chap_login(str(alg), [("CHAP_N", "user"), ("CHAP_R", chap_r(alg, "secret-secret"))]) +
              oper + cmd)
    # per-initiator and mutual (mode 1): SHA-256 chosen from a mixed list
    mutual = [("CHAP_N", "ini"), ("CHAP_R", chap_r(7, "ini-secret-0123")),
              ("CHAP_I", "200"), ("CHAP_C", "0x" + "5a" * 32)]
    write("target", "chap-mutual", b"\x42" + chap_login("x,99,5,7", mutual) + oper + cmd)
    write("target", "chap-mutual-base64", b"\x42" + chap_login("7", [
        ("CHAP_N", "ini"), ("CHAP_R", chap_r(7, "ini-secret-0123")),
        ("CHAP_I", "0"), ("CHAP_C", "0b" + "AAECAwQFBgcICQoLDA0ODw==")]) + oper)
    # the target's own challenge sent back (reflection), half of the
    # mutual keys, an out-of-range CHAP_I, a challenge over 1024 bytes
    write("target", "chap-mutual-reflected", b"\x42" + chap_login("7", [
        ("CHAP_N", "ini"), ("CHAP_R", chap_r(7, "ini-secret-0123")),
        ("CHAP_I", "1"), ("CHAP_C", "0x" + bytes(range(32)).hex())]))
    write("target", "chap-mutual-half", b"\x42" + chap_login("7", [
        ("CHAP_N", "ini"), ("CHAP_R", chap_r(7, "ini-secret-0123")), ("CHAP_C", "0x0102")]))
    write("target", "chap-mutual-bad-values", b"\x42" + chap_login("8", [
        ("CHAP_N", "ini"), ("CHAP_R", chap_r(8, "ini-secret-0123")),
        ("CHAP_I", "256"), ("CHAP_C", "0x" + "ab" * 1100)]))
    # MD5 offered alone to a target that refuses it; algorithm lists
    # that are long, empty or odd
    write("target", "chap-md5-refused", b"\x42" + chap_login("5", [("CHAP_N", "ini")]))
    write("target", "chap-alg-lists", b"\x42" +
          chap_login(",".join(["5"] * 300) + ",8", [("CHAP_N", "ini"), ("CHAP_R", "0xzz")]) +
          login(0, 1, False, text(("CHAP_A", "")), itt=5, sel=1) +
          login(0, 1, False, text(("CHAP_A", "Reject")), itt=6, sel=1))
    # bad encodings and long values: odd hex, bad base64, a response
    # of the wrong length, a name longer than the buffer
    write("target", "chap-bad-encodings", b"\2" +
          chap_login("5", [("CHAP_N", "u" * 300), ("CHAP_R", "0x" + "a" * 33)]) +
          chap_login("5", [("CHAP_N", "user"), ("CHAP_R", "0b@@@@")], sel=2) +
          chap_login("5", [("CHAP_N", "user"), ("CHAP_R", "0x" + "ab" * 2000)], sel=2))
    # discovery credentials of their own (mode 1): right, then chap's
    disc = DISCOVERY.replace(b"AuthMethod=None", b"AuthMethod=CHAP")
    write("target", "chap-discovery", b"\x42" +
          chap_login("6", [("CHAP_N", "disc"), ("CHAP_R", chap_r(6, "disc-secret-89ab"))], first=disc) +
          login(1, 3, True, text(("HeaderDigest", "None"), ("MaxRecvDataSegmentLength", "512")), itt=4) +
          text_req(text(("SendTargets", "All")), 5, 1))
    # the rate limit (mode 1: 2 failures): two wrong logins, then the
    # right one refused, each on a new connection; an initiator without
    # credentials of its own, so chap's apply
    other = FIRST.replace(b"libidm:ini", b"libidm:other").replace(
        b"AuthMethod=None", b"AuthMethod=CHAP,None")
    wrong = [("CHAP_N", "user"), ("CHAP_R", "0x" + "00" * 32)]
    right = [("CHAP_N", "user"), ("CHAP_R", chap_r(7, "secret-secret"))]
    write("target", "chap-rate-limit", b"\x42" +
          chap_login("7", wrong, first=other) + chap_login("7", wrong, first=other, sel=2) +
          chap_login("7", right, first=other, sel=2) + oper)


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


# ---------------------------------------------------------- tcp_initiator
def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC32C_T = _crc32c_table()


def crc32c(b):
    """RFC 3720 B.4 CRC32C as it goes on the wire (little-endian)."""
    c = 0xffffffff
    for x in b:
        c = CRC32C_T[(c ^ x) & 0xff] ^ (c >> 8)
    return struct.pack("<I", c ^ 0xffffffff)


def tcp_pdu(h, data=b"", hd=False, dd=False):
    """One PDU on the wire: BHS, header digest, data, pad, data digest."""
    pad = data + bytes(-len(data) % 4)
    return h + (crc32c(h) if hd else b"") + pad + (crc32c(pad) if dd and data else b"")


def sn4(*v):
    return b"".join(struct.pack(">I", x) for x in v)


def target_stream(cfg, ffp_pdus, login_keys=None):
    """fuzz_tcp_initiator's input: the final Login Response, then the
    full feature phase PDUs with the digests cfg turns on."""
    keys = login_keys if login_keys is not None else text(
        ("HeaderDigest", "CRC32C" if cfg & 1 else "None"), ("MaxRecvDataSegmentLength", "8192"))
    out = tcp_pdu(bhs(0x23, 0x87, data=keys, lun=ISID + b"\0\1", itt=1, w24=0, w28=1,
                      rest=sn4(16, 0, 0, 0)), keys)
    for h, d in ffp_pdus:
        out += tcp_pdu(h, d, hd=bool(cfg & 1), dd=bool(cfg & 2))
    return bytes([cfg]) + out


def data_in(itt, datasn, off, data, status=None, statsn=1, ack=False):
    flags = (0x80 | 0x01 if status is not None else 0) | (0x40 if ack else 0)
    return bhs(0x25, flags, ver=bytes([0, status or 0]), data=data, itt=itt, w20=0xffffffff,
               w24=statsn if status is not None else 0, w28=2, rest=sn4(17, datasn, off, 0)), data


def r2t(itt, ttt, r2tsn, off, length):
    return bhs(0x31, 0x80, itt=itt, w20=ttt, w24=1, w28=2, rest=sn4(17, r2tsn, off, length)), b""


def scsi_rsp(itt, statsn, status=0, sense=b""):
    d = struct.pack(">H", len(sense)) + sense if sense else b""
    return bhs(0x21, 0x80, ver=bytes([0, status]), data=d, itt=itt, w24=statsn, w28=2,
               rest=sn4(17, 0, 0, 0)), d


def tcp_initiator():
    reply = [bhs(0x20, 0x80, itt=0xffffffff, w20=5, w24=9, w28=2, rest=sn4(17, 0, 0, 0)), b""]
    rest = [reply,
            (bhs(0x32, 0x80, data=bytes(4), itt=0xffffffff, w24=10, w28=2,
                 rest=sn4(17) + bytes([1, 0, 0, 0]) + bytes(8)), bytes(4)),
            (bhs(0x3f, 0x80, ver=bytes([9, 0]), data=bhs(0x01, 0x80), itt=0xffffffff, w24=11),
             bhs(0x01, 0x80)),
            (bhs(0x24, 0x80, data=text(("TargetAlias", "fuzz")), itt=0x20, w20=0xffffffff, w24=12),
             text(("TargetAlias", "fuzz"))),
            (bhs(0x26, 0x80, itt=0x21, w24=13, w28=2), b"")]
    io = [data_in(0x10, 0, 0, bytes(range(256)) * 16), data_in(0x10, 1, 4096, bytes(4096), status=0),
          r2t(0x11, 0x100, 0, 0, 4096), r2t(0x11, 0x101, 1, 4096, 4096), scsi_rsp(0x11, 2),
          data_in(0x12, 0, 0, bytes(4096)), r2t(0x12, 0x102, 0, 0, 4096), scsi_rsp(0x12, 3),
          scsi_rsp(0x13, 4, status=2, sense=bytes([0x70, 0, 5]) + bytes(15)),
          data_in(0x10, 2, 0, bytes(512))]  # late: the task has ended
    write("tcp_initiator", "read-write-bidi", target_stream(0x08, io + rest))
    write("tcp_initiator", "digests", target_stream(0x0b, io + rest))
    write("tcp_initiator", "immediate-unsolicited-small", target_stream(0x34, [
        r2t(0x11, 0x100, 0, 512, 512), r2t(0x11, 0x101, 1, 1024, 512),
        data_in(0x12, 0, 0, bytes(512)), data_in(0x12, 1, 512, bytes(512)),
        r2t(0x12, 0x102, 0, 0, 512), scsi_rsp(0x12, 3), data_in(0x13, 0, 0, bytes(512), status=0),
        scsi_rsp(0x10, 5)] + rest))
    write("tcp_initiator", "erl1-ack-r2ts", target_stream(0xc8, [
        data_in(0x10, 0, 0, bytes(8192), ack=True), r2t(0x11, 0x100, 0, 0, 2048),
        r2t(0x11, 0x101, 1, 2048, 2048), r2t(0x11, 0x102, 2, 4096, 4096)] + rest))
    # login: a continuing response, then a refusal
    write("tcp_initiator", "login-continue-refused", bytes([0]) +
          tcp_pdu(bhs(0x23, 0x05, lun=ISID + b"\0\0", itt=1, w28=1, rest=sn4(16, 0, 0, 0))) +
          tcp_pdu(bhs(0x23, 0x00, lun=ISID + b"\0\0", itt=1, w24=1, w28=1,
                      rest=sn4(16) + bytes([2, 1]) + bytes(10))))
    write("tcp_initiator", "cut-mid-data-in", target_stream(0, io[:1])[:300])


# ---------------------------------------------------------------- iSER
def iser_hdr(op=0x10, write=None, read=None):
    """The 28-byte iSER header: write/read = (STag, VA) of a valid half."""
    b0 = op | (0x08 if write else 0) | (0x04 if read else 0)
    w = struct.pack(">IQ", *write) if write else bytes(12)
    r = struct.pack(">IQ", *read) if read else bytes(12)
    return bytes([b0, 0, 0, 0]) + w + r


def hello(op, maxv=10, minv=10, ird_ord=16, rej=False):
    return bytes([op | (1 if rej else 0), maxv << 4 | minv]) + struct.pack(">H", ird_ord) + bytes(24)


def sends(*msgs):
    """fuzz_iser_parser's Sends: 2-byte length, message."""
    return b"".join(struct.pack(">H", len(m)) + m for m in msgs)


def ctrl(p, **kw):
    """A control-type Send carrying one PDU as pdu() builds it (minus its
    selector byte)."""
    return iser_hdr(**kw) + p[1:]


def iser_parser():
    # config: bit 0 target, bit 1 login, bits 2-3 ORD, 4-6 slack; params:
    # ImmediateData, InitialR2T, FirstBurstLength 512 << bits 2-5
    tgt_ffp, fbl_64k_imm = 0x01 | 2 << 2 | 1 << 4, 0x01 | 7 << 2
    write("iser_parser", "target-write-unsolicited", bytes([tgt_ffp, fbl_64k_imm]) + sends(
        ctrl(scsi_cmd(cdb(0x2a, 0, 0, 0, 0, 0, 0, 0, 2, 0), 1024, 13, 4, w=True,
                      data=bytes(range(256)) * 2, final=False), write=(0x1234, 0x7f0000001000)),
        ctrl(data_out(bytes(512), 13, offset=512)),
        ctrl(scsi_cmd(cdb(0x28, 0, 0, 0, 0, 0, 0, 0, 2, 0), 1024, 14, 5, r=True),
             read=(0x5678, 0x7f0000002000)),
        ctrl(nop_out(15, 6, b"ping")), ctrl(text_req(text(("SendTargets", "All")), 16, 7)),
        ctrl(tmf(1, 17, 8, ref=14, refcmdsn=5)), ctrl(logout(18, 9))))
    write("iser_parser", "target-hello", bytes([tgt_ffp, 0]) + sends(
        hello(0x20), hello(0x20, 11, 11), hello(0x20, ird_ord=0), hello(0x30)))
    write("iser_parser", "target-login", bytes([0x03 | 1 << 2, 0]) + sends(
        ctrl(login(0, 1, True, FIRST)), ctrl(login(1, 3, True, OPER + LOGIN_ISER, itt=2))))
    ini_ffp = 1 << 2 | 2 << 4
    resp = bhs(0x21, 0x80, itt=10, w20=0, w24=2, w28=1)
    datain = bhs(0x25, 0x81, data=bytes(8), itt=12)
    r2t = bhs(0x31, 0x80, itt=13, w20=0x1000)
    write("iser_parser", "initiator-responses", bytes([ini_ffp, 0]) + sends(
        hello(0x30), hello(0x30, rej=True),
        iser_hdr() + resp, iser_hdr() + bhs(0x20, 0x80, data=b"pong", itt=0xffffffff) + b"pong",
        iser_hdr() + bhs(0x24, 0x80, data=text(("TargetName", TNAME)), itt=11) + text(("TargetName", TNAME)),
        iser_hdr() + bhs(0x32, 0x80, itt=0xffffffff, data=bytes(4)) + bytes(4),
        iser_hdr() + bhs(0x3f, 0x80, data=resp, itt=0xffffffff) + resp,
        iser_hdr() + bhs(0x26, 0x80, itt=14),
        iser_hdr() + datain + bytes(8), iser_hdr() + r2t))
    write("iser_parser", "initiator-login", bytes([0x02, 0]) + sends(
        iser_hdr() + bhs(0x23, 0x87, data=OPER, lun=ISID + b"\0\1", itt=1) + OPER))
    # an AHS, a PDU longer than its Send, a short Send, an unknown iSER
    # opcode, a Hello with trailing bytes, a buffer smaller than the Send
    ahs = struct.pack(">HB", 8, 1) + bytes(9)
    cmd = bytearray(scsi_cmd(cdb(0x00), 0, 20, 1)[1:])
    cmd[4] = len(ahs) // 4
    write("iser_parser", "lengths", bytes([tgt_ffp, 0]) + sends(
        iser_hdr() + bytes(cmd) + ahs, iser_hdr() + bhs(0x40, 0x80, data=bytes(100), itt=1) + bytes(10),
        iser_hdr()[:20], bytes([0x50]) + bytes(75), hello(0x20) + bytes(4)))
    write("iser_parser", "buffer-too-small", bytes([0x81, 0]) + sends(ctrl(nop_out(1, 1))))


params()
keys()
scsi()
target()
tcp_target()
tcp_initiator()
iser_parser()
