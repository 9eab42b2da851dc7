#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""ABI hygiene (c): every provider module built exports exactly one symbol,
the entry point of IDM_PROV_ABI (idm_provider_entry_v<n>), and needs no
symbol of libidm outside the public IDM_1.* nodes and the provider SDK's
node IDM_PROV_<n>.

Usage: check_provider_exports.py READELF DIRS NAMES ABI
  DIRS   colon-separated provider build directories
  NAMES  comma-separated provider names that must be present
  ABI    IDM_PROV_ABI (<libidm/provider.h>)
"""
import glob
import os
import subprocess
import sys


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
    readelf, dirs, names, abi = sys.argv[1:5]
    entry, node = f"idm_provider_entry_v{abi}", f"IDM_PROV_{abi}"
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
        extra = sorted(s for s in defined if s.split("@")[0] != entry)
        print(f"{m}: exports {sorted(defined)}")
        if not any(s.split("@")[0] == entry for s in defined):
            errors.append(f"{m}: does not export {entry}")
        if extra:
            errors.append(f"{m}: exports more than {entry}: {', '.join(extra)}")
        # Calls into libidm must go through the versioned nodes.
        for s in sorted(undefined):
            base, _, ver = s.partition("@")
            ver = ver.lstrip("@")
            if base.startswith("idm_") and not (ver == node or ver.startswith("IDM_1.")):
                errors.append(f"{m}: imports {s} outside IDM_1.*/{node}")
    if not modules:
        errors.append(f"no provider module found in {dirs}")
    for e in errors:
        print("error:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
