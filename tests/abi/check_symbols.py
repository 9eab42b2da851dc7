#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""ABI hygiene (a): libidm.so exports exactly the symbols of lib/libidm.map,
each in the version node the map puts it in, and carries soname libidm.so.1;
the library's minor version is the newest IDM_1.N node; the functions the
headers mark IDM_API (IDM_PROV_API) are exactly those of IDM_1.* (the
provider SDK's node IDM_PROV_<n>, n being IDM_PROV_ABI of
<libidm/provider.h>, the only IDM_PROV_* node).

Usage: check_symbols.py READELF MAPFILE LIBRARY [HEADER...]
"""
import re
import subprocess
import sys


def parse_map(path):
    """Return ({symbol: node}, [nodes]) from a GNU ld version script."""
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"#[^\n]*", " ", text)
    syms, nodes = {}, []
    for m in re.finditer(r"([A-Za-z_][\w.]*)\s*\{(.*?)\}\s*([\w.]*)\s*;", text, re.S):
        node, body = m.group(1), m.group(2)
        nodes.append(node)
        scope = None
        for tok in re.split(r"\s*;\s*|\s+", body):
            if not tok:
                continue
            if tok.endswith(":"):
                scope = tok[:-1]
                continue
            if scope == "global":
                if tok in syms:
                    raise SystemExit(f"{path}: {tok} listed twice ({syms[tok]}, {node})")
                syms[tok] = node
    return syms, nodes


def exported(readelf, lib):
    """Defined dynamic symbols of lib as {name: version}."""
    out = subprocess.run([readelf, "--dyn-syms", "-W", lib], check=True,
                         capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(f) < 8 or not f[0].rstrip(":").isdigit():
            continue
        typ, bind, ndx, name = f[3], f[4], f[6], f[7]
        if ndx == "UND" or bind not in ("GLOBAL", "WEAK"):
            continue
        base, _, ver = name.partition("@")
        ver = ver.lstrip("@")
        if typ == "OBJECT" and ndx == "ABS" and base == ver:
            continue  # the version node definition itself
        if ndx == "ABS" and not ver:
            continue
        syms[base] = ver
    return syms


def declared(headers):
    """{function: marker} for functions declared with IDM_API / IDM_PROV_API."""
    decl = {}
    for h in headers:
        text = open(h, encoding="utf-8").read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"^\s*#.*$", " ", text, flags=re.M)
        for m in re.finditer(r"\b(IDM(?:_PROV)?_API)\b([^;{]*?)\b(idm_\w+)\s*\(", text):
            decl[m.group(3)] = m.group(1)
    return decl


def main():
    readelf, mapfile, lib = sys.argv[1:4]
    headers = sys.argv[4:]
    want, nodes = parse_map(mapfile)
    have = exported(readelf, lib)
    errors = []
    # The provider node is named after IDM_PROV_ABI of the SDK header.
    prov_nodes = [n for n in nodes if n.startswith("IDM_PROV_")]
    abi = None
    for h in headers:
        m = re.search(r"^#define IDM_PROV_ABI (\d+)\s*$",
                      open(h, encoding="utf-8").read(), re.M)
        if m:
            abi = m.group(1)
    if abi is None:
        errors.append("no header defines IDM_PROV_ABI")
    elif prov_nodes != [f"IDM_PROV_{abi}"]:
        errors.append(f"provider nodes {prov_nodes}, want [IDM_PROV_{abi}] (IDM_PROV_ABI {abi})")
    # Header declarations against the map's nodes.
    if headers:
        decl = declared(headers)
        for f, marker in sorted(decl.items()):
            node = want.get(f)
            public = marker == "IDM_API"
            if node is None:
                errors.append(f"{f} is declared {marker} but not in the map")
            elif public != node.startswith("IDM_1.") or \
                    (not public and not node.startswith("IDM_PROV_")):
                errors.append(f"{f} is declared {marker} but the map puts it in {node}")
        for f in sorted(set(want) - set(decl)):
            errors.append(f"{f} is in the map ({want[f]}) but no header declares it")
    # rdma-core's rule: the minor version is the newest IDM_1.N node.
    m = re.search(r"\.so\.1\.(\d+)\.\d+$", lib)
    pub = [int(n.split(".")[1]) for n in nodes if re.fullmatch(r"IDM_1\.\d+", n)]
    if m and pub and int(m.group(1)) != max(pub):
        errors.append(f"{lib}: minor version {m.group(1)} but newest node is IDM_1.{max(pub)}")
    for s in sorted(set(want) - set(have)):
        errors.append(f"missing: {s} (listed in {want[s]}, not exported)")
    for s in sorted(set(have) - set(want)):
        errors.append(f"leaked: {s}@{have[s]} (exported, not in the map)")
    for s in sorted(set(want) & set(have)):
        if have[s] != want[s]:
            errors.append(f"wrong node: {s}@{have[s]}, map says {want[s]}")
    dyn = subprocess.run([readelf, "-d", "-W", lib], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", dyn)
    if not m or m.group(1) != "libidm.so.1":
        errors.append(f"soname is {m.group(1) if m else 'missing'}, want libidm.so.1")
    if "IDM_1.0" not in nodes:
        errors.append(f"no IDM_1.0 node in {mapfile}")
    print(f"{lib}: {len(have)} symbols exported, {len(want)} in {len(nodes)} map nodes "
          f"({', '.join(nodes)})")
    for e in errors:
        print("error:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
