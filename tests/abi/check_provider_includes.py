#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A provider builds against the installed SDK only: nothing under
providers/ may reach a header of the core's private lib/ directory.

Usage: check_provider_includes.py SOURCE_ROOT BUILD_ROOT

Two ways a provider could reach lib/, both checked:

1. Its sources. Every `#include "x"` must resolve, the way the compiler
   resolves it before any -I, to a file in the including file's directory,
   the provider's own directory or the common providers/ directory. A
   quoted include found nowhere there only compiles through an -I path
   (today: lib/). Any include, quoted or <angled>, naming a private core
   header (idm_internal.h, core.h, a provider.h that is not
   <libidm/provider.h>, or any header lib/ holds) is refused too, as is a
   path that climbs out of providers/.
2. Its build. No target defined under providers/ may carry an include
   path (-I, -isystem, -iquote) inside lib/ of the source or build tree,
   whether it comes from include_directories or from a dependency; the
   compile arguments meson records (meson-info/intro-targets.json) are
   the ground truth. The meson.build lines that name something carrying
   lib/ are printed to show where it comes from.

Every finding is printed as file:line: what. Exit 1 on any finding.
"""
import json
import os
import re
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
# The core's private headers by name, besides whatever lib/ holds now:
# a provider naming one of them reaches into the core however it is found.
ALWAYS_PRIVATE = {'idm_internal.h', 'core.h', 'idm_uthash.h', 'ctx_priv.h'}
SOURCE_EXT = ('.c', '.h', '.inc', '.cc', '.cpp')


def strip_comments(text):
    """Blank out comments, keeping line numbers, so a commented-out
    #include is not a finding."""
    def blank(m):
        return re.sub(r'[^\n]', ' ', m.group(0))
    return re.sub(r'/\*.*?\*/|//[^\n]*', blank, text, flags=re.S)


def inside(path, root):
    path = os.path.realpath(path)
    root = os.path.realpath(root)
    return path == root or path.startswith(root + os.sep)


def lib_headers(src):
    lib = os.path.join(src, 'lib')
    names = set()
    for dirpath, _, files in os.walk(lib):
        for f in files:
            if f.endswith('.h'):
                names.add(f)
    return names


def provider_dir(src, path):
    """providers/<name> holding path, or providers/ for a common file."""
    rel = os.path.relpath(path, os.path.join(src, 'providers'))
    first = rel.split(os.sep)[0]
    d = os.path.join(src, 'providers', first)
    return d if os.path.isdir(d) else os.path.join(src, 'providers')


