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
INITIATORS = ("idm-initiator", "iscsi-perf")


def idm_variant(target):
    """(engine, threads) of an idm-target cell's name (idm-target,
    idm-target/uring, idm-target/t2, idm-target/uring/t2), None for the
    other targets. A part left out is None: the default (reports from
    before --engines name no engine)."""
    parts = target.split("/")
    if parts[0] != "idm-target":
        return None
    engine = threads = None
    for p in parts[1:]:
        if p[:1] == "t" and p[1:].isdigit():
            threads = int(p[1:])
        else:
            engine = p
    return engine, threads


def idm_name(engine, threads):
    return ("idm-target" + (f"/{engine}" if engine else "") +
            (f"/t{threads}" if threads else ""))


def is_idm(target):
    return idm_variant(target) is not None


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
    """Each idm-target cell (one per engine and thread count) vs tgtd,
    tgtd-idm (tgtd on libidm) vs tgtd and each idm-target cell vs
    tgtd-idm for each initiator, idm-initiator vs iscsi-perf against each
    target, (--target-threads) idm-target/tN vs idm-target/t1 and
    (--engines) idm-target/uring vs idm-target/epoll at the same thread
    count, per workload: ratios of medians."""
    by = {(c["workload"], c["target"], c["initiator"]): c for c in cells}
    workloads = list(dict.fromkeys(c["workload"] for c in cells))
    idm = [t for t in dict.fromkeys(c["target"] for c in cells)
           if is_idm(t)]
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
        for ini in INITIATORS:
            for t in idm:
                add("target", w, (t, ini), ("tgtd", ini))
            # the same tgtd, its transport on libidm: what the port costs
            # or gains, then what remains between the two targets
            add("target", w, ("tgtd-idm", ini), ("tgtd", ini))
            for t in idm:
                add("target", w, (t, ini), ("tgtd-idm", ini))
        for tgt in idm + ["tgtd", "tgtd-idm"]:
            add("initiator", w, (tgt, "idm-initiator"), (tgt, "iscsi-perf"))
        for t in idm:
            engine, n = idm_variant(t)
            for ini in INITIATORS:
                # --target-threads: each count against one thread
                if n and n != 1:
                    add("threads", w, (t, ini), (idm_name(engine, 1), ini))
                # --engines: io_uring against epoll, the rest the same
                if engine == "uring":
                    add("engine", w, (t, ini), (idm_name("epoll", n), ini))
    return out


# A quick pass (bench/run --quick: one run of 1 s) is a smoke test: its
# numbers say that the setup works, not whether a goal is met.
QUICK_NOTE = "not measured (quick pass)"


# A uring cell whose provider fell back to epoll measured epoll.
FALLBACK_NOTE = "not measured (io_uring unavailable: ran epoll)"


def reach(cells, rss, quick=False, engines=None):
    """The measurable goals of the hot-path issue, on each idm-target
    cell (one per engine and thread count, or the one idm-target) driven
    by idm-initiator, each goal naming its cell as 'target'. `engines`:
    the report's config.engines, whose fallbacks give no verdict."""
    subjects = [t for t in dict.fromkeys(c["target"] for c in cells)
                if is_idm(t)] or ["idm-target"]
    goals = []
    for i, t in enumerate(subjects):
        fell = ((engines or {}).get(t) or {}).get("fallback")
        goals += _reach_one(cells, rss, quick, t, bool(fell), first=i == 0)
    return goals


