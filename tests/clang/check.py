#!/usr/bin/env python3
"""Checks that the public headers compile with another compiler (clang):
every C++ file given, and every ```cpp block of every page given, is
compiled (-fsyntax-only: templates are instantiated, no code is generated)
with warnings as errors. A folder stands for its .cpp files and pages.

    check.py CXX INCLUDE_DIR WORKDIR FILE.cpp|PAGE.md|FOLDER...

An empty CXX (none found) skips the test: exit code 77.
"""
import concurrent.futures
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from run_doc import blocks  # noqa: E402  (the pages' blocks as the docs tests read them)


def expanded(paths):
    """The files and, in place of each folder, its .cpp and .md files."""
    for path in paths:
        if os.path.isdir(path):
            yield from sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith((".cpp", ".md")))
        else:
            yield path


def sources(paths, workdir):
    """Yields (name for messages, C++ file) for each file and page block."""
    for path in expanded(paths):
        if not path.endswith(".md"):
            yield path, path
            continue
        for lang, body, line in blocks(open(path).read()):
            if lang == "cpp":
                file = os.path.join(workdir, "%s_%d.cpp" % (os.path.basename(path)[:-3], line))
                with open(file, "w") as f:
                    f.write(body)
                yield "%s:%d" % (path, line), file


def main():
    cxx, include, workdir, *paths = sys.argv[1:]
    if not cxx:
        print("no clang++ found: skipped")
        sys.exit(77)
    os.makedirs(workdir, exist_ok=True)
    command = [cxx, "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-I" + include]
    found = list(sources(paths, workdir))
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        runs = pool.map(lambda s: subprocess.run(command + [s[1]], capture_output=True, text=True), found)
        failures = [(name, run.stderr) for (name, _), run in zip(found, runs) if run.returncode != 0]
    for name, errors in failures:
        print("%s: does not compile with %s:\n%s" % (name, cxx, errors))
    print("%d file(s) compiled with %s, %d failed" % (len(found), cxx, len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
