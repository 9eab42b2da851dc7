#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""No circle of calls between the files of a provider; with a map, calls
and includes only downward.

A file calls another when its object names (an undefined symbol in `nm`)
a non-static function the other defines: what the linker sees, so an
inline function of a header counts where it is expanded. The files of
one object directory (build/providers/tcp/libidm-tcp.so.p, say) form a
graph; this prints its strongly connected components of more than one
file (a circle, however long) and, with --graph, every edge.

--map HEADER: the header's comment lists the files from top to bottom
after "calls flow one way, top to bottom:" (a line's files before its
description, several on a line are one layer). Then every call must go
to a file listed below the caller; every source file of the header's
directory must be listed, and listed files exist; and a file may include
in quotes only its own header, the headers of files below it, and
headers that belong to no file (tcp.h, prov_env.h). The map a reader
trusts cannot drift from the code.

Exits 1 on a circle or a breach of the map, 0 if none; 77 if nm or the
objects are missing.

usage: check_calls.py [--graph] [--map HEADER] OBJDIR...
"""
import os
import re
import shutil
import subprocess
import sys


def symbols(objs):
    """{object: (functions it defines, symbols it leaves undefined)}, from
    one nm run over them all (-A: each line names its object)."""
    out = subprocess.run(['nm', '-A'] + objs, capture_output=True,
                         text=True, check=True).stdout
    syms = {o: (set(), set()) for o in objs}
    for ln in out.splitlines():
        obj, _, rest = ln.rpartition(':')
        f = rest.split()
        if obj not in syms or len(f) < 2:
            continue
        if f[-2] in 'TW' and len(f) == 3:
            syms[obj][0].add(f[-1])
        elif f[-2] == 'U':
            syms[obj][1].add(f[-1])
    return syms


def sccs(nodes, edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp))
    return out


def read_map(header):
    """{file stem: layer} from the header's map, or an error string."""
    with open(header) as f:
        text = f.read()
    m = re.search(r'calls flow one way, top to bottom:\n \*\n(.*?)\n \*\n',
                  text, re.S)
    if not m:
        return f'{header}: no map ("calls flow one way, top to bottom:")'
    rank = {}
    for i, line in enumerate(m.group(1).splitlines()):
        files = re.split(r'\S  +', line.lstrip(' *'), maxsplit=1)[0] + 'c'
        for name in re.findall(r'([\w]+)\.c\b', files):
            rank[name] = i
    return rank


def check_map(header, rank, edges, why):
    """The breaches of the map: calls not downward, files not mapped,
    includes not downward."""
    d = os.path.dirname(os.path.abspath(header))
    errors = []
    sources = sorted(f[:-2] for f in os.listdir(d) if f.endswith('.c'))
    for name in sources:
        if name not in rank:
            errors.append(f'{name}.c is not in the map')
    for name in rank:
        if name not in sources:
            errors.append(f'the map lists {name}.c, which does not exist')
    for a in sorted(edges):
        for b in sorted(edges[a]):
            ra, rb = rank.get(a[:-2]), rank.get(b[:-2])
            if ra is not None and rb is not None and rb <= ra:
                errors.append(f'{a} calls {b} ({" ".join(sorted(why[(a, b)]))})'
                              ': upward (or sideways)')
    for name in sources:
        if name not in rank:
            continue
        with open(os.path.join(d, name + '.c')) as f:
            incs = re.findall(r'^#include "(\w+)\.h"', f.read(), re.M)
        for inc in incs:
            if inc != name and inc in rank and rank[inc] <= rank[name]:
                errors.append(f'{name}.c includes {inc}.h: upward '
                              '(or sideways)')
    return errors


def main():
    args = sys.argv[1:]
    graph = '--graph' in args
    args = [a for a in args if a != '--graph']
    header = None
    if '--map' in args:
        i = args.index('--map')
        header = args[i + 1]
        del args[i:i + 2]
    dirs = args
    if not dirs:
        print(__doc__)
        return 2
    if not shutil.which('nm'):
        print('nm not found')
        return 77
    objs = []
    for d in dirs:
        if not os.path.isdir(d):
            print(f'{d}: no such directory (not built?)')
            return 77
        objs += [os.path.join(d, f) for f in sorted(os.listdir(d))
                 if f.endswith('.o')]
    if not objs:
        print('no object files')
        return 77
    defs, undefs, owner = {}, {}, {}
    for o, (d, u) in symbols(objs).items():
        name = os.path.basename(o)[:-len('.o')]
        defs[name], undefs[name] = d, u
        for s in defs[name]:
            owner[s] = name
    edges = {n: set() for n in defs}
    why = {}
    for n, und in undefs.items():
        for s in und:
            m = owner.get(s)
            if m and m != n:
                edges[n].add(m)
                why.setdefault((n, m), []).append(s)
    if graph:
        for (a, b), syms in sorted(why.items()):
            print(f'{a} -> {b}: {" ".join(sorted(syms))}')
    circles = [c for c in sccs(sorted(defs), edges) if len(c) > 1]
    for c in circles:
        print(f'circle of {len(c)} files: {" ".join(c)}')
        for a in c:
            for b in sorted(edges[a] & set(c)):
                print(f'  {a} -> {b}: {" ".join(sorted(why[(a, b)]))}')
    nedges = sum(len(e) for e in edges.values())
    print(f'{len(defs)} files, {nedges} calls between them, '
          f'{len(circles)} circles')
    errors = []
    if header:
        rank = read_map(header)
        errors = [rank] if isinstance(rank, str) else \
            check_map(header, rank, edges, why)
        for e in errors:
            print(e)
        print(f'map {os.path.basename(header)}: {len(errors)} problems')
    return 1 if circles or errors else 0


if __name__ == '__main__':
    sys.exit(main())
