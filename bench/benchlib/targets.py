# SPDX-License-Identifier: BSD-2-Clause
"""The targets under test (idm-target, stock tgtd, and tgtd on libidm
from contrib/tgt), started and stopped the same way: on 127.0.0.1, a
port of their own, LUN 1 of the same size and backing kind, 512-byte
blocks, default keys except the digests."""

import os
import shutil
import socket
import subprocess
import time

IQN_BASE = "iqn.2026-11.org.libidm:bench"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _stop_proc(proc, grace=5.0):
    """SIGTERM, then SIGKILL after `grace` seconds: only our own child."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def fs_type(path):
    """File system type of the mount holding `path`, from /proc/mounts."""
    path = os.path.realpath(path)
    best, kind = "", "unknown"
    with open("/proc/mounts") as f:
        for line in f:
            fields = line.split()
            mnt = fields[1].replace("\\040", " ")
            if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) \
                    and len(mnt) >= len(best):
                best, kind = mnt, fields[2]
    return kind


def make_lun_file(path, size):
    """A LUN file written through once, so that reads hit real pages in
    both targets (a sparse tmpfs file would read holes)."""
    chunk = bytes([0xa5]) * (1 << 20)
    with open(path, "wb") as f:
        left = size
        while left > 0:
            n = min(left, len(chunk))
            f.write(chunk[:n])
            left -= n


class Target:
    name = "?"
    proc = None
    port = None
    iqn = None
    log = None

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def url(self):
        return f"iscsi://127.0.0.1:{self.port}/{self.iqn}/1"

    def log_tail(self, n=15):
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""


# What the TCP provider logs when IDM_TCP_ENGINE=uring cannot be had
# (providers/tcp/README.md "I/O engines"): the context runs epoll.
URING_FALLBACK = "io_uring engine unavailable"
# ... and the reason it gives when the build has no io_uring at all
URING_NOT_BUILT = "built without liburing"

ENGINES = ("epoll", "uring")


class IdmTarget(Target):
    """examples/target/idm-target with a file LUN on tmpfs (pread/pwrite)
    or a RAM LUN (one registered idm_buf: zero copy)."""

    name = "idm-target"

    def __init__(self, binary, workdir, backing, lun_file, lun_size, env,
                 threads=None, engine=None):
        self.binary = binary
        # --target-threads and --engines: one instance per count and per
        # engine, each its own cell (idm-target/uring/t2)
        self.threads = threads
        self.engine = engine
        suffix = (f"/{engine}" if engine else "") + \
            (f"/t{threads}" if threads else "")
        self.name = "idm-target" + suffix
        tag = suffix.replace("/", "-")
        self.workdir = workdir
        self.backing = backing
        self.lun_file = lun_file
        self.lun_size = lun_size
        # the engine is the target's alone: the initiators keep theirs
        self.env = dict(env)
        if engine:
            self.env["IDM_TCP_ENGINE"] = engine
        self.iqn = IQN_BASE + ":idm"
        self.log = os.path.join(workdir, f"idm-target{tag}.log")
        self.port_file = os.path.join(workdir, f"idm-target{tag}.port")

    def engine_fallback(self):
        """The provider's warning when this target asked for io_uring and
        runs epoll (in any of its starts), else None."""
        if self.engine != "uring":
            return None
        try:
            with open(self.log, errors="replace") as f:
                for line in f:
                    if URING_FALLBACK in line:
                        return line.strip()
        except OSError:
            pass
        return None

    def describe_backing(self):
        if self.backing == "ram":
            return "RAM LUN (ram:SIZE, one registered buffer, zero copy)"
        return "file on tmpfs (file:PATH, pread/pwrite)"

    def start(self, digests):
        port_file = self.port_file
        if os.path.exists(port_file):
            os.unlink(port_file)
        spec = (f"ram:{self.lun_size}" if self.backing == "ram"
                else f"file:{self.lun_file}")
        dig = "CRC32C" if digests else "None"
        # Digests on: the header digest is required (so that libiscsi,
        # which offers None first, gets it too); the data digest is
        # offered, and taken by initiators that ask for it.
        cmd = [self.binary, "--portal", "127.0.0.1:0", "--port-file",
               port_file, "--target-name", self.iqn, "--lun", spec,
               "--log-level", "warn", "--log-target", "stderr",
               "-k", f"HeaderDigest={dig}",
               "-k", "DataDigest=" + ("CRC32C,None" if digests else "None")]
        if self.threads:
            cmd += ["--threads", str(self.threads)]
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                         stderr=log, env=self.env)
        for _ in range(100):
            if os.path.exists(port_file) and os.path.getsize(port_file):
                break
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        try:
            with open(port_file) as f:
                self.port = int(f.read().strip())
        except (OSError, ValueError):
            self.stop()
            raise RuntimeError("idm-target did not start:\n" +
                               self.log_tail())
        if not port_open(self.port):
            self.stop()
            raise RuntimeError("idm-target does not accept connections:\n"
                               + self.log_tail())

    def stop(self):
        _stop_proc(self.proc)


def probe_uring(binary, workdir, env):
    """Can idm-target run the io_uring engine here? Starts it once with
    IDM_TCP_ENGINE=uring on a small RAM LUN and reads its log: the very
    binary and provider the cells use, so a build without liburing and a
    kernel or seccomp profile that refuses io_uring both show. Returns
    ("ok", None), ("not built", warning), ("refused", warning) or
    ("unknown", why) when the target did not start."""
    t = IdmTarget(binary, workdir, "ram", None, 1 << 20, env,
                  engine="uring")
    t.name = "idm-target/uring probe"
    t.log = os.path.join(workdir, "idm-target-uring-probe.log")
    t.port_file = os.path.join(workdir, "idm-target-uring-probe.port")
    try:
        t.start(digests=False)
    except RuntimeError as e:
        return "unknown", str(e).splitlines()[0]
    finally:
        t.stop()
    warning = t.engine_fallback()
    if warning is None:
        return "ok", None
    return ("not built" if URING_NOT_BUILT in warning else "refused"), \
        warning


class Tgtd(Target):
    """Debian's tgtd in the foreground on a port of its own, configured
    through a private IPC socket (a system tgtd is left alone)."""

    name = "tgtd"

    def __init__(self, workdir, backing, lun_file, tgtd="tgtd",
                 tgtadm="tgtadm", env=None):
        self.workdir = workdir
        self.backing = backing
        self.lun_file = lun_file
        self.tgtd = tgtd
        self.tgtadm = tgtadm
        self.iqn = IQN_BASE + ":" + self.name
        self.log = os.path.join(workdir, f"{self.name}.log")
        self.env = dict(env if env is not None else os.environ,
                        TGT_IPC_SOCKET=os.path.join(workdir,
                                                    f"{self.name}.socket"))

    @staticmethod
    def available():
        if shutil.which("tgtd") and shutil.which("tgtadm"):
            return True, None
        return False, "tgtd/tgtadm not installed (Debian package tgt)"

    def describe_backing(self):
        if self.backing == "ram":
            return ("file on tmpfs (--bstype rdwr, pread/pwrite): tgt has "
                    "no RAM backing store")
        return "file on tmpfs (--bstype rdwr, pread/pwrite)"

    def _adm(self, *args, check=True):
        r = subprocess.run([self.tgtadm, *args], env=self.env,
                           capture_output=True, text=True, timeout=15)
        if check and r.returncode != 0:
            raise RuntimeError(f"tgtadm {' '.join(args)}: "
                               f"{r.stderr.strip() or r.stdout.strip()}")
        return r

    def start(self, digests):
        # A port found free can be taken by someone else before tgtd binds
        # it: try a few.
        for _ in range(5):
            self.port = free_port()
            with open(self.log, "a") as log:
                self.proc = subprocess.Popen(
                    [self.tgtd, "-f", "--iscsi",
                     f"portal=127.0.0.1:{self.port}"],
                    stdout=log, stderr=log, env=self.env)
            for _ in range(100):
                if self.proc.poll() is not None or port_open(self.port):
                    break
                time.sleep(0.05)
            if self.alive() and port_open(self.port):
                break
            self.stop()
        else:
            raise RuntimeError("tgtd did not start:\n" + self.log_tail())
        for _ in range(50):
            if self._adm("--op", "show", "--mode", "system",
                         check=False).returncode == 0:
                break
            time.sleep(0.1)
        self._adm("--lld", "iscsi", "--op", "new", "--mode", "target",
                  "--tid", "1", "-T", self.iqn)
        self._adm("--lld", "iscsi", "--op", "bind", "--mode", "target",
                  "--tid", "1", "-I", "ALL")
        self._adm("--lld", "iscsi", "--op", "new", "--mode", "logicalunit",
                  "--tid", "1", "--lun", "1", "-b", self.lun_file,
                  "--bstype", "rdwr",
                  "--blocksize", "512")
        dig = "CRC32C" if digests else "None"
        self._adm("--lld", "iscsi", "--op", "update", "--mode", "target",
                  "--tid", "1", "-n", "HeaderDigest", "-v", dig)
        self._adm("--lld", "iscsi", "--op", "update", "--mode", "target",
                  "--tid", "1", "-n", "DataDigest",
                  "-v", "CRC32C,None" if digests else "None")

    def stop(self):
        if self.alive():
            # tgtd ignores SIGTERM while targets exist: ask it to exit
            self._adm("--lld", "iscsi", "--op", "delete", "--force",
                      "--mode", "target", "--tid", "1", check=False)
            self._adm("--op", "delete", "--mode", "system", check=False)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        _stop_proc(self.proc, grace=2)


def read_env_sh(path):
    """KEY=VALUE lines of the env.sh that contrib/tgt/build-tgt-idm.sh
    writes (no quoting, no expansion: it writes none)."""
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                k, v = line.split("=", 1)
                out[k.strip()] = v.strip().strip("'\"")
    return out


class TgtdIdm(Tgtd):
    """tgtd on libidm (contrib/tgt): the same tgtd, its iSCSI transport
    replaced by libidm's data mover. Found through the work dir of
    contrib/tgt/build-tgt-idm.sh, whose env.sh names tgtd, tgtadm and the
    providers of the libidm it was linked with (an install of the build
    dir, loaded through its run path: not the build tree's)."""

    name = "tgtd-idm"

    def __init__(self, workdir, backing, lun_file, found):
        env = dict(os.environ)
        env.pop("LD_LIBRARY_PATH", None)
        env.pop("IDM_PROVIDER_PATH", None)
        # the provider's default engine, as the initiators: --engines is
        # idm-target's
        env.pop("IDM_TCP_ENGINE", None)
        if found.get("IDM_PROVDIR"):
            env["IDM_PROVIDER_PATH"] = found["IDM_PROVDIR"]
        super().__init__(workdir, backing, lun_file,
                         tgtd=found["TGTD_IDM"],
                         tgtadm=found.get("TGTADM_IDM") or "tgtadm",
                         env=env)

    @staticmethod
    def find(work):
        """(env.sh values, None) when tgtd-on-libidm is built in `work`,
        else (None, why)."""
        how = ("build it with contrib/tgt/build-tgt-idm.sh --work DIR "
               "--libidm-build BUILD and pass --tgt-idm DIR")
        if not work:
            return None, f"no --tgt-idm work dir given ({how})"
        env_sh = os.path.join(work, "env.sh")
        if not os.path.isfile(env_sh):
            return None, f"not built: no {env_sh} ({how})"
        found = read_env_sh(env_sh)
        tgtd = found.get("TGTD_IDM", "")
        if not os.access(tgtd, os.X_OK):
            return None, f"no tgtd at {tgtd or '?'} (from {env_sh}; {how})"
        adm = found.get("TGTADM_IDM") or shutil.which("tgtadm") or ""
        if not os.access(adm, os.X_OK):
            return None, f"no tgtadm (from {env_sh})"
        found["TGTADM_IDM"] = adm
        return found, None
