#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""After a guest fault: which meson tests ended, which was running, which
never started; rewrite the boot's testlog so that it counts each test once.

Usage: recover.py --build DIR --record DIR --log TESTLOG.json --fault TEXT
                  [--rerun-running] [--final] [--running-file FILE]
                  (--suite S | --tests A,B,...)

--record is the directory tests/rdma-vm/test-record filled in the guest
(one NNN.cmd per test started, NNN.rc once it ended); --suite or --tests is
what that boot's meson was told to run. meson's testlog.json is buffered
and dies with the guest, so it is rebuilt: each test that ended keeps
meson's own record when that survived whole, else gets one made from its
exit status (0 OK, 77 SKIP, else FAIL; the record says so). The test(s)
that were running when the guest stopped:
  --rerun-running   (the guest's kernel log shows a panic/Oops: the guest's
                    own fault) are left out of the log and rerun;
  otherwise         they get an ERROR record naming the fault (a guard stop
                    may be our test hanging; never rerun).
Tests that never started are printed on stdout, one per line, to run in a
fresh guest; with --final (no boot left) they get an ERROR record instead.
The old log is kept beside as TESTLOG.json.dead (not counted: it does not
end in .json). A one-line account goes to stderr.
"""
import argparse
import json
import os
import subprocess
import sys


def introspect(build):
    out = subprocess.run(["meson", "introspect", "--tests", build], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def in_suite(test, suite):
    return any(s == suite or s.endswith(":" + suite) for s in test.get("suite", []))


def read_nul(path):
    try:
        with open(path, "rb") as f:
            return [p.decode("utf-8", "surrogateescape") for p in f.read().split(b"\0") if p]
    except OSError:
        return None


def name_of(cmd, env, tests, wanted):
    """The test whose command and environment these are. Tests that share a
    command (test_domain, test_domain_iser) differ in what they set: a
    candidate fits when every variable it sets has its value in the
    environment test-record saw; of those, the one setting the most, and one
    this boot was told to run before any other."""
    kv = dict(e.partition("=")[::2] for e in env or [])
    best = None
    for t in tests:
        if t["cmd"] != cmd:
            continue
        mine = t.get("env", {})
        if env is not None and any(kv.get(k) != v for k, v in mine.items()):
            continue
        score = (t["name"] in wanted, len(mine))
        if best is None or score > best[0]:
            best = (score, t["name"])
    return best[1] if best else None


def records(record_dir, tests, wanted):
    """{name: exit status or None (still running)} of every test started."""
    seen = {}
    for f in sorted(os.listdir(record_dir)):
        if not f.endswith(".cmd"):
            continue
        base = os.path.join(record_dir, f[:-4])
        name = name_of(read_nul(base + ".cmd"), read_nul(base + ".env"), tests, set(wanted))
        if name is None:
            print(f"recover: {f}: a command no test of this build has", file=sys.stderr)
            continue
        try:
            with open(base + ".rc") as r:
                seen[name] = int(r.read().strip())
        except (OSError, ValueError):
            seen[name] = None
    return seen


def meson_records(path):
    got = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue  # the torn last line
                got[rec.get("name")] = rec
    except OSError:
        pass
    return got


def made(name, result, why):
    return {"name": name, "result": result, "stdout": why, "stderr": "",
            "returncode": None, "duration": 0, "command": [], "env": {}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--record", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--fault", required=True)
    ap.add_argument("--rerun-running", action="store_true")
    ap.add_argument("--final", action="store_true")
    ap.add_argument("--suite")
    ap.add_argument("--tests")
    ap.add_argument("--running-file", help="write the names of the tests running then here")
    a = ap.parse_args()

    tests = introspect(a.build)
    if a.tests is not None:
        wanted = [n for n in a.tests.split(",") if n]
    else:
        wanted = [t["name"] for t in tests if in_suite(t, a.suite)]
    seen = records(a.record, tests, wanted)
    kept = meson_records(a.log)

    out, running, rerun = [], [], []
    for name in wanted:
        if name in seen and seen[name] is None and name in kept:
            seen[name] = kept[name].get("returncode") or 0  # meson saw it end
        if name in seen and seen[name] is not None:
            rc = seen[name]
            rec = kept.get(name)
            if rec is None:
                res = "OK" if rc == 0 else "SKIP" if rc == 77 else "FAIL"
                rec = made(name, res, f"(record made from the test's exit status {rc}: "
                                      f"meson's log of it was lost with the guest: {a.fault})")
            out.append(rec)
        elif name in seen:
            running.append(name)
            if a.rerun_running and not a.final:
                rerun.append(name)
            else:
                out.append(made(name, "ERROR", f"the guest stopped while this test ran: {a.fault}"
                                               + ("" if a.rerun_running else " (not rerun: the guest's"
                                                  " kernel log shows no fault of its own)")))
        elif a.final:
            out.append(made(name, "ERROR", f"not run: the guest stopped before it: {a.fault}"))
        else:
            rerun.append(name)
    if os.path.exists(a.log):
        os.replace(a.log, a.log + ".dead")
    with open(a.log, "w", encoding="utf-8") as f:
        for rec in out:
            f.write(json.dumps(rec) + "\n")
    if a.running_file:
        with open(a.running_file, "a", encoding="utf-8") as f:
            for n in running:
                f.write(n + "\n")
    ended = sum(1 for n in wanted if seen.get(n) is not None)
    print(f"recover: {a.fault}; running then: {', '.join(running) or 'none'}; "
          f"{ended} of {len(wanted)} tests ended before it"
          + (f", {len(rerun)} to run in a fresh guest" if rerun else ""), file=sys.stderr)
    for n in rerun:
        print(n)


if __name__ == "__main__":
    main()