def _reach_one(cells, rss, quick, target, fell_back, first):
    """The goals of one idm-target cell: met (True/False) or None when
    not measured in this run (workload not selected, no syscall counts,
    a quick pass, which gives no verdict and no value at all, or a uring
    cell that ran epoll)."""
    def cells_of(t):
        return {c["workload"]: c for c in cells
                if (c["target"], c["initiator"]) == (t, ME[1]) and c["ok"]}

    by = cells_of(target)

    def m(w, metric):
        return _median(by.get(w), metric)

    goals = []

    def goal(name, value, want, op, unit="", note=None):
        met = None
        if quick:
            value, note = None, QUICK_NOTE
        elif fell_back:
            value, note = None, FALLBACK_NOTE
        if value is not None:
            met = value >= want if op == ">=" else value <= want
        goals.append({"goal": name, "target": target, "measured": value,
                      "want": f"{op} {want}" + unit, "met": met,
                      **({"note": note} if note else {})})

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
    # at QD32 the whole target counts, as the goal is worded; the note
    # gives the transport's own share (a file LUN costs a pread/pwrite
    # per I/O, a RAM LUN nothing: bench/run --backing ram)
    qd32 = [(m(w, "syscalls_per_io"), m(w, "lun_io_per_io"))
            for w in ("4k-randread-qd32", "4k-randwrite-qd32")]
    worst = max((s for s, _ in qd32 if s is not None), default=None)
    own = ["-" if s is None else f"{s - (lun or 0):.2f}" for s, lun in qd32]
    goal("syscalls per I/O, 4k QD32 read/write", worst, 0.2, "<=",
         note=(f"transport alone: {own[0]} read, {own[1]} write"
               if worst is not None and any(lun for _, lun in qd32)
               else None))
    goal("CPU/IO 64x QD1 over 1x QD64", _ratio(
        m("4k-randread-64x1", "cpu_us_per_io"),
        m("4k-randread-1x64", "cpu_us_per_io")), 1.5, "<=", "x")
    goal("1m read IOPS digests on/off", _ratio(
        m("1m-randread-qd4-dig", "iops"), m("1m-randread-qd4", "iops")),
        0.9, ">=", "x")
    mine = [r for r in rss if r["target"] == target
            and r.get("per_session_kib") is not None]
    top = max(mine, key=lambda r: r["sessions"]) if mine else None
    goal("RSS per idle session [KiB]",
         top["per_session_kib"] if top else None, 12, "<=",
         note=f"at {top['sessions']} sessions" if top else None)
    engine, threads = idm_variant(target)
    if engine == "uring":
        # the engine must not cost any workload anything: the worst
        # ratio of medians over every workload that ran on both, with no
        # margin for noise (the spread in the table shows how much)
        base = cells_of(idm_name("epoll", threads))
        ratios = [(_ratio(m(w, "iops"), _median(base.get(w), "iops")), w)
                  for w in by]
        worst = min((r for r in ratios if r[0] is not None), default=None)
        goal("nothing slower than epoll (IOPS)",
             worst[0] if worst else None, 1.0, ">=", "x",
             note=(f"worst: {worst[1]}, ratio of medians, no margin"
                   if worst else "no epoll cell to compare"))
    if first:
        goals.append({"goal": "CRC32C speed vs the built-in code",
                      "target": target, "measured": None, "want": ">= 3x",
                      "met": None, "note": "not measured here: a CRC32C "
                      "microbenchmark's job"})
        goals.append({"goal": "iSER vs perftest at 64 KiB",
                      "target": target, "measured": None,
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


def _fell_back(doc):
    """idm-target cells that asked for io_uring and ran epoll: name ->
    the provider's warning (none in reports from before --engines)."""
    engines = doc["config"].get("engines") or {}
    return {t: e["fallback"] for t, e in engines.items() if e.get("fallback")}


def _engines_line(doc):
    engines = doc["config"].get("engines")
    if not engines:
        return None
    parts = [f"{t}: {e['engine']}" +
             ("" if e["ran"] == e["engine"] else f" (RAN {e['ran']})")
             for t, e in engines.items()]
    ini = doc["config"].get("initiator_engine")
    return " Engines: " + ", ".join(parts) + (f"; initiators: {ini}"
                                              if ini else "")


def print_table(doc, out):
    m = doc["machine"]
    c = doc["config"]
    p = lambda s="": print(s, file=out)  # noqa: E731
    fell = _fell_back(doc)

    def tname(t):  # a uring cell that ran epoll is marked wherever shown
        return t + "!" if t in fell else t

    # idm-target/uring/t2 and the like: as wide as the longest name
    tw = max([11] + [len(tname(cell["target"])) for cell in doc["cells"]])
    p(RULE)
    p("        libidm side-by-side iSCSI benchmark (bench/run): "
      f"{c['reps']} rep(s) x {c['duration_s']:g} s, interleaved, "
      "median [min-max]")
    p(f" Date: {doc['date']} | {m['cpu_model']} | {m['cpus_online']} CPUs"
      f" | Linux {m['kernel']} | load {m['load_avg_start'][0]:.2f} at start")
    p(f" {m.get('libidm') or 'libidm ?'} ({m.get('libidm_git') or '?'}, "
      f"{m.get('buildtype')}, {m.get('compiler')}) | tgt {m.get('tgt')} | "
      f"libiscsi {m.get('libiscsi')}"
      + (f" | liburing {m['liburing']}" if m.get("liburing") else ""))
    p(" Backing: " + "; ".join(f"{k}: {v}" for k, v in
                                c["backing"].items()))
    p(f" Syscalls: {c['syscall_method'] or 'not counted'}"
      + (f" ({c['syscall_note']})" if c.get("syscall_note") else ""))
    if _engines_line(doc):
        p(_engines_line(doc))
    p(RULE)
    p(f" {'workload':<22} {'target':<{tw}} {'initiator':<14} {'IOPS':>8} "
      f"{'[min - max]':<17} {'MiB/s':>8} {'p99[us]':>8} {'CPU/IO[us]':>10} "
      f"{'sys/IO':>7} {'dig':<6}")
    for cell in doc["cells"]:
        if not cell["ok"]:
            p(f" {cell['workload']:<22} {tname(cell['target']):<{tw}} "
              f"{cell['initiator']:<14} FAILED: {cell['errors'][0][:50]}")
            continue
        io = cell["iops"]
        p(f" {cell['workload']:<22} {tname(cell['target']):<{tw}} "
          f"{cell['initiator']:<14} {_k(io['median']):>8} "
          f"{'[' + _k(io['min']) + ' - ' + _k(io['max']) + ']':<17} "
          f"{_num(_median(cell, 'mib_s'), '{:.1f}'):>8} "
          f"{_num(_median(cell, 'lat_p99_us'), '{:.0f}'):>8} "
          f"{_num(_median(cell, 'cpu_us_per_io')):>10} "
          f"{_num(_median(cell, 'syscalls_per_io'), '{:.1f}'):>7} "
          f"{cell['digests']:<6}")
    for s in doc.get("skipped", []):
        p(f" skipped: {s}")
    for t, warning in fell.items():
        p(f" ! {t} asked for io_uring and ran epoll: {warning}")
    if doc["pairs"]:
        _print_pairs(doc, p, tname)
    if doc["rss"]:
        p(RULE)
        p(f" {'RSS per idle session':<22} {'sessions':>8} {'before[KiB]':>12}"
          f" {'held[KiB]':>10} {'per session':>12} {'after close':>12}")
        for r in doc["rss"]:
            if r.get("error"):
                p(f" {tname(r['target']):<22} {r['sessions']:>8} FAILED: "
                  f"{r['error'][:60]}")
                continue
            p(f" {tname(r['target']):<22} {r['sessions']:>8} "
              f"{r['rss_before_kib']:>12} {r['rss_held_kib']:>10} "
              f"{r['per_session_kib']:>12.1f} "
              f"{_num(r['rss_after_close_kib'], '{}'):>12}")
    _print_goals(doc, p, tname)
    p(RULE)


def _print_pairs(doc, p, tname):
    rows = []
    for pr in doc["pairs"]:
        if pr["kind"] == "initiator":
            name = f"idm-initiator / iscsi-perf ({tname(pr['a']['target'])})"
        else:  # target, threads, engine: two targets, one initiator
            name = (f"{tname(pr['a']['target'])} / "
                    f"{tname(pr['b']['target'])} ({pr['a']['initiator']})")
        if not pr["like_for_like"]:
            name += " *"
        rows.append((name, pr))
    nw = max([46] + [len(name) for name, _ in rows])
    p(RULE)
    p(f" {'pair (A / B)':<{nw}} {'workload':<22} {'IOPS':>7} "
      f"{'CPU/IO':>7} {'sys/IO':>7}")
    for name, pr in rows:
        p(f" {name:<{nw}} {pr['workload']:<22} {_x(pr['iops_ratio']):>7} "
          f"{_x(pr['cpu_us_per_io_ratio']):>7} "
          f"{_x(pr['syscalls_per_io_ratio']):>7}")
    if any(not pr["like_for_like"] for pr in doc["pairs"]):
        p(" * not like for like: libiscsi has header digests only")


def _print_goals(doc, p, tname):
    """One block of goals per idm-target cell (reports from before
    --engines have one, its goals naming no target)."""
    quick = doc["config"].get("quick")
    blocks = {}
    for g in doc["reach"]:
        blocks.setdefault(g.get("target", "idm-target"), []).append(g)
    for target, goals in blocks.items():
        head = f"goal ({tname(target)}, idm-initiator)"
        gw = max(40, len(head))
        p(RULE)
        p(f" {head:<{gw}} {'measured':>10} {'want':>8}  result")
        for g in goals:
            v, met, note = g["measured"], g["met"], g.get("note")
            if quick and met is not None:
                # a quick report written before quick passes gave no
                # verdict
                v, met, note = None, None, QUICK_NOTE
            res = {True: "met", False: "MISSED", None: "not measured"}[met]
            if note:
                res = note if met is None else f"{res} ({note})"
            p(f" {g['goal']:<{gw}} {_num(v):>10} {g['want']:>8}  {res}")


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
    if not any(is_idm(c["target"]) and c["initiator"] == ME[1] and c["ok"]
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
