# SPDX-License-Identifier: BSD-2-Clause
"""What bench/run reads about a target process: CPU time and resident
memory from /proc, and system calls through perf (or strace)."""

import os
import re
import shutil
import signal
import subprocess
import tempfile

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of every thread of the process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    # the command name (field 2) may hold spaces: split after its ')'
    fields = stat[stat.rindex(")") + 2:].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / CLK_TCK


def vm_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


# perf counts these tracepoints in the kernel: cheap enough to leave on
# during the timed runs. The socket receive calls (recvfrom, and readv/
# recvmsg, which place payload straight into the caller's buffers) are
# counted on their own because the hot-path goals give a budget for them
# (per 1 MiB write); the LUN's own
# reads and writes (a file LUN: pread/pwrite) so that the transport's
# syscalls can be told from the backing's.
PERF_EVENTS = ["raw_syscalls:sys_enter", "syscalls:sys_enter_recvfrom"]
RECV_CALLS = ["recvfrom", "readv", "recvmsg"]
PERF_EVENTS += [f"syscalls:sys_enter_{c}" for c in RECV_CALLS[1:]]
LUN_IO_CALLS = ["pread64", "pwrite64", "preadv", "pwritev"]
PERF_EVENTS += [f"syscalls:sys_enter_{c}" for c in LUN_IO_CALLS]


def _perf_works():
    if not shutil.which("perf"):
        return False, "perf not installed"
    try:
        r = subprocess.run(["perf", "stat", "-x,", "-e", PERF_EVENTS[0],
                            "--", "true"], capture_output=True, text=True,
                           timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"perf stat failed: {e}"
    if r.returncode != 0 or "not supported" in r.stderr or \
            "<not counted>" in r.stderr:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        return False, f"perf cannot count {PERF_EVENTS[0]}: {last}"
    return True, None


def _strace_works():
    if not shutil.which("strace"):
        return False, "strace not installed"
    r = subprocess.run(["strace", "-c", "-f", "-o", os.devnull, "true"],
                       capture_output=True, timeout=20)
    if r.returncode != 0:
        return False, "strace cannot trace (ptrace not allowed?)"
    return True, None


def pick_syscall_method(wanted):
    """('perf'|'strace'|None, note). 'auto' prefers perf, whose counting
    leaves the timings alone; strace slows the target down, so its counts
    come from an extra untimed pass."""
    notes = []
    if wanted in ("auto", "perf"):
        ok, why = _perf_works()
        if ok:
            return "perf", None
        notes.append(why)
        if wanted == "perf":
            return None, why
    if wanted in ("auto", "strace"):
        ok, why = _strace_works()
        if ok:
            return "strace", "; ".join(notes + ["strace -c -f in an extra "
                                                "untimed pass per cell"])
        notes.append(why)
    if wanted == "off":
        return None, "syscall counting turned off (--syscalls off)"
    return None, "no syscall counts: " + "; ".join(notes)


class SyscallCounter:
    """Counts a running process's system calls between start() and
    stop(). stop() returns {'syscalls': N, 'recvfrom': N, 'recv': N, 'lun_io': N}
    (the last two None when not counted), or None."""

    def __init__(self, method, pid):
        self.method = method
        self.pid = pid
        self.proc = None
        self.out = None

    def start(self):
        fd, self.out = tempfile.mkstemp(prefix="bench-sys.")
        os.close(fd)
        if self.method == "perf":
            cmd = ["perf", "stat", "-x,", "-o", self.out, "-p", str(self.pid)]
            for ev in PERF_EVENTS:
                cmd += ["-e", ev]
        else:
            cmd = ["strace", "-c", "-f", "-o", self.out, "-p", str(self.pid)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        return self

    def stop(self):
        try:
            self.proc.send_signal(signal.SIGINT)
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        try:
            with open(self.out) as f:
                text = f.read()
        finally:
            os.unlink(self.out)
        return (self._parse_perf if self.method == "perf"
                else self._parse_strace)(text)

    @staticmethod
    def _parse_perf(text):
        counts = {}
        for line in text.splitlines():
            parts = line.split(",")
            if len(parts) >= 3 and parts[2] in PERF_EVENTS:
                try:
                    counts[parts[2]] = int(parts[0])
                except ValueError:
                    counts[parts[2]] = None  # "<not counted>"
        total = counts.get(PERF_EVENTS[0])
        if total is None:
            return None
        lun = [counts.get(f"syscalls:sys_enter_{c}") for c in LUN_IO_CALLS]
        recv = [counts.get(f"syscalls:sys_enter_{c}") for c in RECV_CALLS]
        return {"syscalls": total, "recvfrom": counts.get(PERF_EVENTS[1]),
                "recv": None if None in recv else sum(recv),
                "lun_io": None if None in lun else sum(lun)}

    @staticmethod
    def _parse_strace(text):
        total = None
        calls = {}
        for line in text.splitlines():
            f = line.split()
            # "% time seconds usecs/call calls [errors] syscall", and the
            # "total" line, whose errors column may be empty
            if len(f) >= 5 and re.match(r"^\d+$", f[3]):
                if f[-1] == "total":
                    total = int(f[3])
                else:
                    calls[f[-1]] = int(f[3])
        if total is None:
            return None
        return {"syscalls": total, "recvfrom": calls.get("recvfrom", 0),
                "recv": sum(calls.get(c, 0) for c in RECV_CALLS),
                "lun_io": sum(calls.get(c, 0) for c in LUN_IO_CALLS)}
