#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""ABI hygiene (g): libidm's public headers stay in the idm_/IDM_ namespace
and can be included beside an existing iSCSI stack's own definitions.

Usage: check_namespace.py INCLUDE_DIR KERNEL_NAMES_H HEADER... \
           -- CC [ARGS...] -- CXX [ARGS...]

1. Every macro the headers define, and every function, variable, type
   name, struct/union/enum tag and enum constant they declare at file
   scope, starts with idm_ or IDM_ (include guards: LIBIDM_). Macros come
   from `CC -E -dM`; declarations from clang's JSON AST dump (`-Xclang
   -ast-dump=json`), each set minus what a translation unit including only
   the same system headers yields.
2. The headers compile, in C11 and C++11 with -Werror, together with
   libiscsi's public headers (<iscsi/iscsi.h>, <iscsi/scsi-lowlevel.h>),
   and together with KERNEL_NAMES_H (the Linux kernel's ISCSI_OP_* /
   ISCSI_FLAG_* names as macros), in both orders.

Part 1 needs clang (for the AST dump), part 2 libiscsi-dev and a C++
compiler. What is present is checked; if something failed the run fails,
else if one of them was missing it exits 77 naming it.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

OK_NAME = re.compile(r"^(idm_|IDM_|LIBIDM_)")
STRICT = {
    "c": ["-x", "c", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"],
    "c++": ["-x", "c++", "-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic"],
}
LIBISCSI = ["iscsi/iscsi.h", "iscsi/scsi-lowlevel.h"]


def run(cmd, src, tmp, lang="c", extra=()):
    tu = os.path.join(tmp, "tu.c" if lang == "c" else "tu.cc")
    with open(tu, "w", encoding="utf-8") as fh:
        fh.write(src)
    r = subprocess.run(list(cmd) + list(extra) + [tu], capture_output=True, text=True)
    return r


def includes(headers):
    return "".join(f"#include <libidm/{os.path.basename(h)}>\n" for h in headers)


def system_includes(incdir, headers):
    """The non-libidm headers the public headers include."""
    out = set()
    for h in headers:
        with open(os.path.join(incdir, "libidm", os.path.basename(h)), encoding="utf-8") as fh:
            for line in fh:
                m = re.match(r"\s*#\s*include\s*<([^>]+)>", line)
                if m and not m.group(1).startswith("libidm/"):
                    out.add(m.group(1))
    return "".join(f"#include <{s}>\n" for s in sorted(out))


def macros(cc, incdir, src, tmp):
    r = run(cc + ["-E", "-dM", "-std=c11", "-I", incdir, "-x", "c"], src, tmp)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return {line.split()[1].split("(")[0] for line in r.stdout.splitlines()
            if line.startswith("#define ")}


def ast_names(clang, incdir, src, tmp):
    r = run([clang, "-std=c11", "-fsyntax-only", "-Xclang", "-ast-dump=json",
             "-I", incdir, "-x", "c"], src, tmp)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    names = set()
    for d in json.loads(r.stdout).get("inner", []):
        if d.get("isImplicit"):
            continue
        if d.get("name"):
            names.add((d["kind"], d["name"]))
        if d.get("kind") == "EnumDecl":
            for c in d.get("inner", []):
                if c.get("kind") == "EnumConstantDecl":
                    names.add((c["kind"], c["name"]))
    return names


def check_names(cc, clang, incdir, headers, tmp):
    fails = []
    ours = includes(headers)
    base = system_includes(incdir, headers)
    new_macros = macros(cc, incdir, base + ours, tmp) - macros(cc, incdir, base, tmp)
    bad = sorted(m for m in new_macros if not OK_NAME.match(m))
    print(f"macros defined by the public headers: {len(new_macros)}, outside the namespace: {len(bad)}")
    fails += [f"macro {m}" for m in bad]
    if clang:
        decls = ast_names(clang, incdir, base + ours, tmp) - ast_names(clang, incdir, base, tmp)
        bad = sorted(f"{k} {n}" for k, n in decls if not OK_NAME.match(n))
        print(f"file-scope names declared by the public headers: {len(decls)}, outside the namespace: {len(bad)}")
        fails += bad
    else:
        print("note: no clang, file-scope declarations not listed (macros were)")
    return fails


def check_beside(compilers, incdir, headers, kernel_h, have_libiscsi, tmp):
    fails = []
    ours = includes(headers)
    theirs = {"Linux iscsi_proto.h names": f'#include "{kernel_h}"\n'}
    if have_libiscsi:
        theirs["libiscsi"] = "".join(f"#include <{h}>\n" for h in LIBISCSI)
    # Use one name of each side, so that the test also shows both work.
    body = ("\nint use_both(const unsigned char *bhs);\n"
            "int use_both(const unsigned char *bhs)\n{\n"
            "\treturn idm_iscsi_bhs_opcode(bhs) == IDM_ISCSI_OP_SCSI_CMD ? %s : 0;\n}\n")
    use = {"Linux iscsi_proto.h names": "ISCSI_OP_SCSI_CMD",
           "libiscsi": "(int)ISCSI_TM_ABORT_TASK"}
    for lang, cmd in compilers.items():
        if not cmd:
            print(f"note: no {lang} compiler, {lang} not checked")
            continue
        for what, inc in theirs.items():
            for order, src in (("theirs first", inc + ours), ("libidm first", ours + inc)):
                r = run(cmd + STRICT[lang] + ["-I", incdir, "-c", "-o", os.path.join(tmp, "o.o")],
                        src + body % use[what], tmp, lang)
                status = "ok" if r.returncode == 0 else "FAIL"
                print(f"{status}: {lang}, libidm headers with {what}, {order}")
                if r.returncode != 0:
                    sys.stdout.write(r.stdout + r.stderr)
                    fails.append(f"{lang} with {what}, {order}")
    return fails


def main():
    argv = sys.argv[1:]
    if argv.count("--") != 2:
        print(__doc__)
        return 2
    a = argv.index("--")
    b = argv.index("--", a + 1)
    incdir, kernel_h, *headers = argv[:a]
    cc = argv[a + 1:b]
    cxx = argv[b + 1:]
    if not cxx or not cxx[0] or shutil.which(cxx[0]) is None:
        cxx = None
    clang = shutil.which("clang")
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        fails += check_names(cc, clang, incdir, headers, tmp)
        probe = run(cc + ["-fsyntax-only", "-x", "c"], "#include <iscsi/iscsi.h>\n", tmp)
        have_libiscsi = probe.returncode == 0
        if not have_libiscsi:
            print("note: libiscsi's headers are absent (Debian libiscsi-dev), not checked beside them")
        fails += check_beside({"c": cc, "c++": cxx}, incdir, headers,
                              os.path.abspath(kernel_h), have_libiscsi, tmp)
        missing = [what for what, have in (("clang", clang), ("libiscsi-dev", have_libiscsi),
                                           ("a C++ compiler", cxx)) if not have]
    for f in fails:
        print(f"FAIL: {f}")
    if fails:
        return 1
    if missing:
        print(f"SKIP: checked what could be, but {', '.join(missing)} absent")
        return 77
    print("public headers: every name in idm_/IDM_, and they compile beside the others")
    return 0


if __name__ == "__main__":
    sys.exit(main())
