#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The iSER provider's files call each other one way only.

providers/iser/iser.h lists the files from top to bottom; each .c file may
include only the headers of the files listed below it (iser.h itself, with
the shared types, is everyone's). Fails on an upward include, on a file the
list does not name, and on a listed file that does not exist, so the map a
reader trusts cannot drift from the code; and on a quoted include of
anything but the provider's own headers and prov_env.h (the core is reached
only through <libidm/provider.h>).

usage: check_layers.py PROVIDER_DIR
"""
import os
import re
import sys


def main():
    d = sys.argv[1]
    with open(os.path.join(d, 'iser.h')) as f:
        head = f.read()
    m = re.search(r'calls flow one way, top to bottom:\n(.*?)\n \*\n', head, re.S)
    if not m:
        print('iser.h: no file map ("calls flow one way, top to bottom:")')
        return 1
    rank = {}
    for i, line in enumerate(m.group(1).splitlines()):
        for name in re.findall(r'(iser_\w+)\.c', line):
            rank[name] = i
    errors = []
    sources = sorted(f[:-2] for f in os.listdir(d) if f.endswith('.c'))
    for name in sources:
        if name not in rank:
            errors.append(f'{name}.c is not in the map in iser.h')
    for name in rank:
        if name not in sources:
            errors.append(f'iser.h maps {name}.c, which does not exist')
    own = {f for f in os.listdir(d) if f.endswith('.h')} | {'prov_env.h'}
    for f in sorted(os.listdir(d)):
        if not f.endswith(('.c', '.h')):
            continue
        with open(os.path.join(d, f)) as fh:
            for inc in re.findall(r'^#include "([^"]+)"', fh.read(), re.M):
                if inc not in own:
                    errors.append(f'{f} includes "{inc}", not a header of '
                                  'the provider')
    for name in sources:
        if name not in rank:
            continue
        with open(os.path.join(d, name + '.c')) as f:
            incs = re.findall(r'^#include "(iser_\w+)\.h"', f.read(), re.M)
        for inc in incs:
            if inc == name:
                continue
            if inc not in rank:
                errors.append(f'{name}.c includes {inc}.h, of no mapped file')
            elif rank[inc] <= rank[name]:
                errors.append(f'{name}.c includes {inc}.h: a call upward '
                              '(or sideways)')
    for e in errors:
        print(e)
    print(f'{len(sources)} files, {len(errors)} problems')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
