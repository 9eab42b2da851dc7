# SPDX-License-Identifier: BSD-2-Clause
"""What check_abi.py and check_sdk_abi.py share: running libabigail's
tools with the command shown, and the skip when they are missing."""
import subprocess

# abidiff's exit status is a bit field
ABI_ERRORS = 1 | 2       # an error, a usage error
ABI_CHANGE = 4
ABI_INCOMPATIBLE = 8


def run(cmd):
    """Run cmd (printed first); (exit status, stdout + stderr)."""
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    return r.returncode, r.stdout + r.stderr


def missing(path, name):
    """True, after the test's SKIP line, when the tool `name` was not found."""
    if path:
        return False
    print(f"SKIP: {name} not found (Debian package abigail-tools)")
    return True
