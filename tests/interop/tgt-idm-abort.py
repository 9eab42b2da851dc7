# SPDX-License-Identifier: BSD-2-Clause
"""ABORT TASK of a WRITE that waits for its data, then the same ITT again.

Logs in with InitialR2T=Yes and ImmediateData=No, sends a WRITE(10) of one
block, takes the R2T and sends no data, aborts the task (ABORT TASK), and
sends TEST UNIT READY with the aborted command's ITT: the target must
answer both and keep the connection. (A data mover that still holds the
ITT fails the connection on its reuse.)

With "set" as fifth argument ABORT TASK SET (all tasks of the LUN on this
I_T nexus) is sent instead, with "reset" LOGICAL UNIT RESET.

Usage: tgt-idm-abort.py HOST PORT TARGET_IQN LUN [task|set|reset]
Exit 0 on success, 1 with a reason on failure."""
import socket
import struct
import sys

sys.path.insert(0, __import__("os").path.join(
    __import__("os").path.dirname(__file__), "target"))
from raw_pdu import pad, recv_pdu  # noqa: E402

HOST, PORT, IQN, LUN = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
MODE = sys.argv[5] if len(sys.argv) > 5 else "task"
FUNC = {"task": 1, "set": 2, "reset": 5}[MODE]
ISID = bytes([0x40, 0x00, 0x01, 0x37, 0x12, 0x34])


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def bhs(op, flags, dsl, lun, itt, rest):
    """48-byte BHS: op, flags, 2 bytes, TotalAHSLength 0, DSL, LUN, ITT,
    then bytes 20-47 from rest."""
    h = struct.pack(">BBHB", op, flags, 0, 0) + struct.pack(">I", dsl)[1:]
    h += struct.pack(">Q", lun << 48) + struct.pack(">I", itt) + rest
    assert len(h) == 48, len(h)
    return h


s = socket.create_connection((HOST, PORT), timeout=10)
keys = ("InitiatorName=iqn.2026-11.org.libidm:abort-test\0"
        "TargetName=%s\0SessionType=Normal\0"
        "HeaderDigest=None\0DataDigest=None\0InitialR2T=Yes\0"
        "ImmediateData=No\0MaxRecvDataSegmentLength=65536\0"
        "MaxBurstLength=262144\0FirstBurstLength=65536\0"
        "ErrorRecoveryLevel=0\0MaxOutstandingR2T=1\0"
        "DataPDUInOrder=Yes\0DataSequenceInOrder=Yes\0"
        "DefaultTime2Wait=2\0DefaultTime2Retain=0\0"
        "MaxConnections=1\0" % IQN).encode()
cmdsn = 1
exp_statsn = 0
itt = 0x10
for _ in range(4):
    # Login Request: immediate, T=1, CSG=1 (operational), NSG=3 (FFP)
    login = struct.pack(">BBBB", 0x43, 0x87, 0, 0) + b"\0" + \
        struct.pack(">I", len(keys))[1:] + ISID + struct.pack(">H", 0) + \
        struct.pack(">IHH", itt, 0, 0) + struct.pack(">II", cmdsn, exp_statsn) + \
        b"\0" * 16
    s.sendall(login + pad(keys))
    h, d = recv_pdu(s)
    if h is None:
        fail("connection closed during login")
    if h[0] & 0x3f != 0x23 or h[36] != 0:
        fail("login refused: opcode 0x%02x class %d detail %d" % (h[0], h[36], h[37]))
    exp_statsn = struct.unpack(">I", h[24:28])[0] + 1
    tsih = h[14:16]
    keys = b""
    if h[1] & 0x80 and h[1] & 0x03 == 3:
        break
else:
    fail("no transit to full feature phase")
print("logged in")

# WRITE(10) of one block at LBA 0, no data yet (InitialR2T=Yes)
w_itt = 0x100
cdb = bytes([0x2a, 0, 0, 0, 0, 0, 0, 0, 1, 0]) + b"\0" * 6
s.sendall(bhs(0x01, 0xa1, 0, LUN, w_itt,
              struct.pack(">III", 512, cmdsn, exp_statsn) + cdb))
w_cmdsn = cmdsn
cmdsn += 1
h, d = recv_pdu(s)
if h is None or h[0] & 0x3f != 0x31:
    fail("no R2T for the WRITE (got %s)" % (None if h is None else hex(h[0])))
print("R2T received, no data sent")

# ABORT TASK (immediate), RTT = the WRITE's ITT, RefCmdSN = its CmdSN
t_itt = 0x200
rest = struct.pack(">IIIII", w_itt, cmdsn, exp_statsn, w_cmdsn, 0) + b"\0" * 8
s.sendall(bhs(0x42, 0x80 | FUNC, 0, LUN, t_itt, rest))
h, d = recv_pdu(s)
if h is None:
    fail("connection closed after ABORT TASK")
if h[0] & 0x3f != 0x22:
    fail("expected a TMF response, got opcode 0x%02x" % h[0])
print("TMF %s answered: response %d" % (MODE, h[2]))
exp_statsn = struct.unpack(">I", h[24:28])[0] + 1

# TEST UNIT READY with the aborted WRITE's ITT
cdb = b"\0" * 16
s.sendall(bhs(0x01, 0x81, 0, LUN, w_itt,
              struct.pack(">III", 0, cmdsn, exp_statsn) + cdb))
cmdsn += 1
while True:
    h, d = recv_pdu(s)
    if h is None:
        fail("connection closed on the reuse of the aborted ITT")
    if h[0] & 0x3f == 0x21 and struct.unpack(">I", h[16:20])[0] == w_itt:
        break
print("TEST UNIT READY with the reused ITT answered: status 0x%02x" % h[3])
s.close()
print("PASS")
