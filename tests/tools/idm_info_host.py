#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""idm_info on the build host (suite 'tools'): text and JSON agree, every
provider found is described, -p NAME sets the exit status, the usage
errors exit 2. On a host without an RDMA device the iser provider is
reported skipped with the reason "no RDMA device".
With the unit tests' broken fake providers in the path, each one is
listed as skipped with its reason.
Usage: idm_info_host.py PATH/TO/idm_info [FAKES_DIR]"""
import json
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from toolcheck import check, finish, has_rdma, iser_built

TOOL = sys.argv[1]
# The provider ABI, written once in the SDK header.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                       "include", "libidm", "provider.h"), encoding="utf-8") as f:
    ABI = int(re.search(r"^#define IDM_PROV_ABI (\d+)", f.read(), re.M).group(1))
WRONG_ABI = f"ABI {ABI + 1}, libidm needs {ABI}"  # the badabi fake


def run(*args, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run([TOOL, *args], capture_output=True, text=True,
                       timeout=30, env=e)
    return p.returncode, p.stdout, p.stderr


rc, out, err = run("--json", env={"IDM_LOG_LEVEL": "error"})
check(rc == 0, "--json exits 0", err)
try:
    j = json.loads(out)
except ValueError as e:
    j = {}
    check(False, "--json output parses", f"{e}\n{out}")
provs = {p["name"]: p for p in j.get("providers", [])}
check("tcp" in provs and provs["tcp"]["state"] == "loaded",
      "tcp listed as loaded", out)
if "tcp" in provs:
    t = provs["tcp"]
    check(t["abi_version"] == ABI and "initiator" in t["caps"]
          and "target" in t["caps"] and t["path"].endswith("/libidm-tcp.so"),
          "tcp: ABI version, capabilities and path", json.dumps(t))
dirs = [d["dir"] for d in j.get("search_path", [])]
want = [d for d in os.environ.get("IDM_PROVIDER_PATH", "").split(":") if d]
check(dirs[:len(want)] == want and len(dirs) == len(want) + 1,
      "search path: IDM_PROVIDER_PATH then the install directory", str(dirs))
check(j.get("environment", {}).get("IDM_LOG_LEVEL") == "error",
      "IDM_* environment shown", json.dumps(j.get("environment")))
check(isinstance(j.get("rdma", {}).get("devices", None), list)
      or j.get("rdma", {}).get("supported") is False,
      "rdma section present", json.dumps(j.get("rdma")))
check(j.get("libidm_version", "").startswith("1."), "libidm version shown")

rc, text, err = run()
check(rc == 0, "text output exits 0", err)
for name, p in provs.items():
    check(f"name: {name}" in text and f"state: {p['state']}" in text,
          f"text lists {name} as {p['state']}", text)

rc, out, err = run("-p", "tcp")
check(rc == 0 and "name: tcp" in out and "name: iser" not in out,
      "-p tcp: exit 0, only tcp", out + err)
rc, out, err = run("-p", "nosuch")
check(rc == 1 and "provider nosuch cannot be used: no libidm-nosuch.so" in err,
      "-p nosuch: exit 1, says why", f"rc={rc}\n{err}")
rc, out, err = run("-p", "tcp", env={"IDM_PROVIDERS": "iser"})
check(rc == 1 and "not in IDM_PROVIDERS=iser" in err and "state: filtered" in out,
      "-p tcp with IDM_PROVIDERS=iser: exit 1, filtered", f"rc={rc}\n{out}{err}")

if iser_built() and not has_rdma():
    i = provs.get("iser", {})
    check(i.get("state") == "skipped" and i.get("reason") == "no RDMA device"
          and i.get("errno") == 19,
          "no RDMA device: iser skipped, reason \"no RDMA device\"", json.dumps(i))
    rc, out, err = run("-p", "iser")
    check(rc == 1 and "provider iser cannot be used: no RDMA device" in err
          and "reason: no RDMA device" in out,
          "-p iser without an RDMA device: exit 1 with the reason", f"rc={rc}\n{out}{err}")
else:
    print("skip the no-RDMA-device checks: " +
          ("this host has an RDMA device" if has_rdma() else "iser not built"))

rc, out, err = run("--version")
check(rc == 0 and out.startswith("idm_info ") and "libidm " in out,
      "--version", out + err)
rc, out, err = run("--help")
check(rc == 0 and "Usage:" in out and "--json" in out, "--help", out + err)
rc, out, err = run("--bogus")
check(rc == 2 and "Usage:" in err, "unknown option: exit 2", f"rc={rc}")
rc, out, err = run("extra")
check(rc == 2, "stray argument: exit 2", f"rc={rc}")
rc, out, err = run(env={"IDM_PROVIDER_PATH": "/nonexistent", "IDM_PROVIDERS": "none"})
check(rc == 1 and "no usable provider" in err, "no provider at all: exit 1",
      f"rc={rc}\n{err}")

fakes = sys.argv[2] if len(sys.argv) > 2 else ""
if fakes and os.path.isdir(fakes):
    path = ":".join(os.path.join(fakes, v) for v in
                    ("good", "second", "badabi", "noop", "initfail"))
    rc, out, err = run("--json", env={"IDM_PROVIDER_PATH": path,
                                      "IDM_PROVIDERS": "fake,badabi,noop,initfail"})
    got = {(p["name"], p["state"]): p for p in json.loads(out)["providers"]}
    want = {("fake", "loaded"): None,
            ("fake", "shadowed"): "was found first",
            ("badabi", "skipped"): WRONG_ABI,
            ("noop", "skipped"): "mandatory op put_data missing",
            ("initfail", "skipped"): "no fake device here"}
    for k, why in want.items():
        check(k in got and (why is None or why in got[k].get("reason", "")),
              f"fakes: {k[0]} {k[1]}" + (f" ({why})" if why else ""), out)
    rc, out, err = run("-p", "badabi", env={"IDM_PROVIDER_PATH": path})
    check(rc == 1 and WRONG_ABI in err,
          "-p badabi: exit 1, wrong ABI named", f"rc={rc}\n{err}")
else:
    print("skip the fake providers: no FAKES_DIR")

finish()
