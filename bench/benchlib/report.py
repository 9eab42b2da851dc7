# SPDX-License-Identifier: BSD-2-Clause
"""From runs to results: medians and spread per cell, ratios per pair,
the goals of the hot-path work checked against them, a perftest-style
table, and a check that a JSON report is complete and well formed."""

import math
import statistics

METRICS = ["iops", "mib_s", "lat_p50_us", "lat_p99_us", "cpu_us_per_io",
           "syscalls_per_io", "recvfrom_per_io", "recv_per_io",
           "lun_io_per_io"]
RATIO_METRICS = ["iops", "cpu_us_per_io", "syscalls_per_io"]

ME = ("idm-target", "idm-initiator")


def _spread(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return {"median": statistics.median(vals), "min": min(vals),
            "max": max(vals), "n": len(vals)}


def summarize(runs, workloads):
    """One cell per (workload, target, initiator) that ran, in run
    order."""
    cells, order = {}, []
    for r in runs:
        key = (r["workload"], r["target"], r["initiator"])
        if key not in cells:
            cells[key] = []
            order.append(key)
        cells[key].append(r)
    out = []
    for key in order:
        rs = cells[key]
        ok = [r for r in rs if not r.get("error")]
        cell = {"workload": key[0], "target": key[1], "initiator": key[2],
                "reps": len(rs), "ok": len(ok),
                "digests": ok[0]["digests"] if ok else None,
                "errors": [r["error"] for r in rs if r.get("error")]}
        for m in METRICS:
            cell[m] = _spread([r.get(m) for r in ok])
        out.append(cell)
    return out


def _median(cell, metric):
    s = cell.get(metric) if cell else None
    return s["median"] if s else None


def _ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def pairs(cells):
    """idm-target vs tgtd, tgtd-idm (tgtd on libidm) vs tgtd and
    idm-target vs tgtd-idm for each initiator, idm-initiator vs
    iscsi-perf against each target, and (--target-threads) idm-target/tN
    vs idm-target/t1, per workload: ratios of medians."""
    by = {(c["workload"], c["target"], c["initiator"]): c for c in cells}
    workloads = list(dict.fromkeys(c["workload"] for c in cells))
    out = []

    def add(kind, w, a, b):
        ca, cb = by.get((w, *a)), by.get((w, *b))
        if not ca or not cb or not ca["ok"] or not cb["ok"]:
            return
        p = {"kind": kind, "workload": w,
             "a": {"target": a[0], "initiator": a[1]},
             "b": {"target": b[0], "initiator": b[1]},
             "like_for_like": ca["digests"] == cb["digests"]}
        for m in RATIO_METRICS:
            p[m + "_ratio"] = _ratio(_median(ca, m), _median(cb, m))
        out.append(p)

    for w in workloads:
        for ini in ("idm-initiator", "iscsi-perf"):
            add("target", w, ("idm-target", ini), ("tgtd", ini))
            # the same tgtd, its transport on libidm: what the port costs
            # or gains, then what remains between the two targets
            add("target", w, ("tgtd-idm", ini), ("tgtd", ini))
            add("target", w, ("idm-target", ini), ("tgtd-idm", ini))
        for tgt in ("idm-target", "tgtd", "tgtd-idm"):
            add("initiator", w, (tgt, "idm-initiator"), (tgt, "iscsi-perf"))
        # --target-threads: each count against one thread
        for t in dict.fromkeys(c["target"] for c in cells):
            if t.startswith("idm-target/t") and t != "idm-target/t1":
                for ini in ("idm-initiator", "iscsi-perf"):
                    add("threads", w, (t, ini), ("idm-target/t1", ini))
    return out


# A quick pass (bench/run --quick: one run of 1 s) is a smoke test: its
# numbers say that the setup works, not whether a goal is met.
QUICK_NOTE = "not measured (quick pass)"


def reach(cells, rss, quick=False):
    """The measurable goals of the hot-path issue, on idm-target driven
    by idm-initiator: met (True/False) or None when not measured in this
    run (workload not selected, no syscall counts, or a quick pass, which
    gives no verdict and no value at all)."""
    by = {c["workload"]: c for c in cells
          if (c["target"], c["initiator"]) == ME and c["ok"]}

    def m(w, metric):
        return _median(by.get(w), metric)

    goals = []

    def goal(name, value, want, op, unit="", note=None):
        met = None
        if quick:
            value, note = None, QUICK_NOTE
        if value is not None:
            met = value >= want if op == ">=" else value <= want
        goals.append({"goal": name, "measured": value, "want": f"{op} {want}"
                      + unit, "met": met, **({"note": note} if note else {})})

    goal("4k QD32 write/read IOPS", _ratio(m("4k-randwrite-qd32", "iops"),
                                          m("4k-randread-qd32", "iops")),
         0.95, ">=", "x")
    goal("1m QD4 write/read IOPS", _ratio(m("1m-randwrite-qd4", "iops"),
                                         m("1m-randread-qd4", "iops")),
         0.95, ">=", "x")
    # every receive call, not only recvfrom: payload placed with readv
    # or recvmsg costs a syscall all the same
    goal("receive calls per 1 MiB write", m("1m-randwrite-qd4", "recv_per_io"),
         4, "<=", note="recvfrom + readv + recvmsg")
    # the LUN's pread/pwrite (file backing) are the backing's, not the
    # transport's: left out of the budget
    sys_qd1, lun_qd1 = (m("4k-randread-qd1", "syscalls_per_io"),
                        m("4k-randread-qd1", "lun_io_per_io"))
    goal("syscalls per I/O, 4k read QD1",
         None if sys_qd1 is None else sys_qd1 - (lun_qd1 or 0), 4, "<=",
         note="LUN pread/pwrite left out" if lun_qd1 else None)
    goal("CPU/IO 64x QD1 over 1x QD64", _ratio(
        m("4k-randread-64x1", "cpu_us_per_io"),
        m("4k-randread-1x64", "cpu_us_per_io")), 1.5, "<=", "x")
    goal("1m read IOPS digests on/off", _ratio(
        m("1m-randread-qd4-dig", "iops"), m("1m-randread-qd4", "iops")),
        0.85, ">=", "x")
    mine = [r for r in rss if r["target"] == "idm-target"
            and r.get("per_session_kib") is not None]
    top = max(mine, key=lambda r: r["sessions"]) if mine else None
    goal("RSS per idle session [KiB]",
         top["per_session_kib"] if top else None, 12, "<=",
         note=f"at {top['sessions']} sessions" if top else None)
    goals.append({"goal": "CRC32C speed vs the built-in code",
                  "measured": None, "want": ">= 3x", "met": None,
                  "note": "not measured here: a CRC32C microbenchmark's job"})
    goals.append({"goal": "iSER vs perftest at 64 KiB", "measured": None,
                  "want": ">= 0.87x", "met": None,
                  "note": "not measured here: needs the RDMA guest"})
    return goals


# ---- the table -----------------------------------------------------------

RULE = "-" * 118


def _num(v, fmt="{:.2f}", none="-"):
    return none if v is None else fmt.format(v)


def _k(v):
    if v is None:
        return "-"
    return f"{v / 1000:.1f}k" if v >= 10000 else f"{v:.0f}"


def _x(v):
    return "-" if v is None else f"{v:.2f}x"


def print_table(doc, out):
    m = doc["machine"]
    c = doc["config"]
    p = lambda s="": print(s, file=out)  # noqa: E731
    p(RULE)
    p("        libidm side-by-side iSCSI benchmark (bench/run): "
      f"{c['reps']} rep(s) x {c['duration_s']:g} s, interleaved, "
      "median [min-max]")
    p(f" Date: {doc['date']} | {m['cpu_model']} | {m['cpus_online']} CPUs"
      f" | Linux {m['kernel']} | load {m['load_avg_start'][0]:.2f} at start")
    p(f" {m.get('libidm') or 'libidm ?'} ({m.get('libidm_git') or '?'}, "
      f"{m.get('buildtype')}, {m.get('compiler')}) | tgt {m.get('tgt')} | "
      f"libiscsi {m.get('libiscsi')}")
    p(" Backing: " + "; ".join(f"{k}: {v}" for k, v in
                                c["backing"].items()))
    p(f" Syscalls: {c['syscall_method'] or 'not counted'}"
      + (f" ({c['syscall_note']})" if c.get("syscall_note") else ""))
    p(RULE)
    p(f" {'workload':<22} {'target':<11} {'initiator':<14} {'IOPS':>8} "
      f"{'[min - max]':<17} {'MiB/s':>8} {'p99[us]':>8} {'CPU/IO[us]':>10} "
      f"{'sys/IO':>7} {'dig':<6}")
    for cell in doc["cells"]:
        if not cell["ok"]:
            p(f" {cell['workload']:<22} {cell['target']:<11} "
              f"{cell['initiator']:<14} FAILED: {cell['errors'][0][:50]}")
            continue
        io = cell["iops"]
        p(f" {cell['workload']:<22} {cell['target']:<11} "
          f"{cell['initiator']:<14} {_k(io['median']):>8} "
          f"{'[' + _k(io['min']) + ' - ' + _k(io['max']) + ']':<17} "
          f"{_num(_median(cell, 'mib_s'), '{:.1f}'):>8} "
          f"{_num(_median(cell, 'lat_p99_us'), '{:.0f}'):>8} "
          f"{_num(_median(cell, 'cpu_us_per_io')):>10} "
          f"{_num(_median(cell, 'syscalls_per_io'), '{:.1f}'):>7} "
          f"{cell['digests']:<6}")
    for s in doc.get("skipped", []):
        p(f" skipped: {s}")
    if doc["pairs"]:
        p(RULE)
        p(f" {'pair (A / B)':<46} {'workload':<22} {'IOPS':>7} "
          f"{'CPU/IO':>7} {'sys/IO':>7}")
        for pr in doc["pairs"]:
            if pr["kind"] == "target":
                name = (f"{pr['a']['target']} / {pr['b']['target']} "
                        f"({pr['a']['initiator']})")
            elif pr["kind"] == "threads":
                name = (f"{pr['a']['target']} / {pr['b']['target']} "
                        f"({pr['a']['initiator']})")
            else:
                name = f"idm-initiator / iscsi-perf ({pr['a']['target']})"
            if not pr["like_for_like"]:
                name += " *"
            p(f" {name:<46} {pr['workload']:<22} {_x(pr['iops_ratio']):>7} "
              f"{_x(pr['cpu_us_per_io_ratio']):>7} "
              f"{_x(pr['syscalls_per_io_ratio']):>7}")
        if any(not pr["like_for_like"] for pr in doc["pairs"]):
            p(" * not like for like: libiscsi has header digests only")
    if doc["rss"]:
        p(RULE)
        p(f" {'RSS per idle session':<22} {'sessions':>8} {'before[KiB]':>12}"
          f" {'held[KiB]':>10} {'per session':>12} {'after close':>12}")
        for r in doc["rss"]:
            if r.get("error"):
                p(f" {r['target']:<22} {r['sessions']:>8} FAILED: "
                  f"{r['error'][:60]}")
                continue
            p(f" {r['target']:<22} {r['sessions']:>8} "
              f"{r['rss_before_kib']:>12} {r['rss_held_kib']:>10} "
              f"{r['per_session_kib']:>12.1f} "
              f"{_num(r['rss_after_close_kib'], '{}'):>12}")
    p(RULE)
    p(f" {'goal (idm-target, idm-initiator)':<40} {'measured':>10} "
      f"{'want':>8}  result")
    quick = c.get("quick")
    for g in doc["reach"]:
        v, met, note = g["measured"], g["met"], g.get("note")
        if quick and met is not None:
            # a quick report written before quick passes gave no verdict
            v, met, note = None, None, QUICK_NOTE
        res = {True: "met", False: "MISSED", None: "not measured"}[met]
        if note:
            res = note if met is None else f"{res} ({note})"
        p(f" {g['goal']:<40} {_num(v):>10} {g['want']:>8}  {res}")
    p(RULE)


# ---- checking a report (the meson test) ---------------------------------

def check(doc):
    """Problems with a report as a list of strings: empty when it is
    complete and well formed. Asserts nothing about speed."""
    bad = []
    for key in ("schema", "date", "machine", "config", "runs", "cells",
                "pairs", "rss", "reach"):
        if key not in doc:
            bad.append(f"missing '{key}'")
    if bad:
        return bad
    if doc["schema"] != "libidm-bench/1":
        bad.append(f"schema {doc['schema']!r}")
    if not doc["runs"]:
        bad.append("no runs")
    for r in doc["runs"]:
        if r.get("error"):
            bad.append(f"{r['workload']} {r['target']} {r['initiator']}: "
                       f"{r['error']}")
            continue
        for m in ("iops", "ios", "cpu_us_per_io"):
            v = r.get(m)
            if not isinstance(v, (int, float)) or not math.isfinite(v) \
                    or v < 0:
                bad.append(f"{r['workload']} {r['target']} "
                           f"{r['initiator']}: bad {m} {v!r}")
        if r.get("ios", 0) <= 0:
            bad.append(f"{r['workload']} {r['target']} {r['initiator']}: "
                       "no I/O completed")
    if not any((c["target"], c["initiator"]) == ME and c["ok"]
               for c in doc["cells"]):
        bad.append("no idm-target/idm-initiator cell")
    for r in doc["rss"]:
        if r.get("error"):
            bad.append(f"RSS {r['target']} x{r['sessions']}: {r['error']}")
    if doc["config"].get("quick"):
        for g in doc["reach"]:
            if g.get("met") is not None or g.get("measured") is not None:
                bad.append(f"goal '{g['goal']}' judged in a quick pass")
    return bad
