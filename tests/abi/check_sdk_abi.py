#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The provider SDK's ABI (suite abi, test abi-provider-sdk): compare the
SDK as it is built with the committed baseline for its IDM_PROV_ABI.

An out-of-tree provider is compiled against <libidm/provider.h> and
<libidm/provider_util.h> and loaded by whatever libidm is installed. The
loader refuses one built for another IDM_PROV_ABI (doc/providers.md, "The
SDK's ABI"), so every change a built provider could notice must come with
a new IDM_PROV_ABI, or an old provider loads and misreads memory. The SDK
probe (gen_sdk_probe.py) reaches every function and type of the two
headers; abidw describes it; tests/abi/libidm-provider-<N>.abi is that
description for ABI N. The test fails when
  - there is no baseline for the IDM_PROV_ABI of provider.h (bumped and
    not recorded, or recorded for another number), or
  - the SDK differs from the baseline in anything abidiff reports (a
    struct layout, a member, a callback type, a service added, removed or
    changed): bump IDM_PROV_ABI, then record the new baseline.

Recording (after a bump; the baseline of the old number goes):
    ninja -C build update-provider-abi-baseline

Usage: check_sdk_abi.py [--update] ABIDW ABIDIFF PROBE BASELINE_DIR ABI
Exits 77 when libabigail's tools are missing.
"""
import glob
import os
import sys

from libabigail import ABI_ERRORS, missing, run


def main():
    argv = sys.argv[1:]
    update = argv[:1] == ["--update"]
    if update:
        argv = argv[1:]
    abidw, abidiff, probe, basedir, abi = argv
    baseline = os.path.join(basedir, f"libidm-provider-{abi}.abi")
    others = sorted(p for p in glob.glob(os.path.join(basedir, "libidm-provider-*.abi"))
                    if p != baseline)
    if missing(abidw if update else abidiff, "abidw" if update else "abidiff"):
        return 77

    if update:
        # --no-show-locs: a comment moved in a header changes no line here
        rc, out = run([abidw, "--no-corpus-path", "--no-comp-dir-path", "--no-show-locs",
                       "--out-file", baseline, probe])
        print(out, end="")
        if rc:
            return 1
        for p in others:
            os.remove(p)
            print(f"removed {p} (another IDM_PROV_ABI)")
        print(f"wrote {baseline}; review `git diff` and commit it with the bump")
        return 0

    if not os.path.exists(baseline):
        print(f"FAIL: IDM_PROV_ABI is {abi} but there is no {os.path.basename(baseline)}"
              + (f" (there is {', '.join(os.path.basename(p) for p in others)})" if others else "")
              + ": after bumping IDM_PROV_ABI, record the SDK with "
              "`ninja -C build update-provider-abi-baseline`")
        return 1
    # --no-unreferenced-symbols: a sanitizer's own symbols (__odr_asan.*)
    # are not the SDK's
    rc, out = run([abidiff, "--no-unreferenced-symbols", baseline, probe])
    print(out, end="")
    if rc == 0:
        print(f"ok: the provider SDK matches {os.path.basename(baseline)}")
        return 0
    if rc & ABI_ERRORS:
        print(f"FAIL: abidiff could not compare (exit {rc})")
        return 1
    print(f"FAIL: the provider SDK changed under IDM_PROV_ABI {abi} (abidiff exit {rc}, "
          "above): a provider built before this change would still load and read the "
          "old layout. Bump IDM_PROV_ABI in include/libidm/provider.h, then run "
          "`ninja -C build update-provider-abi-baseline` and commit both")
    return 1


if __name__ == "__main__":
    sys.exit(main())
