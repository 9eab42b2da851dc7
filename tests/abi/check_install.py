#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""ABI hygiene (d): install the build into a temporary DESTDIR, build a
program outside the tree with only `pkg-config --cflags --libs libidm`
against that installed copy, and run it: it must report the project version
load tcp and only providers installed in `pkg-config --variable=providerdir`.
pkg-config gets nothing but PKG_CONFIG_PATH, the staged pkgconfig directory,
as the README tells a user: the .pc files are relocatable (prefix relative
to ${pcfiledir}), so their paths are those of the staged tree.
A provider module builds with only `pkg-config --cflags --libs
libidm-provider` (<libidm/provider.h>) and defines the entry point that the
.pc's provider_entry names.
The installed idm-target and idm-initiator (when the examples are built)
and idm_info must run `--help` as installed, without LD_LIBRARY_PATH: their RUNPATH
leads to the installed libidm (none for prefix /usr, where the check is
skipped: the library is then found only once really installed there).
The installed libidm never searches the build tree for providers (only the
build tree's own copy does, lib/provider_dirs.c): the installed idm_info,
with no IDM_* variable, lists no directory and loads no provider of it.

Usage: check_install.py MESON PKG_CONFIG BUILD_ROOT SOURCE VERSION SANITIZE -- CC...
"""
import glob
import json
import os
import shlex
import subprocess
import sys
import tempfile


def run(cmd, env=None, **kw):
    print("+", " ".join(shlex.quote(c) for c in cmd), flush=True)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, **kw)
    sys.stdout.write(r.stdout + r.stderr)
    if r.returncode != 0:
        raise SystemExit(f"error: command failed with exit {r.returncode}")
    return r.stdout


def stage_install(meson, pkgconfig, build_root, tmp):
    """`meson install --destdir TMP/dest`; returns (dest, prefix, pkg, env):
    the pkg-config command and the environment (PKG_CONFIG_PATH alone) that
    read the staged .pc files."""
    dest = os.path.join(tmp, "dest")
    run(meson.split() + ["install", "-C", build_root, "--no-rebuild", "--quiet",
                         "--destdir", dest])
    pcs = glob.glob(os.path.join(dest, "**", "libidm.pc"), recursive=True)
    if len(pcs) != 1:
        raise SystemExit(f"error: want one installed libidm.pc, found {pcs}")
    pc = pcs[0]
    # The real prefix: where the staged tree would go (its path under dest).
    with open(os.path.join(build_root, "meson-info", "intro-buildoptions.json"),
              encoding="utf-8") as f:
        prefix = next((o["value"] for o in json.load(f) if o["name"] == "prefix"), None)
    if not prefix or not prefix.startswith("/"):
        raise SystemExit(f"error: no absolute prefix in {build_root}'s build options")
    env = dict(os.environ)
    for var in ("PKG_CONFIG_SYSROOT_DIR", "PKG_CONFIG_LIBDIR"):
        env.pop(var, None)
    env["PKG_CONFIG_PATH"] = os.path.dirname(pc)
    return dest, prefix, [pkgconfig], env


def main():
    argv = sys.argv[1:]
    sep = argv.index("--")
    meson, pkgconfig, build_root, source, version, sanitize = argv[:sep]
    cc = argv[sep + 1:]
    with tempfile.TemporaryDirectory(prefix="libidm-install-") as tmp:
        dest, prefix, pkg, env = stage_install(meson, pkgconfig, build_root, tmp)
        flags = run(pkg + ["--cflags", "--libs", "libidm"], env=env).split()
        libdir = run(pkg + ["--variable=libdir", "libidm"], env=env).strip()
        provdir = run(pkg + ["--variable=providerdir", "libidm"], env=env).strip()
        for what, p in (("libdir", libdir), ("providerdir", provdir)):
            if not p.startswith(dest + "/"):
                raise SystemExit(f"error: {what} {p} is not inside the install")
        for f in flags:
            if f.startswith(("-I", "-L")) and not f[2:].startswith(dest + "/"):
                raise SystemExit(f"error: pkg-config flag {f} points outside the install")
        installed = sorted(os.path.basename(m)[len("libidm-"):-len(".so")]
                           for m in glob.glob(os.path.join(provdir, "libidm-*.so")))
        print(f"providers installed in {provdir}: {installed}")
        if "tcp" not in installed:
            raise SystemExit("error: the tcp provider is not installed")

        # Build in a directory of its own: no path of the source tree.
        work = os.path.join(tmp, "outside")
        os.mkdir(work)
        src = os.path.join(work, "main.c")
        with open(source, encoding="utf-8") as fi, open(src, "w", encoding="utf-8") as fo:
            fo.write(fi.read())
        prog = os.path.join(work, "idm-outside")
        san = ["-fsanitize=" + sanitize] if sanitize not in ("", "none") else []
        run(cc + ["-std=c11", "-Wall", "-Wextra", "-Werror"] + san + [src, "-o", prog] + flags,
            cwd=work)

        renv = dict(os.environ)
        renv["LD_LIBRARY_PATH"] = libdir
        renv["IDM_PROVIDER_PATH"] = provdir
        renv.pop("IDM_PROVIDERS", None)
        out = run([prog], env=renv, cwd=work)
        lines = out.splitlines()
        if not lines or lines[0] != "version " + version:
            raise SystemExit(f"error: want 'version {version}' first, got {lines[:1]}")
        loaded = sorted(l.split()[1] for l in lines if l.startswith("provider "))
        paths = [l.split()[2] for l in lines if l.startswith("provider ")]
        # A provider may refuse to load where its hardware stack is absent
        # (iser without RDMA); tcp never may, and nothing else may appear.
        if "tcp" not in loaded or not set(loaded) <= set(installed):
            raise SystemExit(f"error: loaded providers {loaded}, installed {installed}")
        for p in paths:
            if not os.path.realpath(p).startswith(os.path.realpath(provdir) + "/"):
                raise SystemExit(f"error: provider loaded from {p}, not from {provdir}")
        check_provider_sdk(cc, pkg, env, dest, work)
        check_programs(dest, prefix)
        check_no_build_tree(dest, libdir, build_root)
    print("ok: out-of-tree program built with pkg-config against the installed libidm")
    return 0


SDK_MODULE = """#include <libidm/provider.h>
static const struct idm_prov_ops ops = {
	.abi_version = IDM_PROV_ABI, .size = sizeof(struct idm_prov_ops), .name = "outside",
};
IDM_PROV_EXPORT const struct idm_prov_ops *IDM_PROV_ENTRY(void);
IDM_PROV_EXPORT const struct idm_prov_ops *IDM_PROV_ENTRY(void) { return &ops; }
"""


def check_provider_sdk(cc, pkg, env, dest, work):
    """libidm-provider.pc: <libidm/provider.h> alone builds a module that
    defines the entry point the .pc names, in the providerdir it names."""
    flags = run(pkg + ["--cflags", "--libs", "libidm-provider"], env=env).split()
    entry = run(pkg + ["--variable=provider_entry", "libidm-provider"], env=env).strip()
    provdir = run(pkg + ["--variable=providerdir", "libidm-provider"], env=env).strip()
    if not provdir.startswith(dest + "/"):
        raise SystemExit(f"error: libidm-provider providerdir {provdir} is not inside the install")
    src = os.path.join(work, "outside_provider.c")
    with open(src, "w", encoding="utf-8") as fo:
        fo.write(SDK_MODULE)
    mod = os.path.join(work, "libidm-outside.so")
    run(cc + ["-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
              "-fvisibility=hidden", src, "-o", mod] + flags, cwd=work)
    syms = run(["nm", "-D", "--defined-only", mod]).split()
    if entry not in syms:
        raise SystemExit(f"error: the module does not define {entry} (pkg-config provider_entry)")
    print(f"ok: a provider module builds with libidm-provider.pc alone and defines {entry}")


def check_programs(dest, prefix):
    """The installed programs start from the install tree as they are."""
    progs = sorted(glob.glob(os.path.join(dest, "**", "bin", "idm[-_]*"), recursive=True))
    names = [os.path.basename(p) for p in progs]
    if not progs:
        print("programs: none installed (-Dexamples=false)")
        return
    for want in ("idm-initiator", "idm-target"):
        if want not in names:
            raise SystemExit(f"error: {want} is not installed (found {names})")
    if prefix == "/usr":
        print("programs: prefix /usr has no RUNPATH by design; --help check skipped")
        return
    env = dict(os.environ)
    for var in ("LD_LIBRARY_PATH", "LD_PRELOAD", "IDM_PROVIDER_PATH"):
        env.pop(var, None)
    for p in progs:
        if os.path.basename(p) not in ("idm-initiator", "idm-target", "idm_info"):
            continue
        r = subprocess.run([p, "--help"], env=env, capture_output=True, text=True,
                           timeout=60, cwd="/")
        if r.returncode != 0 or "sage:" not in r.stdout:
            sys.stdout.write(r.stdout + r.stderr)
            raise SystemExit(f"error: installed {p} --help exited {r.returncode} "
                             "without LD_LIBRARY_PATH")
        print(f"ok: installed {os.path.relpath(p, dest)} --help runs without LD_LIBRARY_PATH")


def check_no_build_tree(dest, libdir, build_root):
    """The installed libidm, loaded from the staged tree, searches
    IDM_PROVIDER_PATH (unset here) and its install directory only: never
    the build tree it was built in, though it carries that path."""
    infos = glob.glob(os.path.join(dest, "**", "bin", "idm_info"), recursive=True)
    if len(infos) != 1:
        raise SystemExit(f"error: want one installed idm_info, found {infos}")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("IDM_") and k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    env["LD_LIBRARY_PATH"] = libdir  # the staged libidm, also for prefix /usr
    r = subprocess.run([infos[0], "--json"], env=env, capture_output=True, text=True,
                       timeout=60, cwd="/")
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        sys.stdout.write(r.stdout + r.stderr)
        raise SystemExit("error: installed idm_info --json printed no JSON")
    root = os.path.realpath(build_root) + "/"
    search = doc.get("search_path", [])
    paths = [p.get("path", "") for p in doc.get("providers", [])]
    bad = [d["dir"] for d in search
           if d.get("from") == "build tree" or os.path.realpath(d["dir"]).startswith(root)]
    bad += [p for p in paths if os.path.realpath(p).startswith(root)]
    if bad or [d.get("from") for d in search] != ["install directory"]:
        sys.stdout.write(r.stdout + r.stderr)
        raise SystemExit(f"error: the installed libidm searches the build tree: {bad}")
    print("ok: the installed libidm searches only its install directory "
          f"({search[0]['dir']}), not the build tree")


if __name__ == "__main__":
    sys.exit(main())
