#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""bench/benchlib/report.py without running anything (test bench-report):
a quick pass (bench/run --quick) gives the goals no verdict and prints them
"not measured (quick pass)", never MISSED; a full run with the same numbers
keeps its verdicts; a quick report that judged a goal fails --check; a
quick report saved before quick passes stopped judging prints no verdict
(bench/run --from-json). With one idm-target per engine (--engines):
pairs uring/epoll, the goals judged per engine with "nothing slower than
epoll" on uring, and a uring cell that ran epoll marked and not judged."""
import copy
import io
import os
import re
import sys

sys.dont_write_bytecode = True  # leave the source tree as it was
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import report  # noqa: E402

failures = []


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
        if detail:
            print("     " + detail.strip().replace("\n", "\n     "))


def run(workload, iops, cpu=5.0, recv=1.0, sys_io=3.0, target="idm-target"):
    return {"workload": workload, "target": target, "initiator": "idm-initiator",
            "digests": "none", "iops": iops, "ios": iops, "cpu_us_per_io": cpu,
            "recv_per_io": recv, "syscalls_per_io": sys_io, "lun_io_per_io": 0.0}


# The numbers of a one-second pass on a busy machine: write/read 0.53, a
# goal a full run would miss.
RUNS = [run("4k-randread-qd32", 100000.0), run("4k-randwrite-qd32", 53000.0),
        run("1m-randread-qd4-dig", 2000.0), run("4k-randread-4x16", 200000.0)]
RSS = [{"target": "idm-target", "sessions": 100, "rss_before_kib": 1000,
        "rss_held_kib": 1800, "per_session_kib": 8.0, "rss_after_close_kib": 1000}]


def doc_for(quick, runs=RUNS, rss=RSS, engines=None):
    cells = report.summarize(runs, [r["workload"] for r in runs])
    return {"schema": "libidm-bench/1", "date": "2026-11-27 12:00 UTC",
            "machine": {"cpu_model": "test CPU", "cpus_online": 2, "kernel": "6.1",
                        "load_avg_start": [0.0, 0.0, 0.0], "libidm": "libidm 1.2.0",
                        "libidm_git": "0", "buildtype": "debugoptimized",
                        "compiler": "gcc", "tgt": None, "libiscsi": None},
            "config": {"reps": 1, "duration_s": 1.0, "quick": quick, "backing": {},
                       "syscall_method": None, "syscall_note": None,
                       **({"engines": engines} if engines is not None else {})},
            "skipped": [], "runs": runs, "cells": cells,
            "pairs": report.pairs(cells), "rss": rss,
            "reach": report.reach(cells, rss, quick=quick, engines=engines)}


def table(doc):
    out = io.StringIO()
    report.print_table(doc, out)
    return out.getvalue()


quick, full = doc_for(True), doc_for(False)
wr = "4k QD32 write/read IOPS"

g = next(g for g in quick["reach"] if g["goal"] == wr)
check(g["met"] is None and g["measured"] is None and g["note"] == report.QUICK_NOTE,
      "quick pass: the write/read goal has no verdict and no value", str(g))
check(all(g["met"] is None for g in quick["reach"]), "quick pass: no goal judged",
      str(quick["reach"]))
text = table(quick)
check("MISSED" not in text and not re.search(r"  met\b", text),
      "quick pass: the table has no verdict", text)
check(text.count("not measured (quick pass)") >= 3,
      "quick pass: the goals read 'not measured (quick pass)'", text)
check(report.check(quick) == [], "quick pass: --check is happy",
      str(report.check(quick)))

g = next(g for g in full["reach"] if g["goal"] == wr)
check(g["met"] is False and abs(g["measured"] - 0.53) < 1e-9,
      "full run: the same numbers miss the write/read goal", str(g))
check(any(g["met"] is True for g in full["reach"]), "full run: a goal met is met",
      str(full["reach"]))
text = table(full)
check("MISSED" in text and "not measured (quick pass)" not in text,
      "full run: the table keeps its verdicts", text)
check(report.check(full) == [], "full run: --check is happy", str(report.check(full)))

# a quick report from before: verdicts in its JSON
old = copy.deepcopy(quick)
old["reach"] = copy.deepcopy(full["reach"])
text = table(old)
check("MISSED" not in text and "not measured (quick pass)" in text,
      "an older quick report: printed without verdicts", text)
check(any("judged in a quick pass" in p for p in report.check(old)),
      "an older quick report: --check says a quick pass judged a goal",
      str(report.check(old)))

# --engines: one idm-target per engine, uring slower on the writes only
EPOLL, URING = "idm-target/epoll", "idm-target/uring"
ENG_RUNS = [run(w, iops, target=t) for w, iops in
            (("4k-randread-qd32", 100000.0), ("4k-randwrite-qd32", 96000.0))
            for t in (EPOLL, URING)]
