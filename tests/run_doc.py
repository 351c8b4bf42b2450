#!/usr/bin/env python3
"""Checks a documentation page: every ```cpp block is a complete program that
is compiled against the library and run, and so is every ```c block
(compiled as C99 by $RUNE_CC, the build's C compiler, or `cc`; linked by
the C++ compiler); when an ```output
block follows one, the program's standard output must equal that block
exactly. The programs run in the page's order. Each program's lines are
the page's (a #line directive), so the places that errors name
("(at getting-started.md:70)") are lines of the page.

    run_doc.py PAGE.md WORKDIR INCLUDE_DIR LIBRUNE CXX...
(RUNE_LINK_LIBS: libraries librune.a needs beyond tbb and openblas;
RUNE_DOC_LAUNCH: a command that runs each program, as `mpiexec -n 2`.)
"""
import os
import re
import subprocess
import sys

FENCE = re.compile(r"^```(\w*)\s*$")


def blocks(text):
    """Yields (language, body, line) for each fenced block of the page."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m and m.group(1):
            start = i
            body = []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            yield m.group(1), "\n".join(body) + "\n", start + 1
        i += 1


def main():
    page, workdir, include, library, *cxx = sys.argv[1:]
    os.makedirs(workdir, exist_ok=True)
    found = list(blocks(open(page).read()))
    failures = 0
    for k, (lang, body, line) in enumerate(found):
        if lang not in ("cpp", "c"):
            continue
        expected = found[k + 1][1] if k + 1 < len(found) and found[k + 1][0] == "output" else None
        stem = os.path.join(workdir, "%s_%d" % (os.path.basename(page)[:-3], line))
        with open(stem + "." + lang, "w") as f:
            f.write('#line %d "%s"\n' % (line + 1, os.path.basename(page)))
            f.write(body)
        source = [stem + ".cpp"]
        if lang == "c":
            source = [stem + ".o"]
            build = subprocess.run(os.environ.get("RUNE_CC", "cc").split() + ["-std=c99", "-Wall", "-Wextra", "-I" + include, "-c", stem + ".c", "-o", stem + ".o"],
                                   capture_output=True, text=True)
            if build.returncode != 0:
                print("%s:%d: the C program does not compile:\n%s" % (page, line, build.stderr))
                failures += 1
                continue
        build = subprocess.run(cxx + ["-std=c++20", "-O1", "-I" + include] + source + [library] +
                               os.environ.get("RUNE_LINK_LIBS", "").split() + ["-ltbb", "-lopenblas", "-pthread", "-o", stem],
                               capture_output=True, text=True)
        if build.returncode != 0:
            print("%s:%d: the program does not compile:\n%s" % (page, line, build.stderr))
            failures += 1
            continue
        run = subprocess.run(os.environ.get("RUNE_DOC_LAUNCH", "").split() + [stem], capture_output=True, text=True)
        if run.returncode != 0:
            print("%s:%d: the program exited with %d:\n%s" % (page, line, run.returncode, run.stderr))
            failures += 1
        elif expected is not None and run.stdout != expected:
            print("%s:%d: the output differs.\n--- printed\n%s--- documented\n%s" % (page, line, run.stdout, expected))
            failures += 1
    print("%s: %d program(s) checked, %d failed" % (page, sum(1 for b in found if b[0] in ("cpp", "c")), failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
