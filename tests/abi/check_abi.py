#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""ABI baseline (suite abi): compare the built libidm.so.1 with the
committed baseline tests/abi/libidm.abi using libabigail's abidiff.

Only the types of the public headers (include/libidm) count, and
tests/abi/libidm.abignore leaves out the provider SDK (node IDM_PROV_<n>,
idm_prov_*, versioned by IDM_PROV_ABI and checked by check_sdk_abi.py) and allows the size-guarded structs to grow at
their end. abidiff's exit status is a bit field: 1 error, 2 usage error,
4 ABI change, 8 incompatible ABI change. The test passes when nothing
changed, or when the only changes are added symbols (a new version node
such as IDM_1.1). It fails on a removed symbol, a changed signature or
struct layout, and any other change abidiff reports.

Updating the baseline, after an intended and reviewed change (for a
release that adds symbols, or a new soname):
    ninja -C build update-abi-baseline
which runs `check_abi.py --update` (abidw with the options below) and
rewrites tests/abi/libidm.abi; commit it with the change.

Usage: check_abi.py [--update] ABIDW ABIDIFF READELF BASELINE SUPPRESSIONS HEADERS_DIR LIB
Exits 77 when abidiff is missing or the library has no debug information.
"""
import sys

from libabigail import ABI_ERRORS, ABI_INCOMPATIBLE, missing, run


def main():
    argv = sys.argv[1:]
    update = argv[:1] == ["--update"]
    if update:
        argv = argv[1:]
    abidw, abidiff, readelf, baseline, supp, headers, lib = argv
    if missing(abidw if update else abidiff, "abidw" if update else "abidiff"):
        return 77
    rc, out = run([readelf, "-S", "-W", lib])
    if rc != 0:
        print(out, end="")
        print(f"FAIL: cannot read {lib}")
        return 1
    if ".debug_info" not in out:
        print(f"SKIP: {lib} has no debug information (a release build without -g): "
              "abidiff could only compare symbol names")
        return 77

    if update:
        rc, out = run([abidw, "--headers-dir", headers, "--drop-private-types",
                       "--no-corpus-path", "--no-comp-dir-path",
                       "--suppressions", supp, "--out-file", baseline, lib])
        print(out, end="")
        if rc == 0:
            print(f"wrote {baseline}; review `git diff` and commit it")
        return 1 if rc else 0

    diff = [abidiff, "--headers-dir2", headers, "--drop-private-types",
            "--suppressions", supp, baseline, lib]
    rc, out = run(diff)
    print(out, end="")
    if rc == 0:
        print("ok: the ABI of libidm.so.1 matches tests/abi/libidm.abi")
        return 0
    if rc & ABI_ERRORS:
        print(f"FAIL: abidiff could not compare (exit {rc})")
        return 1
    if rc & ABI_INCOMPATIBLE:
        print(f"FAIL: incompatible ABI change (abidiff exit {rc}, see above)")
        return 1
    # ABI_CHANGE alone: accept it if it is nothing but added symbols.
    rc2, out2 = run(diff[:1] + ["--no-added-syms"] + diff[1:])
    if rc2 == 0:
        print("ok: symbols were added, nothing existing changed "
              "(update the baseline when releasing them)")
        return 0
    print(out2, end="")
    print(f"FAIL: an existing part of the ABI changed (abidiff exit {rc2}); if this is "
          "intended and compatible, update the baseline (see check_abi.py)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