ENG_RUNS[3]["iops"] = 90000.0  # uring 4k-randwrite-qd32: 0.9375x epoll
ENG_RSS = [dict(RSS[0], target=t) for t in (EPOLL, URING)]
ENGINES = {EPOLL: {"engine": "epoll", "threads": None, "ran": "epoll",
                   "fallback": None},
           URING: {"engine": "uring", "threads": None, "ran": "uring",
                   "fallback": None}}
eng = doc_for(False, ENG_RUNS, ENG_RSS, ENGINES)
ep = [p for p in eng["pairs"] if p["kind"] == "engine"]
check(len(ep) == 2 and all((p["a"]["target"], p["b"]["target"]) == (URING, EPOLL)
                           for p in ep),
      "engines: a uring/epoll pair per workload", str(ep))
check({g.get("target") for g in eng["reach"]} == {EPOLL, URING},
      "engines: the goals judged on each engine", str(eng["reach"]))
g = next(g for g in eng["reach"] if g["goal"] == wr and g["target"] == EPOLL)
check(g["met"] is True and abs(g["measured"] - 0.96) < 1e-9,
      "engines: epoll's own write/read verdict", str(g))
slower = [g for g in eng["reach"] if g["goal"].startswith("nothing slower")]
check(len(slower) == 1 and slower[0]["target"] == URING and slower[0]["met"] is False
      and abs(slower[0]["measured"] - 0.9375) < 1e-9
      and "4k-randwrite-qd32" in slower[0]["note"],
      "engines: uring 0.94x epoll on one workload misses 'nothing slower'",
      str(slower))
text = table(eng)
check(f"goal ({EPOLL}, idm-initiator)" in text and f"goal ({URING}, idm-initiator)"
      in text and f"{URING} / {EPOLL} (idm-initiator)" in text,
      "engines: the table has a goals block per engine and the uring/epoll pair",
      text)
check(report.check(eng) == [], "engines: --check is happy", str(report.check(eng)))

# a uring cell whose provider fell back to epoll: marked, not judged
fell = copy.deepcopy(ENGINES)
fell[URING].update(ran="epoll", fallback="idm-target: tcp: io_uring engine "
                   "unavailable, using epoll: built without liburing")
fb = doc_for(False, ENG_RUNS, ENG_RSS, fell)
check(all(g["met"] is None and g["measured"] is None
          for g in fb["reach"] if g["target"] == URING),
      "fallback: no verdict on the uring cell that ran epoll", str(fb["reach"]))
text = table(fb)
check(f"{URING}!" in text and "asked for io_uring and ran epoll" in text
      and "(RAN epoll)" in text,
      "fallback: the table says the uring cell ran epoll", text)
check(report.check(fb) == [], "fallback: --check is happy", str(report.check(fb)))

# a report from before --engines: goals without a target print as one block
old = copy.deepcopy(full)
for g in old["reach"]:
    g.pop("target", None)
text = table(old)
check(text.count("goal (idm-target, idm-initiator)") == 1 and "MISSED" in text,
      "an older report: one goals block, verdicts kept", text)

# the QD32 syscall goal counts the whole target, as worded, and names
# the transport's own share when a file LUN took a pread/pwrite per I/O
def lun_run(workload, sys_io, lun):
    r = run(workload, 100000.0, sys_io=sys_io)
    r["lun_io_per_io"] = lun
    return r


sc = doc_for(False, [lun_run("4k-randread-qd32", 1.1, 1.0),
                     lun_run("4k-randwrite-qd32", 1.2, 1.0)])
g = next(g for g in sc["reach"] if g["goal"].startswith("syscalls per I/O, 4k QD32"))
check(g["met"] is False and abs(g["measured"] - 1.2) < 1e-9
      and g.get("note") == "transport alone: 0.10 read, 0.20 write",
      "QD32 syscalls: the worse of read and write, the transport's share noted",
      str(g))
sc = doc_for(False, [lun_run("4k-randread-qd32", 0.1, 0.0),
                     lun_run("4k-randwrite-qd32", 0.15, 0.0)])
g = next(g for g in sc["reach"] if g["goal"].startswith("syscalls per I/O, 4k QD32"))
check(g["met"] is True and "note" not in g,
      "QD32 syscalls: a RAM LUN's 0.15 is met, nothing to note", str(g))

# digests: at least 0.9x of digests off
for dig, met in ((1850.0, True), (1750.0, False)):
    d = doc_for(False, [run("1m-randread-qd4", 2000.0),
                        run("1m-randread-qd4-dig", dig)])
    g = next(g for g in d["reach"] if g["goal"] == "1m read IOPS digests on/off")
    check(g["met"] is met and g["want"] == ">= 0.9x",
          f"digests: {dig / 2000:.3f}x is {'met' if met else 'missed'}", str(g))

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("PASS")
