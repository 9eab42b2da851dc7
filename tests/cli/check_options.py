#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Every long option of a program is documented (suite 'cli'): each name in
the program's getopt_long() table (its `struct option ...[] = {...}` in
SOURCE) must appear as --NAME in the output of PROGRAM --help and in every
DOC given (its man page source, the markdown page that quotes its help).
An option added to the table without a --help line or a man page entry
fails here, by name.
Usage: check_options.py PROGRAM SOURCE DOC..."""
import os
import re
import subprocess
import sys

# a getopt_long() table, or the examples' option table it is made from
# (examples/common/ex_opts.h), whose shared rows are EX_OPT_NAME macros
TABLE = re.compile(r"struct (?:option|ex_opt)\s+\w+\s*\[\s*\]\s*=\s*\{(.*?)\n\s*\};",
                   re.S)
ENTRY = re.compile(r'\{\s*"([^"]+)"\s*,|\b(EX_OPT_[A-Z_]+)\b')
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)
ROW_MACRO = re.compile(r'^#define (EX_OPT_[A-Z_]+)\b[^\n]*(?:\\\n[^\n]*)*?\{\s*"([^"]+)"',
                       re.M)


def row_macros(source, text):
    """The option name of each EX_OPT_NAME row macro of the headers that
    SOURCE includes (found beside it or in ../common)."""
    here = os.path.dirname(os.path.abspath(source))
    macros = {}
    for h in INCLUDE.findall(text):
        for d in (here, os.path.join(here, "..", "common")):
            if os.path.exists(os.path.join(d, h)):
                with open(os.path.join(d, h), encoding="utf-8") as f:
                    macros.update(ROW_MACRO.findall(f.read()))
                break
    return macros


def long_options(source):
    with open(source, encoding="utf-8") as f:
        text = f.read()
    tables = TABLE.findall(text)
    if len(tables) != 1:
        raise SystemExit(f"error: want one getopt_long() option table in {source}, "
                         f"found {len(tables)}")
    macros = row_macros(source, text)
    names = [name or macros[m] for name, m in ENTRY.findall(tables[0])
             if name or m in macros]
    # a table this test cannot read must not pass as an empty one
    if "help" not in names or len(names) < 3:
        raise SystemExit(f"error: cannot read the option table of {source}: {names}")
    return names


def mentions(text, name):
    return re.search(r"--" + re.escape(name) + r"(?![A-Za-z0-9-])", text) is not None


def main():
    prog, source, docs = sys.argv[1], sys.argv[2], sys.argv[3:]
    names = long_options(source)
    r = subprocess.run([os.path.abspath(prog), "--help"], capture_output=True, text=True,
                       timeout=30)
    if r.returncode != 0:
        sys.stdout.write(r.stdout + r.stderr)
        raise SystemExit(f"error: {prog} --help exited {r.returncode}")
    texts = [(f"{os.path.basename(prog)} --help", r.stdout)]
    for d in docs:
        with open(d, encoding="utf-8") as f:
            texts.append((os.path.relpath(d, os.path.dirname(os.path.dirname(
                os.path.dirname(os.path.abspath(__file__))))), f.read()))
    missing = [(where, n) for where, text in texts for n in names if not mentions(text, n)]
    for where, n in missing:
        print(f"FAIL: --{n} (in the option table of {os.path.basename(source)}) "
              f"is missing from {where}")
    if missing:
        return 1
    print(f"ok: {len(names)} long options of {os.path.basename(prog)}, each in "
          + ", ".join(w for w, _ in texts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
