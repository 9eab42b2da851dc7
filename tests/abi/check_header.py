#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""ABI hygiene (b): a public header compiles on its own, as the first and
only include of a translation unit, in strict C or C++.

Usage: check_header.py c|c++ HEADER INCLUDE_DIR -- COMPILER [ARGS...]

HEADER is the name under INCLUDE_DIR ("libidm/idm.h"). Exits 77 when the
C++ compiler is absent.
"""
import os
import shutil
import subprocess
import sys
import tempfile

FLAGS = {
    # What a strict caller builds with; the header must not add warnings.
    "c": ["-x", "c", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic",
          "-Wstrict-prototypes", "-Wmissing-prototypes"],
    "c++": ["-x", "c++", "-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic"],
}


def main():
    argv = sys.argv[1:]
    if "--" not in argv or len(argv) < 5:
        print(__doc__)
        return 2
    sep = argv.index("--")
    lang, header, incdir = argv[:3]
    cc = argv[sep + 1:]
    if not cc or shutil.which(cc[0]) is None:
        print(f"SKIP: no {lang} compiler ({' '.join(cc) or 'none configured'})")
        return 77
    # Include the header twice: the guard must work too.
    src = f"#include <{header}>\n#include <{header}>\n"
    if lang == "c":
        src += "int main(void);\nint main(void) { return 0; }\n"
    else:
        src += "int main() { return 0; }\n"
    with tempfile.TemporaryDirectory() as tmp:
        tu = os.path.join(tmp, "tu.c" if lang == "c" else "tu.cc")
        with open(tu, "w", encoding="utf-8") as fh:
            fh.write(src)
        cmd = cc + FLAGS[lang] + ["-I", incdir, "-c", tu, "-o", os.path.join(tmp, "tu.o")]
        print(" ".join(cmd))
        r = subprocess.run(cmd, capture_output=True, text=True)
        sys.stdout.write(r.stdout + r.stderr)
        if r.returncode != 0:
            print(f"error: {header} does not compile on its own as {lang}")
            return 1
    print(f"{header}: ok as {lang}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
