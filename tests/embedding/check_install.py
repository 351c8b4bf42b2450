#!/usr/bin/env python3
"""A program builds against an installed rune through pkg-config alone.

Usage: check_install.py MESON BUILD_ROOT DESTDIR PREFIX INCLUDEDIR LIBDIR GAME_CPP GAME_EXPECTED CXX...

Installs the build tree's headers, librune.a and rune.pc (`meson install
--tags devel`) into DESTDIR, checks the layout docs/embedding.md gives,
compiles GAME_CPP with CXX and the flags of `pkg-config --cflags --libs rune`
read from the staged rune.pc (relocatable: it points into DESTDIR), runs it
and compares its output with GAME_EXPECTED.
"""
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path


def run(cmd, **kwargs) -> str:
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{shlex.join(map(str, cmd))} exited {result.returncode}\n{result.stdout}{result.stderr}")
    return result.stdout


def main() -> int:
    meson, build_root, destdir, prefix, includedir, libdir, game_cpp, game_expected = sys.argv[1:9]
    cxx = sys.argv[9:]
    stage = Path(destdir)
    shutil.rmtree(stage, ignore_errors=True)
    run([meson, 'install', '-C', build_root, '--no-rebuild', '--tags', 'devel', '--destdir', stage])

    # The prefix, includedir and libdir as configured, under DESTDIR.
    def staged(*parts: str) -> Path:
        return Path(str(stage) + os.path.join(prefix, *parts))

    pkgconfig_dir = staged(libdir, 'pkgconfig')
    layout = [staged(includedir, 'rune', 'rune.hpp'), staged(libdir, 'librune.a'), pkgconfig_dir / 'rune.pc']
    missing = [str(p) for p in layout if not p.is_file()]
    if missing:
        print('FAIL: not installed:', *missing, sep='\n  ')
        return 1

    pc_file = (pkgconfig_dir / 'rune.pc').read_text()
    if 'prefix=${pcfiledir}' not in pc_file:
        print('FAIL: rune.pc is not relocatable (a build dir configured before rune set '
              'pkgconfig.relocatable=true by default): meson configure BUILD -Dpkgconfig.relocatable=true')
        return 1
    env = dict(os.environ, PKG_CONFIG_PATH=str(pkgconfig_dir))
    flags = shlex.split(run(['pkg-config', '--cflags', '--libs', 'rune'], env=env))
    print('pkg-config --cflags --libs rune:', shlex.join(flags))
    if f'-I{staged(includedir)}' not in [os.path.normpath(f) for f in flags]:
        print('FAIL: the flags do not point at the staged headers')
        return 1

    game = stage / 'game'
    run(cxx + [game_cpp, '-o', str(game)] + flags)
    output = run([str(game)])
    expected = Path(game_expected).read_text()
    if output != expected:
        print(f'FAIL: the program printed\n{output}\ninstead of\n{expected}')
        return 1
    print(output, end='')
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except RuntimeError as e:
        print('FAIL:', e)
        sys.exit(1)