def check_sources(src):
    findings = []
    providers = os.path.join(src, 'providers')
    private = ALWAYS_PRIVATE | lib_headers(src)
    nfiles = 0
    for dirpath, _, files in os.walk(providers):
        for f in sorted(files):
            if not f.endswith(SOURCE_EXT):
                continue
            path = os.path.join(dirpath, f)
            nfiles += 1
            rel = os.path.relpath(path, src)
            with open(path, encoding='utf-8', errors='replace') as fh:
                text = strip_comments(fh.read())
            for lineno, line in enumerate(text.splitlines(), 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                kind, name = m.groups()
                base = os.path.basename(name)
                where = f'{rel}:{lineno}'
                shown = f'#include {kind}{name}{">" if kind == "<" else kind}'
                if name == 'libidm/provider.h' or name.startswith('libidm/'):
                    if kind == '"':
                        # "libidm/x.h" is fine only if it is not a copy
                        # in providers/; the installed one is <libidm/x.h>
                        findings.append(f'{where}: {shown}: the installed '
                                        f'SDK is included as <{name}>')
                    continue
                if base in private:
                    findings.append(f'{where}: {shown}: a private header of '
                                    f'the core (lib/{base})')
                    continue
                if kind == '<':
                    continue
                cands = [os.path.join(dirpath, name),
                         os.path.join(provider_dir(src, path), name),
                         os.path.join(providers, name)]
                found = [c for c in cands if os.path.isfile(c)]
                if not found:
                    dirs = []
                    for d in (dirpath, provider_dir(src, path), providers):
                        r = os.path.relpath(d, src) + '/'
                        if r not in dirs:
                            dirs.append(r)
                    findings.append(f'{where}: {shown}: not a file in {", ".join(dirs)}: '
                                    'it compiles only through an -I path outside providers/')
                elif not inside(found[0], providers):
                    findings.append(f'{where}: {shown}: resolves to '
                                    f'{os.path.relpath(os.path.realpath(found[0]), src)}, '
                                    'outside providers/')
    if nfiles == 0:
        findings.append('providers/: no source file found; nothing was checked')
    return findings


def lib_carrying_names(src):
    """meson variables whose value carries lib/: include_directories()
    naming lib (or made in lib/meson.build), and dependencies declared
    with one of them. Only used to point at the meson.build line."""
    assign = re.compile(r'^\s*(\w+)\s*(?:\+)?=\s*(.*)$')
    texts = {}
    for dirpath, dirs, files in os.walk(src):
        # prune build trees (they hold meson-private/) and .git
        dirs[:] = [d for d in dirs if d != '.git' and
                   not os.path.isdir(os.path.join(dirpath, d, 'meson-private'))]
        if 'meson.build' in files:
            p = os.path.join(dirpath, 'meson.build')
            with open(p, encoding='utf-8') as fh:
                texts[p] = fh.read()
    # statements: an assignment runs until its parentheses balance
    stmts = []
    for p, text in texts.items():
        lines = text.splitlines()
        i = 0
        while i < len(lines):
            m = assign.match(lines[i])
            if not m:
                i += 1
                continue
            body, depth, j = m.group(2), 0, i
            depth = body.count('(') + body.count('[') - body.count(')') - body.count(']')
            while depth > 0 and j + 1 < len(lines):
                j += 1
                body += '\n' + lines[j]
                depth += lines[j].count('(') + lines[j].count('[') \
                    - lines[j].count(')') - lines[j].count(']')
            stmts.append((p, m.group(1), body))
            i = j + 1
    names = set()
    changed = True
    while changed:
        changed = False
        for p, name, body in stmts:
            if name in names:
                continue
            in_lib = inside(os.path.dirname(p), os.path.join(src, 'lib'))
            code = re.sub(r"'[^']*'", "''", body)
            carries = False
            # include_directories('lib'...), or any made in lib/meson.build
            for args in re.findall(r"include_directories\(([^)]*)\)", body):
                for lit in re.findall(r"'([^']*)'", args):
                    if in_lib or 'lib' in lit.replace('\\', '/').split('/'):
                        carries = True
            # a dependency declared with such include paths or dependencies
            if re.match(r'\s*declare_dependency\(', body) and \
                    any(re.search(r'\b%s\b' % re.escape(n), code) for n in names):
                carries = True
            # a plain list or copy of such names
            if re.match(r'\s*[\[\w]', body) and '(' not in code and \
                    any(re.search(r'\b%s\b' % re.escape(n), code) for n in names):
                carries = True
            if carries:
                names.add(name)
                changed = True
    return names


def check_build(src, build):
    findings = []
    intro = os.path.join(build, 'meson-info', 'intro-targets.json')
    try:
        with open(intro, encoding='utf-8') as fh:
            targets = json.load(fh)
    except OSError as e:
        return [f'{intro}: {e.strerror}: cannot read the build\'s include paths']
    lib_roots = [os.path.join(src, 'lib'), os.path.join(build, 'lib')]
    names = lib_carrying_names(src)
    providers = os.path.join(src, 'providers')
    seen = 0
    for t in targets:
        defined = t.get('defined_in', '')
        if not inside(defined, providers):
            continue
        seen += 1
        bad = []
        for s in t.get('target_sources', []):
            params = s.get('parameters', [])
            for k, p in enumerate(params):
                path = None
                for flag in ('-I', '-isystem', '-iquote'):
                    if p == flag and k + 1 < len(params):
                        path = params[k + 1]
                    elif p.startswith(flag) and len(p) > len(flag):
                        path = p[len(flag):]
                if path and any(inside(path, r) for r in lib_roots) and path not in bad:
                    bad.append(path)
        if not bad:
            continue
        rel = os.path.relpath(defined, src)
        hints = []
        with open(defined, encoding='utf-8') as fh:
            for lineno, line in enumerate(fh, 1):
                code = line.split('#', 1)[0]
                bare = re.sub(r"'[^']*'", "''", code)
                hit = [n for n in sorted(names) if re.search(r'\b%s\b' % re.escape(n), bare)]
                lits = [l for l in re.findall(r"'([^']*)'", code)
                        if 'include_directories' in code and 'lib' in l.split('/')]
                if hit or lits:
                    hints.append(f'{rel}:{lineno}: {line.strip()}  (carries lib/: '
                                 f'{", ".join(hit + lits)})')
        shown = ', '.join(os.path.relpath(b, src) if inside(b, src) else b for b in bad)
        findings.append(f'{rel}: target {t["name"]}: include path into lib/: {shown}')
        findings.extend('  ' + h for h in hints)
    if seen == 0:
        findings.append(f'{intro}: no target defined under providers/; nothing was checked')
    return findings


def main():
    if len(sys.argv) != 3:
        print(__doc__.splitlines()[3], file=sys.stderr)
        return 2
    src, build = (os.path.realpath(a) for a in sys.argv[1:3])
    findings = check_sources(src) + check_build(src, build)
    for f in findings:
        print(f)
    if findings:
        print(f'FAIL: providers/ reaches the core\'s private lib/ '
              f'({sum(1 for f in findings if not f.startswith("  "))} findings)')
        return 1
    print('OK: no provider source or build reaches lib/')
    return 0


if __name__ == '__main__':
    sys.exit(main())
