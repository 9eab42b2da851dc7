# SPDX-License-Identifier: BSD-2-Clause
"""The machine and software a benchmark ran on, for its report."""

import json
import os
import platform
import shutil
import subprocess


def _run(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def _deb_version(pkg):
    if not shutil.which("dpkg-query"):
        return None
    return _run(["dpkg-query", "-W", "-f", "${Version}", pkg]) or None


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _meson_build_info(build_dir):
    info = {}
    try:
        with open(os.path.join(build_dir, "meson-info",
                               "intro-buildoptions.json")) as f:
            opts = {o["name"]: o["value"] for o in json.load(f)}
        info["buildtype"] = opts.get("buildtype")
        info["optimization"] = opts.get("optimization")
        info["b_sanitize"] = opts.get("b_sanitize")
    except (OSError, ValueError, KeyError):
        pass
    # liburing as meson found it: the io_uring engine is built in
    try:
        with open(os.path.join(build_dir, "meson-info",
                               "intro-dependencies.json")) as f:
            info["liburing"] = next((d.get("version") for d in json.load(f)
                                     if d.get("name") == "liburing"), None)
    except (OSError, ValueError, KeyError):
        pass
    # the compiler of the first C target, as `CC --version` names it
    try:
        with open(os.path.join(build_dir, "meson-info",
                               "intro-targets.json")) as f:
            for t in json.load(f):
                srcs = [s for s in t.get("target_sources", [])
                        if s.get("language") == "c" and s.get("compiler")]
                if srcs:
                    ver = _run([srcs[0]["compiler"][0], "--version"])
                    info["compiler"] = ver.splitlines()[0] if ver else None
                    break
    except (OSError, ValueError, KeyError):
        pass
    return info


def describe(build_dir, src_dir, initiator_bin):
    libidm = _run([initiator_bin, "--version"])
    tgt = _deb_version("tgt")
    if tgt is None and shutil.which("tgtd"):
        tgt = _run(["tgtd", "--version"])
    m = {
        "cpu_model": _cpu_model(),
        "cpus_online": os.cpu_count(),
        "kernel": platform.release(),
        "os": _run(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"]),
        "libidm": libidm,
        "libidm_git": _run(["git", "-C", src_dir, "describe", "--always",
                            "--dirty"]),
        "tgt": tgt,
        "libiscsi": _deb_version("libiscsi-bin") or _deb_version("libiscsi7")
        or _run(["pkg-config", "--modversion", "libiscsi"]),
        "perf": _run(["perf", "--version"]) if shutil.which("perf") else None,
        "load_avg_start": list(os.getloadavg()),
    }
    m.update(_meson_build_info(build_dir))
    return m
