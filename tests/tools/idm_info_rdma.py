#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""idm_info where an RDMA device exists (suite 'rdma', run in the soft-RoCE
guest of tests/rdma-vm/): iser is loaded and usable (-p iser exits 0),
and the devices, ports and GIDs libibverbs shows are listed with their
limits and whether type-2 memory windows are supported. Exits 77 without
an RDMA device.
Usage: idm_info_rdma.py PATH/TO/idm_info"""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from toolcheck import check, finish, iser_built, rdma_devices

TOOL = sys.argv[1]

devs = rdma_devices()
if not devs:
    print("SKIP: no RDMA device (runs in the soft-RoCE guest, tests/rdma-vm/)")
    sys.exit(77)
if not iser_built():
    print("SKIP: the iser provider is not built")
    sys.exit(77)

p = subprocess.run([TOOL], capture_output=True, text=True, timeout=120)
print(p.stdout)
check(p.returncode == 0, "text output exits 0", p.stderr)
check("type-2 memory windows:" in p.stdout, "text shows type-2 memory windows")

p = subprocess.run([TOOL, "--json", "-p", "iser"], capture_output=True,
                   text=True, timeout=120)
check(p.returncode == 0, "-p iser exits 0 (usable)", p.stdout + p.stderr)
j = json.loads(p.stdout)
iser = [x for x in j["providers"] if x["name"] == "iser"]
check(iser and iser[0]["state"] == "loaded" and "rdma" in iser[0]["caps"],
      "iser loaded, with the rdma capability", json.dumps(iser))
rd = j.get("rdma", {})
names = [d["name"] for d in rd.get("devices", [])]
check(sorted(names) == sorted(devs), f"devices {names} = /sys/class/infiniband {devs}")
active_gids = []
for d in rd.get("devices", []):
    check(d.get("max_mr", 0) > 0 and d.get("max_sge", 0) > 0
          and d.get("max_mw", -1) >= 0 and isinstance(d.get("mw_type2"), bool),
          f"{d['name']}: MR/MW/SGE limits and the type-2 MW flag",
          json.dumps({k: d.get(k) for k in ("max_mr", "max_mw", "max_sge", "mw_type2")}))
    check(len(d.get("ports", [])) >= 1, f"{d['name']}: ports listed")
    for port in d.get("ports", []):
        if port.get("state") == "active":  # ibv_port_state_str()
            active_gids += [g["gid"] for g in port.get("gids", [])]
check(active_gids, "an active port with GIDs", json.dumps(rd)[:2000])
ip = os.environ.get("IDM_RDMA_IP")
if ip:
    check(f"::ffff:{ip}" in active_gids,
          f"the GID of IDM_RDMA_IP ::ffff:{ip} is listed", str(active_gids))

finish()
