#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Run scdoc on an .scd file and write the man page.

scdoc 1.11.2 (Debian bookworm) puts a paragraph macro (.P) right before
and right after every section heading, and at the end of indented blocks; mandoc -Tlint warns about each ("skipping paragraph macro"). Those
.P lines change nothing in the rendering, so they are dropped here: the
lint test can then fail on every real warning.

@VERSION@ in the source becomes the project version.

Usage: scdoc-wrap.py SCDOC VERSION INPUT.scd OUTPUT
"""
import subprocess
import sys

HEAD = (".SH", ".SS", ".TH")


def tidy(lines):
    # ".P" then ".RE" (the end of an indented block) gives an empty
    # paragraph inside the block: put the paragraph break after it.
    for i in range(len(lines) - 1):
        if lines[i].strip() == ".P" and lines[i + 1].strip() == ".RE":
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
    out = []
    for i, line in enumerate(lines):
        if line.strip() == ".P":
            prev = out[-1] if out else ""
            nxt = next((l for l in lines[i + 1:] if l.strip()), "")
            if (prev.startswith(HEAD) or prev.strip() == ".P"
                    or nxt.startswith(HEAD) or nxt.strip() in (".P", "")):
                continue
        out.append(line)
    return out


def main():
    scdoc, version, src, dst = sys.argv[1:]
    with open(src, encoding="utf-8") as f:
        text = f.read().replace("@VERSION@", version)
    r = subprocess.run([scdoc], input=text.encode(), capture_output=True, check=False)
    if r.returncode != 0:
        sys.stderr.write(r.stderr.decode(errors="replace"))
        sys.exit(f"scdoc failed on {src}")
    lines = r.stdout.decode().split("\n")
    with open(dst, "w", encoding="utf-8") as f:
        f.write("\n".join(tidy(lines)))


if __name__ == "__main__":
    main()
