#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Programs run from the build tree find the build tree's providers with
no environment variable (suite 'tools'), as under `meson devenv`:
- idm_info, with IDM_PROVIDER_PATH unset, loads tcp from the build tree
  and lists the build's provider directories as "from: build tree";
- with IDM_PROVIDER_PATH set, that alone is searched before the install
  directory (it replaces the build tree's directories, as before);
- idm-target, with IDM_PROVIDER_PATH unset, listens on 127.0.0.1;
- with nothing found (IDM_PROVIDER_PATH naming an empty directory), idm_info
  and idm-initiator name the directories searched and IDM_PROVIDER_PATH.
The installed copy never searching the build tree is checked by
abi-install-pkgconfig (tests/abi/check_install.py), which installs.
Usage: build_tree.py IDM_INFO IDM_TARGET IDM_INITIATOR BUILD_PROVIDER_PATH"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from toolcheck import check, finish

INFO, TARGET, INITIATOR = (os.path.abspath(p) for p in sys.argv[1:4])
BUILD_PATH = sys.argv[4]
BUILD_DIRS = [d for d in BUILD_PATH.split(":") if d]


def clean_env(**extra):
    """The environment of a user who only built: no IDM_* variable."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("IDM_")}
    e.update(extra)
    return e


def run(cmd, env):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=30, env=env,
                       cwd="/")
    return p.returncode, p.stdout, p.stderr


def in_build_tree(path):
    return any(os.path.dirname(path) == d for d in BUILD_DIRS)


# idm_info from the build tree, no IDM_PROVIDER_PATH
rc, out, err = run([INFO, "--json"], clean_env())
check(rc == 0, "idm_info without IDM_PROVIDER_PATH: exit 0", f"rc={rc}\n{err}")
try:
    j = json.loads(out)
except ValueError as e:
    j = {}
    check(False, "idm_info --json parses", f"{e}\n{out}")
provs = {p["name"]: p for p in j.get("providers", [])}
tcp = provs.get("tcp", {})
check(tcp.get("state") == "loaded" and in_build_tree(tcp.get("path", "")),
      "tcp loaded from the build tree", json.dumps(tcp))
search = j.get("search_path", [])
check([d["dir"] for d in search if d["from"] == "build tree"] == BUILD_DIRS
      and search[-1]["from"] == "install directory",
      "search path: the build tree's provider directories, then the install "
      "directory", json.dumps(search))
rc, text, err = run([INFO], clean_env())
check(rc == 0 and "from: build tree" in text and "name: tcp" in text,
      "idm_info text: the build tree in the search path", text + err)

# an explicit IDM_PROVIDER_PATH replaces the build tree's directories
with tempfile.TemporaryDirectory(prefix="idm-build-tree-") as empty:
    rc, out, err = run([INFO, "--json"], clean_env(IDM_PROVIDER_PATH=empty))
    search = json.loads(out).get("search_path", []) if out else []
    check([d["from"] for d in search] == ["IDM_PROVIDER_PATH", "install directory"]
          and search[0]["dir"] == empty,
          "IDM_PROVIDER_PATH set: it replaces the build tree", f"rc={rc}\n{out}{err}")
    install_dir = search[-1]["dir"] if search else ""
    installed = [f for f in (os.listdir(install_dir) if os.path.isdir(install_dir) else [])
                 if f.startswith("libidm-") and f.endswith(".so")]
    if installed:
        print(f"skip the nothing-found checks: providers installed in {install_dir}")
    else:
        check(rc == 1 and f"{empty} (IDM_PROVIDER_PATH)" in err
              and "set IDM_PROVIDER_PATH" in err,
              "nothing found: idm_info names the directories searched and what to set",
              f"rc={rc}\n{err}")
        # idm-initiator reports the library's detail (idm_last_error())
        rc, out, err = run([INITIATOR, "-t", "2", "iscsi://127.0.0.1:1/iqn.x/1"],
                           clean_env(IDM_PROVIDER_PATH=empty))
        check(rc != 0 and empty in err and "set IDM_PROVIDER_PATH" in err,
              "nothing found: idm-initiator names the directories searched and what "
              "to set", f"rc={rc}\n{err}")

# idm-target from the build tree, no IDM_PROVIDER_PATH: it serves
with tempfile.TemporaryDirectory(prefix="idm-build-tree-") as tmp:
    port_file = os.path.join(tmp, "port")
    log = open(os.path.join(tmp, "target.log"), "w+")
    p = subprocess.Popen([TARGET, "--portal", "127.0.0.1:0", "--port-file", port_file,
                          "--lun", "ram:1M", "--log-target", "stderr"],
                         stdout=log, stderr=subprocess.STDOUT, env=clean_env(),
                         cwd="/")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and p.poll() is None and \
            not (os.path.exists(port_file) and os.path.getsize(port_file)):
        time.sleep(0.05)
    listening = os.path.exists(port_file) and os.path.getsize(port_file) > 0
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    log.seek(0)
    check(listening, "idm-target without IDM_PROVIDER_PATH listens on 127.0.0.1",
          log.read())

finish()
