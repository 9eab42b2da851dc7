#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A provider built out of tree passes the core's provider-contract tests.

Install the build into a temporary DESTDIR, copy the unit tests' fake
provider (tests/unit/fake_provider.[ch]) into a directory of its own and
build its complete variant (FAKE_GOOD) there as libidm-fake.so with
nothing but `pkg-config --cflags --libs libidm-provider` read from the
staged install: no include path into the source or build tree. Then run
the unit tests that drive a provider through the core (connection states,
tasks and data transfers, deferred work, Notice_Key_Values' veto) with
IDM_TEST_FAKE_DIR naming that directory: they load it through
IDM_PROVIDER_PATH instead of the fake the build made, and each checks
that the module it talks to is the one from there.

With IDM_SDK_INSTALLED=1 the module is built against the SDK installed
on the system (the libidm-dev package) instead of a staged install.

Usage: check_outside_provider.py MESON PKG_CONFIG BUILD_ROOT SANITIZE
           FAKE_SOURCE... --tests UNIT_TEST... -- CC...
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from check_install import run, stage_install


def initiator_picks_it(installed, dest, prefix, moddir):
    """The installed idm-initiator, which names no provider for a URL,
    reaches the out-of-tree provider by the URL scheme its table declares
    ("fake://") and by its place in the "auto" order: the provider's own
    directory is the only change. The fake connects without a socket and
    never answers the login, hence the 1 s login timeout."""
    env = dict(os.environ)
    env["IDM_PROVIDER_PATH"] = moddir
    env.pop("IDM_PROVIDERS", None)
    if installed:
        prog = shutil.which("idm-initiator")
        if not prog:
            print("no installed idm-initiator: its selection of the provider not checked")
            return
    else:
        prog = dest + prefix + "/bin/idm-initiator"
        libs = glob.glob(dest + "/**/libidm.so.1", recursive=True)
        if len(libs) != 1:
            raise SystemExit(f"error: want one staged libidm.so.1, found {libs}")
        env["LD_LIBRARY_PATH"] = os.path.dirname(libs[0])
    url = "127.0.0.1:3260/iqn.2026-11.org.example:outside/0"
    for what, args, extra in (
            ("its URL scheme", ["fake://" + url], {}),
            ("the \"auto\" order", ["--provider", "auto", "iscsi://" + url],
             {"IDM_TEST_FAKE_AUTO_ORDER": "300"})):
        r = subprocess.run([prog, "-v", "-t", "1", "--no-discovery"] + args,
                           env=dict(env, **extra), capture_output=True, text=True,
                           timeout=60)
        if "-> 127.0.0.1:3260 over fake" not in r.stderr:
            raise SystemExit(f"error: idm-initiator did not pick the out-of-tree "
                             f"provider by {what}:\n{r.stderr}")
        print(f"ok: idm-initiator picks the out-of-tree provider by {what}")


def main():
    argv = sys.argv[1:]
    sep = argv.index("--")
    cc = argv[sep + 1:]
    head = argv[:sep]
    tsep = head.index("--tests")
    meson, pkgconfig, build_root, sanitize = head[:4]
    sources = head[4:tsep]
    # meson names build targets relative to the build dir, the cwd here
    tests = [os.path.abspath(t) for t in head[tsep + 1:]]
    if not tests or not sources:
        raise SystemExit("error: no unit test or no fake provider source given")
    # IDM_SDK_INSTALLED=1: build against the SDK installed on the system
    # (the libidm-dev package, or whatever pkg-config finds) instead of a
    # staged install of this build
    installed = os.environ.get("IDM_SDK_INSTALLED") == "1"
    with tempfile.TemporaryDirectory(prefix="libidm-outside-provider-") as tmp:
        if installed:
            pkg, env = [pkgconfig], dict(os.environ)
        else:
            dest, prefix, pkg, env = stage_install(meson, pkgconfig, build_root, tmp)
        flags = run(pkg + ["--cflags", "--libs", "libidm-provider"], env=env).split()
        entry = run(pkg + ["--variable=provider_entry", "libidm-provider"], env=env).strip()
        if installed:
            print("building against the installed SDK: libidm-provider "
                  + run(pkg + ["--modversion", "libidm-provider"], env=env).strip()
                  + " " + " ".join(flags))
        for f in flags:
            if (not installed and f.startswith(("-I", "-L"))
                    and not f[2:].startswith(dest + "/")):
                raise SystemExit(f"error: pkg-config flag {f} points outside the install")

        # The provider's own directory: its sources only, built there.
        work = os.path.join(tmp, "fake-provider")
        os.mkdir(work)
        for s in sources:
            shutil.copy(s, work)
        cfiles = [os.path.basename(s) for s in sources if s.endswith(".c")]
        out = os.path.join(tmp, "modules")
        os.mkdir(out)
        mod = os.path.join(out, "libidm-fake.so")
        san = ["-fsanitize=" + sanitize] if sanitize not in ("", "none") else []
        # the project's own warnings (it builds with -Wno-unused-parameter:
        # an op need not use every argument)
        run(cc + ["-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror",
                  "-shared", "-fPIC", "-fvisibility=hidden",
                  "-DFAKE_VARIANT=FAKE_GOOD"] + san + cfiles +
            ["-o", mod] + flags, cwd=work)
        syms = run(["nm", "-D", "--defined-only", mod]).split()
        if entry not in syms:
            raise SystemExit(f"error: {mod} does not define {entry}")
        print(f"ok: libidm-fake.so built out of tree with libidm-provider.pc alone ({entry})")

        initiator_picks_it(installed, dest if not installed else None,
                           prefix if not installed else None, out)

        tenv = dict(os.environ)
        tenv["IDM_TEST_FAKE_DIR"] = out
        failed = []
        for t in tests:
            name = os.path.basename(t)
            print(f"+ IDM_TEST_FAKE_DIR={out} {name}", flush=True)
            r = subprocess.run([t], env=tenv, capture_output=True, text=True,
                               timeout=300, cwd=tmp)
            sys.stdout.write(r.stdout + r.stderr)
            if r.returncode != 0:
                failed.append(f"{name} (exit {r.returncode})")
        if failed:
            raise SystemExit("error: on the out-of-tree provider: " + ", ".join(failed))
    print(f"ok: {len(tests)} provider-contract test programs pass on a provider "
          "built out of tree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
