#!/usr/bin/env python3
"""rune as a subproject builds its library alone and installs nothing.

Usage: check_subproject.py MESON CONSUMER_DIR RUNE_SOURCE_ROOT WORK_DIR

Copies the consumer project (tests/embedding/consumer) into a fresh folder
under WORK_DIR, links the rune source tree in as its subprojects/rune,
configures it (without downloading anything, and with the subproject even
where an installed rune exists) and reads `meson introspect`: the targets are
the consumer's executable and rune's libraries only, nothing is installed,
and neither Catch2 nor readline was looked up.
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


def main() -> int:
    meson, consumer, rune_root, work = sys.argv[1:5]
    Path(work).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work, prefix='subproject-') as tmp:
        project = Path(tmp) / 'game'
        shutil.copytree(consumer, project)
        (project / 'subprojects').mkdir()
        (project / 'subprojects' / 'rune').symlink_to(Path(rune_root).resolve(), target_is_directory=True)
        build = Path(tmp) / 'build'
        setup = subprocess.run([meson, 'setup', str(build), str(project), '--wrap-mode=nodownload',
                                '--force-fallback-for=rune'], capture_output=True, text=True)
        if setup.returncode != 0:
            print(setup.stdout, setup.stderr, sep='\n')
            print('FAIL: the consumer project does not configure')
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

        for p in problems:
            print('FAIL:', p)
        if not problems:
            print(f'{len(targets)} targets: the game and rune\'s library only; nothing installed')
        return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
