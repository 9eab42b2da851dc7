# SPDX-License-Identifier: BSD-2-Clause
"""The two initiators: idm-initiator --bench (examples/initiator) and
libiscsi's iscsi-perf. Each run returns a dict of what it measured, or
raises RunError with the reason."""

import json
import re
import shutil
import signal
import subprocess

INI_IQN = "iqn.2026-11.org.libidm:bench"


class RunError(Exception):
    pass


def iscsi_perf_available():
    if shutil.which("iscsi-perf"):
        return True, None
    return False, "iscsi-perf not installed (Debian package libiscsi-bin)"


def _tail(text, n=6):
    return "\n".join(text.strip().splitlines()[-n:])


def run_idm_initiator(binary, env, url, w, duration):
    """One `idm-initiator --bench --json` run. Digests on: CRC32C header
    and data digests (the targets then require the header digest and
    offer the data digest)."""
    cmd = [binary, "-q", "--no-discovery", "--bench", "--json",
           "-n", INI_IQN + ":idm-initiator",
           "--bs", str(w.bs), "--qd", str(w.qd),
           "--sessions", str(w.sessions),
           "--read-pct", "100" if w.read else "0",
           "--duration", f"{duration:g}"]
    if w.digests:
        cmd += ["--header-digest", "crc32c", "--data-digest", "crc32c"]
    cmd.append(url)
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           timeout=duration + 60 + w.sessions)
    except subprocess.TimeoutExpired:
        raise RunError("idm-initiator did not finish in time")
    if r.returncode != 0:
        raise RunError(f"idm-initiator exit {r.returncode}: "
                       f"{_tail(r.stderr)}")
    start = r.stdout.find("{")
    try:
        res = json.loads(r.stdout[start:])
    except ValueError:
        raise RunError("idm-initiator --json output does not parse: " +
                       _tail(r.stdout))
    if res.get("errors"):
        raise RunError(f"idm-initiator counted {res['errors']} failed I/Os")
    lat = res.get("latency_us", {})
    return {
        "ios": int(res["ios"]),
        "seconds": float(res["duration_s"]),
        "iops": float(res["iops"]),
        "mib_s": float(res["bw_avg_mib_s"]),
        "lat_p50_us": lat.get("p50"),
        "lat_p99_us": lat.get("p99"),
        "digests": "header+data" if w.digests else "none",
    }


_PERF_AVG = re.compile(r"iops average (\d+) \((\d+) MB/s\)")


def run_iscsi_perf(url, w, duration):
    """iscsi-perf reads only, one session per process: `sessions`
    processes of QD `qd` each, each with its own initiator name (so no
    two share an ISID by chance). libiscsi never offers a data digest,
    so digests on means the header digest only."""
    secs = max(1, int(round(duration)))
    blocks = max(1, w.bs // 512)
    procs = []
    for i in range(w.sessions):
        cmd = ["iscsi-perf", "-i", f"{INI_IQN}:iscsi-perf-{i}",
               "-m", str(w.qd), "-b", str(blocks), "-t", str(secs), "-r",
               url]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    iops = mib = 0.0
    errors = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=secs + 60 + w.sessions)
        except subprocess.TimeoutExpired:
            # iscsi-perf ends on its second SIGINT
            p.send_signal(signal.SIGINT)
            p.send_signal(signal.SIGINT)
            try:
                out, _ = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                out, _ = p.communicate()
            errors.append("iscsi-perf did not finish in time")
            continue
        found = _PERF_AVG.findall(out.replace("\r", "\n"))
        if p.returncode != 0 or "finished." not in out or not found:
            errors.append(f"iscsi-perf exit {p.returncode}: "
                          f"{_tail(out.replace(chr(13), chr(10)), 3)}")
            continue
        iops += float(found[-1][0])
        # its MB/s is rounded down to whole MiB: recompute from IOPS
        mib += float(found[-1][0]) * w.bs / (1 << 20)
    if errors:
        raise RunError("; ".join(errors[:3]))
    return {
        "ios": int(iops * secs),  # it prints an average, not a count
        "seconds": float(secs),
        "iops": iops,
        "mib_s": mib,
        "lat_p50_us": None,  # iscsi-perf reports no latency
        "lat_p99_us": None,
        "digests": "header" if w.digests else "none",
    }
