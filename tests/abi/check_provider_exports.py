#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""ABI hygiene (c): every provider module built exports exactly one symbol,
idm_provider_entry_v1, and needs no symbol of libidm outside its two
version nodes.

Usage: check_provider_exports.py READELF DIRS NAMES
  DIRS   colon-separated provider build directories
  NAMES  comma-separated provider names that must be present
"""
import glob
import os
import subprocess
import sys

ENTRY = "idm_provider_entry_v1"


def dyn_syms(readelf, path):
    out = subprocess.run([readelf, "--dyn-syms", "-W", path], check=True,
                         capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 8 or not f[0].rstrip(":").isdigit():
            continue
        bind, ndx, name = f[4], f[6], f[7]
        if bind not in ("GLOBAL", "WEAK"):
            continue
        (undefined if ndx == "UND" else defined).add(name)
    return defined, undefined


def main():
    readelf, dirs, names = sys.argv[1], sys.argv[2], sys.argv[3]
    modules = []
    for d in filter(None, dirs.split(":")):
        modules += sorted(glob.glob(os.path.join(d, "libidm-*.so")))
    errors = []
    found = {os.path.basename(m)[len("libidm-"):-len(".so")] for m in modules}
    for n in filter(None, names.split(",")):
        if n not in found:
            errors.append(f"provider {n} not built (looked in {dirs})")
    for m in modules:
        defined, undefined = dyn_syms(readelf, m)
        extra = sorted(s for s in defined if s.split("@")[0] != ENTRY)
        print(f"{m}: exports {sorted(defined)}")
        if not any(s.split("@")[0] == ENTRY for s in defined):
            errors.append(f"{m}: does not export {ENTRY}")
        if extra:
            errors.append(f"{m}: exports more than {ENTRY}: {', '.join(extra)}")
        # Calls into libidm must go through the versioned nodes.
        for s in sorted(undefined):
            base, _, ver = s.partition("@")
            if base.startswith(("idm_", "idm_prov_")) and ver.lstrip("@") not in (
                    "IDM_1.0", "IDM_PRIVATE_1"):
                errors.append(f"{m}: imports {s} outside IDM_1.0/IDM_PRIVATE_1")
    if not modules:
        errors.append(f"no provider module found in {dirs}")
    for e in errors:
        print("error:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
