#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Add up meson test results for .ci/run.

Usage: summarize.py [--extra NAME=RESULT ...] [--guest PATH ...]
                    [--faults FILE ...] PATH...

Each PATH is a meson testlog.json file or a directory searched recursively
for meson-logs/testlog*.json. Each line of such a file is one test's JSON
record; its "result" decides the bucket:
  OK, EXPECTEDFAIL                      -> passed
  SKIP                                  -> skipped (but see below)
  FAIL, TIMEOUT, ERROR, UNEXPECTEDPASS  -> failed (anything unknown too)
A PATH given plainly is a host run's log. On the host the only acceptable
skip is a test that needs an RDMA device ("no RDMA device", "needs an RDMA
device") or the two-guest rig: the guest steps run those. Any other skip
there (a missing package, a tool not found) means CI could have run the
test and did not: it counts as failed. The reason is the test's
last output line with "SKIP" in it (tests print "SKIP: why" before exit
77). A log given with --guest is a guest step's, where a skip stays a skip.
Every skip is listed with its reason.
--extra reports a step that ran outside meson (a build, the main job),
RESULT one of pass/fail/skip. Only a failed step is counted (as failed), so
the passed and skipped numbers are meson's own, and a build that broke
before any test could run still shows as a failure.

--faults names a guest step's list of guest faults (tests/rdma-vm/
fault-lib.sh), one per line, "recovered|unrecovered<TAB>what": a guest that
panicked, was stopped by its guard or lost its QEMU. They are printed apart
from the tests, each by name, and counted on the last line. A fault is not
a test result: a recovered one (the tests it had not completed ran in a
fresh guest) does not fail the run, since the guest kernel is not our
product; an unrecovered one fails it through its tests, which the guest
step records as ERROR (the one running then, those never run).

Prints a per-log breakdown, every skipped test with its reason, the failed
test names, and then, as the very last line, "N passed, N failed, N
skipped" (followed by ", N guest fault(s) (M recovered)" when there were
any). Exit status: 1 if anything failed or nothing ran at all, else 0.
"""
import json
import os
import re
import sys

PASSED = {"OK", "EXPECTEDFAIL"}
SKIPPED = {"SKIP"}
# Host skips that are expected: the test runs in a guest step instead
# (suite rdma in the soft-RoCE guest, suite rdma-pair in the two-guest rig).
GUEST_ONLY = re.compile(r"no RDMA device|needs an RDMA device|two-guest rig")


def skip_reason(rec):
    """The last output line of a skipped test that mentions SKIP."""
    text = (rec.get("stdout") or "") + "\n" + (rec.get("stderr") or "")
    lines = [l.strip() for l in text.splitlines() if "SKIP" in l]
    return lines[-1] if lines else "(no SKIP line: the test did not say why)"


def find_logs(path):
    if os.path.isfile(path):
        return [path]
    found = []
    for root, _dirs, files in os.walk(path):
        for f in files:
            if f.startswith("testlog") and f.endswith(".json"):
                found.append(os.path.join(root, f))
    return sorted(found)


def count_log(path, failed_names, host=True):
    counts = [0, 0, 0]  # passed, failed, skipped
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                # A torn log means a run died: count that as a failure.
                counts[1] += 1
                failed_names.append(f"{path}:{lineno}: unreadable record")
                continue
            result = str(rec.get("result", "")).upper()
            if result in PASSED:
                counts[0] += 1
            elif result in SKIPPED:
                name, why = rec.get("name", "?"), skip_reason(rec)
                if host and not GUEST_ONLY.search(why):
                    counts[1] += 1
                    failed_names.append(f"{name} [SKIP on the host: {why}] ({path})")
                    print(f"summary: skipped on the host, counted as failed: {name}: {why}")
                else:
                    counts[2] += 1
                    print(f"summary: skipped: {name}: {why}")
            else:
                counts[1] += 1
                failed_names.append(f"{rec.get('name', '?')} [{result}] ({path})")
    return counts


def print_tail(name, path, lines=30):
    """The last lines a failed step printed: where it stopped and why."""
    try:
        with open(path, errors="replace") as f:
            tail = f.read().splitlines()[-lines:]
    except OSError as e:
        tail = [f"(no output: {e})"]
    print(f"summary: {name} failed; the end of its output:")
    for line in tail:
        print(f"summary: {name}| {line.rstrip()[:300]}")


def main(argv):
    extras = []
    whys = []  # NAME=FILE: the output of a failed step
    paths = []  # (path, host)
    faults = []  # (recovered?, what)
    it = iter(argv)
    for a in it:
        if a == "--extra":
            extras.append(next(it, ""))
        elif a.startswith("--extra="):
            extras.append(a[len("--extra="):])
        elif a == "--why":
            whys.append(next(it, ""))
        elif a == "--faults" or a.startswith("--faults="):
            f = next(it, "") if a == "--faults" else a[len("--faults="):]
            try:
                with open(f, encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        st, _, what = line.rstrip("\n").partition("\t")
                        if what:
                            faults.append((st == "recovered", what))
            except OSError:
                pass
        elif a == "--guest":
            paths.append((next(it, ""), False))
        elif a.startswith("--guest="):
            paths.append((a[len("--guest="):], False))
        else:
            paths.append((a, True))

    total = [0, 0, 0]
    failed_names = []
    for p, host in paths:
        logs = find_logs(p)
        if not logs:
            print(f"summary: no meson test log under {p}")
        for log in logs:
            c = count_log(log, failed_names, host)
            print(f"summary: {log}: {c[0]} passed, {c[1]} failed, {c[2]} skipped")
            total = [a + b for a, b in zip(total, c)]
    for e in extras:
        name, _, res = e.partition("=")
        res = res.strip().lower()
        if res in ("pass", "skip"):
            pass
        else:
            total[1] += 1
            failed_names.append(f"{name} [step failed]")
        print(f"summary: step {name}: {res}")
    for w in whys:
        print_tail(*w.partition("=")[::2])
    for n in failed_names:
        print(f"summary: FAILED {n}")
    for rec, what in faults:
        print(f"summary: GUEST FAULT ({'recovered' if rec else 'not recovered'}): {what}")
    tail = ""
    if faults:
        tail = (f", {len(faults)} guest fault{'s' if len(faults) > 1 else ''}"
                f" ({sum(1 for r, _ in faults if r)} recovered)")
    print(f"{total[0]} passed, {total[1]} failed, {total[2]} skipped{tail}")
    return 1 if total[1] or (total[0] + total[2] == 0) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
