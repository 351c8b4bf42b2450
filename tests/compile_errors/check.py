#!/usr/bin/env python3
"""The catalogue of misuses: each .cpp file of the folder must fail to
compile, and the first error line must hold the text its first line gives
after `// error: `.

    check.py FOLDER INCLUDE_DIR CXX...
"""
import concurrent.futures
import os
import subprocess
import sys


def first_error(output):
    for line in output.splitlines():
        if "error:" in line:
            return line
    return None


def check(path, include, cxx):
    with open(path) as f:
        first = f.readline()
    if not first.startswith("// error: "):
        return "%s: the first line must be `// error: <text of the first error>`" % path
    want = first[len("// error: "):].strip()
    run = subprocess.run(cxx + ["-std=c++20", "-fsyntax-only", "-I" + include, path], capture_output=True, text=True)
    if run.returncode == 0:
        return "%s: compiled; it must fail with %r" % (path, want)
    got = first_error(run.stderr)
    if got is None or want not in got:
        return "%s: the first error is\n  %s\nnot one holding\n  %s" % (path, got, want)
    return None


def main():
    folder, include, *cxx = sys.argv[1:]
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".cpp"))
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        problems = [p for p in pool.map(lambda f: check(f, include, cxx), files) if p]
    for p in problems:
        print(p)
    print("%d misuse(s) checked, %d wrong" % (len(files), len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
