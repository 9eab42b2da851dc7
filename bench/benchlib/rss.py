# SPDX-License-Identifier: BSD-2-Clause
"""Resident memory per idle full-feature session: a fresh target, its
VmRSS, N sessions logged in by bench-login-hold and held idle, VmRSS
again, then the sessions closed and VmRSS once more (is it given back?)."""

import subprocess
import time

from .probes import vm_rss_kib

SETTLE_S = 0.5  # let the target finish its work on the last login/close


def measure(target, login_hold, sessions):
    """One fresh target, one count of sessions. Returns a result dict;
    a failure is recorded in it as 'error'."""
    res = {"target": target.name, "sessions": sessions}
    target.start(digests=False)
    try:
        time.sleep(SETTLE_S)
        before = vm_rss_kib(target.pid)
        p = subprocess.Popen([login_hold, "127.0.0.1", str(target.port),
                              target.iqn, str(sessions)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        try:
            line = p.stdout.readline().strip()
            if line != f"ready {sessions}":
                p.stdin.close()
                err = p.stderr.read().strip().splitlines()
                p.wait(timeout=30)
                res["error"] = ("login driver: " +
                                (err[-1] if err else f"said {line!r}"))
                return res
            time.sleep(SETTLE_S)
            held = vm_rss_kib(target.pid)
            p.stdin.write("\n")
            p.stdin.flush()
            p.stdin.close()
            p.stdout.readline()  # "closed N"
            p.wait(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        time.sleep(SETTLE_S)
        after = vm_rss_kib(target.pid) if target.alive() else None
        res.update({
            "rss_before_kib": before,
            "rss_held_kib": held,
            "rss_after_close_kib": after,
            "per_session_kib": (held - before) / sessions,
        })
        if not target.alive():
            res["error"] = "target died after the sessions closed"
        return res
    finally:
        target.stop()
