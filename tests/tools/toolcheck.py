# SPDX-License-Identifier: BSD-2-Clause
"""Helpers shared by the tests of suite 'tools' (and idm_info_rdma.py):
one way to report a check, to end a run, and to tell whether this host
has an RDMA device and whether the iser provider was built. Imported,
not run: each test's own directory is first on sys.path."""
import os
import sys

failures = []


def check(cond, what, detail=""):
    """Print ok/FAIL for `what`; a failure is counted and shows `detail`."""
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
        if detail:
            print("     " + detail.strip().replace("\n", "\n     "))


def finish():
    """Exit 1 when a check failed, else print PASS (exit status 0)."""
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("PASS")


def rdma_devices():
    """The RDMA devices the kernel lists (soft-RoCE's rxe0 in the guest)."""
    try:
        return [n for n in os.listdir("/sys/class/infiniband")
                if not n.startswith(".")]
    except OSError:
        return []


def has_rdma():
    return bool(rdma_devices())


def iser_built():
    """libidm-iser.so is in one of the IDM_PROVIDER_PATH directories."""
    return any(os.path.exists(os.path.join(d, "libidm-iser.so"))
               for d in os.environ.get("IDM_PROVIDER_PATH", "").split(":") if d)
