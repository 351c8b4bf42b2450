#!/usr/bin/env python3
"""rune as a subproject builds its library alone and installs nothing.

Usage: check_subproject.py MESON CONSUMER_DIR RUNE_SOURCE_ROOT WORK_DIR

Copies the consumer project (tests/embedding/consumer) into a fresh folder
under WORK_DIR, links the rune source tree in as its subprojects/rune,
configures it (without downloading anything, and with the subproject even
where an installed rune exists) and reads `meson introspect`: the targets are
the consumer's executable and rune's libraries only, nothing is installed,
and neither Catch2 nor readline was looked up. The consumer keeps meson's
default buildtype (debug, -O0): its own code compiles at -O0 and rune's at
-O2; configured again with -Drune:parent_optimization=true, rune's at -O0.
"""
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ALLOWED_RUNE_TARGETS = ('rune', 'rune_kernels', 'rune_simd_')  # librune.a and its kernels
TEST_ONLY_DEPENDENCIES = ('catch2', 'readline')


def introspect(meson: str, build: Path, what: str):
    out = subprocess.run([meson, 'introspect', str(build), what], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def optimization_levels(meson: str, build: Path) -> dict:
    """The -O flag each target's sources compile with (the last one given), by (subproject, name)."""
    levels = {}
    for t in introspect(meson, build, '--targets'):
        for group in t['target_sources']:
            flags = [f for f in group.get('parameters', []) if f.startswith('-O')]
            levels.setdefault((t['subproject'], t['name']), set()).add(flags[-1] if flags else 'none')
    return levels


def configure(meson: str, build: Path, project: Path, *options: str) -> bool:
    setup = subprocess.run([meson, 'setup', str(build), str(project), '--wrap-mode=nodownload',
                            '--force-fallback-for=rune', *options], capture_output=True, text=True)
    if setup.returncode != 0:
        print(setup.stdout, setup.stderr, sep='\n')
        print('FAIL: the consumer project does not configure', *options)
    return setup.returncode == 0


def check_optimization(levels: dict, rune_level: str) -> list:
    problems = []
    for (sub, name), flags in sorted(levels.items(), key=str):
        want = rune_level if sub == 'rune' else '-O0'
        print(f"{name}{' (rune)' if sub else ''} compiles with {', '.join(sorted(flags))}")
        if flags != {want}:
            problems.append(f'{name} compiles with {sorted(flags)}, not {want}')
    return problems


def main() -> int:
    meson, consumer, rune_root, work = sys.argv[1:5]
    Path(work).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work, prefix='subproject-') as tmp:
        project = Path(tmp) / 'game'
        shutil.copytree(consumer, project)
        (project / 'subprojects').mkdir()
        (project / 'subprojects' / 'rune').symlink_to(Path(rune_root).resolve(), target_is_directory=True)
        build = Path(tmp) / 'build'
        if not configure(meson, build, project):
            return 1

        problems = []
        targets = introspect(meson, build, '--targets')
        for t in targets:
            name, sub = t['name'], t['subproject']
            print(f"target {name} ({t['type']}{', subproject ' + sub if sub else ''})")
            if sub is None:
                ok = name == 'game'
            else:
                ok = sub == 'rune' and t['type'] == 'static library' and name.startswith(ALLOWED_RUNE_TARGETS)
            if not ok:
                problems.append(f'unexpected target {name}')
        if not any(t['name'] == 'rune' and t['subproject'] == 'rune' for t in targets):
            problems.append('no librune target')
        installed = introspect(meson, build, '--installed')
        if installed:
            problems.append(f'installs {sorted(installed.values())}')
        looked_up = [d['name'] for d in introspect(meson, build, '--dependencies')]
        problems += [f'looked up {d}' for d in looked_up if d.lower().startswith(TEST_ONLY_DEPENDENCIES)]

        problems += check_optimization(optimization_levels(meson, build), '-O2')
        as_parent = Path(tmp) / 'build-as-parent'
        if not configure(meson, as_parent, project, '-Drune:parent_optimization=true'):
            return 1
        problems += check_optimization(optimization_levels(meson, as_parent), '-O0')

        for p in problems:
            print('FAIL:', p)
        if not problems:
            print(f'{len(targets)} targets: the game and rune\'s library only; nothing installed')
        return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
