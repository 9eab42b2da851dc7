#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The CI summary's rule for skipped tests (.ci/summarize.py; suite
'tools'), on made-up meson logs: every skip is listed with its reason; on
the host a skip counts as failed unless the test needs an RDMA device or
the two-guest rig (the guest steps run those), and so does a skip that
gives no reason; in a
guest step's log (--guest) a skip stays a skip. The last line keeps its
form "N passed, N failed, N skipped".
Usage: ci_summarize.py SUMMARIZE_PY"""
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from toolcheck import check, finish

SUMMARIZE = sys.argv[1]


def rec(name, result, stdout="", stderr=None):
    r = {"name": name, "result": result, "stdout": stdout, "returncode": 0}
    if stderr is not None:
        r["stderr"] = stderr
    return json.dumps(r)


def summarize(*args):
    p = subprocess.run([sys.executable, SUMMARIZE, *args], capture_output=True,
                       text=True, timeout=30)
    return p.returncode, p.stdout, p.stderr


with tempfile.TemporaryDirectory(prefix="idm-ci-summarize-") as tmp:
    host = os.path.join(tmp, "testlog.json")
    guest = os.path.join(tmp, "testlog-rdma.json")
    with open(host, "w") as f:
        print(rec("unit-ctx", "OK"), file=f)
        print(rec("iser-loopback", "SKIP",
                  "SKIP: no RDMA device (run through tests/rdma-vm/ci.sh)\n"), file=f)
        print(rec("tools-idm-info-rdma", "SKIP", "",
                  "noise\nSKIP: no RDMA device address: set IDM_RDMA_IP\n"), file=f)
        print(rec("test_loopback_iser", "SKIP", "test_loopback: SKIP: provider iser "
                  "needs an RDMA device (run through tests/rdma-vm/ci.sh)\n"), file=f)
        print(rec("pair-cut-verify-tcp", "SKIP", "SKIP: needs guest B of the two-guest "
                  "rig (tests/rdma-vm/ci-pair.sh, tests/rdma-vm/vm-pair)\n"), file=f)
    with open(guest, "w") as f:
        print(rec("pair-cut", "OK"), file=f)
        print(rec("lio-target", "SKIP", "SKIP: kernel 6.1 has no module target_core_mod\n"),
              file=f)

    rc, out, err = summarize(host, "--guest", guest)
    lines = out.strip().splitlines()
    check(rc == 0 and lines[-1] == "2 passed, 0 failed, 5 skipped",
          "host skips for want of an RDMA device and a guest skip: skipped, exit 0",
          out + err)
    for name, why in (("iser-loopback", "SKIP: no RDMA device (run through"),
                      ("tools-idm-info-rdma", "SKIP: no RDMA device address"),
                      ("test_loopback_iser", "test_loopback: SKIP: provider iser needs"),
                      ("pair-cut-verify-tcp", "SKIP: needs guest B of the two-guest rig"),
                      ("lio-target", "SKIP: kernel 6.1 has no module")):
        check(any(l.startswith(f"summary: skipped: {name}: {why}") for l in lines),
              f"{name}: listed with its reason", out)

    with open(host, "a") as f:
        print(rec("abi-namespace", "SKIP",
                  "ok: c\nSKIP: checked what could be, but libiscsi-dev absent\n"), file=f)
        print(rec("mystery", "SKIP", "nothing to say\n"), file=f)
    rc, out, err = summarize(host, f"--guest={guest}", "--extra", "build-gcc=pass")
    lines = out.strip().splitlines()
    check(rc == 1 and lines[-1] == "2 passed, 2 failed, 5 skipped",
          "host skips for other reasons: counted as failed, exit 1", out + err)
    check(any("FAILED abi-namespace [SKIP on the host: SKIP: checked what could be, "
              "but libiscsi-dev absent]" in l for l in lines),
          "a host skip for a missing package: failed, with its reason", out)
    check(any("FAILED mystery [SKIP on the host: (no SKIP line" in l for l in lines),
          "a host skip that gives no reason: failed", out)

    # the same skips in a guest step's log stay skips
    rc, out, err = summarize("--guest", host)
    check(rc == 0 and out.strip().splitlines()[-1] == "1 passed, 0 failed, 6 skipped",
          "in a guest log every skip is a skip", out + err)

    # guest faults (tests/rdma-vm/fault-lib.sh): named apart, counted on
    # the last line; a recovered one does not fail the run
    faults = os.path.join(tmp, "guest-faults-rdma.txt")
    with open(faults, "w") as f:
        print("recovered\trdma-vm: guest: kernel panic in rxe_skb_tx_dtor (BUG: x)"
              " during test t1; 2 test(s) it had not completed ran in a fresh guest", file=f)
    ok = os.path.join(tmp, "testlog-ok.json")
    with open(ok, "w") as f:
        print(rec("t1", "OK"), file=f)
    rc, out, err = summarize("--faults", faults, "--guest", ok)
    lines = out.strip().splitlines()
    check(rc == 0 and lines[-1] == "1 passed, 0 failed, 0 skipped, 1 guest fault (1 recovered)",
          "a recovered guest fault is counted apart and does not fail the run", out + err)
    check(any(l.startswith("summary: GUEST FAULT (recovered): rdma-vm: guest: kernel panic in "
                           "rxe_skb_tx_dtor") for l in lines), "the fault is named", out)
    with open(faults, "a") as f:
        print("unrecovered\trdma-pair: guest B: stopped by its 3300 s guard", file=f)
    rc, out, err = summarize("--faults", faults, "--guest", ok)
    check(rc == 0 and out.strip().splitlines()[-1].endswith(", 2 guest faults (1 recovered)"),
          "an unrecovered fault is counted; its tests (ERROR) fail the run, not the line", out + err)

finish()
