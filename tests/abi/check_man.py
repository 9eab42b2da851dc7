#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Man pages (suite doc): lint every generated page with
`mandoc -Tlint -W warning` (any message fails), then install the build into
a temporary DESTDIR and check that every function declared IDM_API in the
public headers has a page or a link page named after it in man3, whose
NAME line names the function.

Usage: check_man.py MANDOC MESON BUILD_ROOT --headers H... --pages P...
Exits 77 when the pages were not built (no scdoc) or mandoc is missing.
"""
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile


def declared(headers):
    """Function names declared with IDM_API (as check_symbols.py reads them)."""
    names = set()
    for h in headers:
        text = open(h, encoding="utf-8").read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"^\s*#.*$", " ", text, flags=re.M)
        for m in re.finditer(r"\bIDM_API\b([^;{]*?)\b(idm_\w+)\s*\(", text):
            names.add(m.group(2))
    return sorted(names)


def lint(mandoc, pages):
    bad = 0
    for p in pages:
        r = subprocess.run([mandoc, "-Tlint", "-W", "warning", p],
                           capture_output=True, text=True, check=False)
        msg = (r.stdout + r.stderr).strip()
        if r.returncode != 0 or msg:
            print(f"FAIL lint {os.path.basename(p)} (exit {r.returncode}):\n{msg}")
            bad += 1
        else:
            print(f"ok   lint {os.path.basename(p)}")
    return bad


def main():
    argv = sys.argv[1:]
    mandoc, meson, build_root = argv[:3]
    hi, pi = argv.index("--headers"), argv.index("--pages")
    headers, pages = argv[hi + 1:pi], argv[pi + 1:]
    if not pages:
        print("SKIP: the man pages were not built (scdoc not found; "
              "-Dman=enabled makes that a configure error)")
        return 77
    if not mandoc:
        print("SKIP: mandoc not found (Debian package mandoc)")
        return 77
    bad = lint(mandoc, pages)

    funcs = declared(headers)
    if not funcs:
        print("FAIL: no IDM_API function found in " + " ".join(headers))
        return 1
    with tempfile.TemporaryDirectory(prefix="libidm-man-") as dest:
        cmd = meson.split() + ["install", "-C", build_root, "--no-rebuild",
                               "--quiet", "--destdir", dest]
        print("+", " ".join(shlex.quote(c) for c in cmd), flush=True)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                           check=False)
        if r.returncode != 0:
            print(r.stdout + r.stderr)
            print("FAIL: meson install")
            return 1
        installed = {}
        for p in glob.glob(os.path.join(dest, "**", "man[1-9]", "*.[1-9]"),
                       recursive=True):
            installed[os.path.basename(p)] = p
        for p in pages:
            if os.path.basename(p) not in installed:
                print(f"FAIL: {os.path.basename(p)} is not installed")
                bad += 1
        for name, p in sorted(installed.items()):
            if not os.path.exists(p):
                print(f"FAIL: {name} is a dangling link ({os.readlink(p)})")
                bad += 1
        for fn in funcs:
            p = installed.get(fn + ".3")
            if not p or not os.path.exists(p):
                print(f"FAIL: no man page or link page {fn}(3)")
                bad += 1
                continue
            text = open(p, encoding="utf-8").read()
            m = re.search(r"^\.SH NAME\s*\n(?:\.[A-Z]+\s*\n)*(.*)$", text, re.M)
            names = [n.strip().replace("\\", "")
                     for n in (m.group(1).split(" - ")[0].split(",") if m else [])]
            if fn not in names:
                print(f"FAIL: {fn}(3) leads to {os.path.basename(os.path.realpath(p))}, "
                      f"whose NAME line does not name it: {names}")
                bad += 1
                continue
            how = "page" if not os.path.islink(p) else "link to " + os.readlink(p)
            print(f"ok   {fn}(3): {how}")
    print(f"{len(pages)} pages, {len(funcs)} public functions, {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
