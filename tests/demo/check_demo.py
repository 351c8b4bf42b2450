#!/usr/bin/env python3
"""Runs the demo in its short mode and checks what it says and writes: it
exits with 0, the loss on its progress lines decreases, the adjoint agrees
with central differences, the loaded program gives the compiled bits, and
every SVG file it names parses as XML with an <svg> root and a polyline.

    check_demo.py DEMO OUTDIR
"""
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def fail(message, output):
    print(output)
    print("FAILED: " + message)
    sys.exit(1)


def main():
    demo, out = sys.argv[1:]
    run = subprocess.run([demo, "--short", "--out", out], capture_output=True, text=True, timeout=120)
    output = run.stdout + run.stderr
    if run.returncode != 0:
        fail("the demo exited with %d" % run.returncode, output)

    losses = [float(m.group(1)) for m in re.finditer(r"^\s*step\s+\d+\s+loss\s+(\S+)", output, re.M)]
    if len(losses) < 3:
        fail("%d progress lines, expected 3 or more" % len(losses), output)
    if any(b >= a for a, b in zip(losses, losses[1:])):
        fail("the loss does not decrease from line to line: %s" % losses, output)
    if not re.search(r"^\s*largest difference / largest entry: \S+: they agree$", output, re.M):
        fail("no line saying the adjoint agrees with central differences", output)
    if "the same bits as the compiled flight" not in output:
        fail("the loaded program does not give the compiled flight's bits", output)

    figures = re.findall(r"^\s*(\S+\.svg)$", output, re.M)
    if len(figures) < 4:
        fail("%d SVG files named, expected 4" % len(figures), output)
    for path in figures:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as e:
            fail("%s: %s" % (path, e), output)
        if root.tag != SVG + "svg":
            fail("%s: the root is <%s>, not <svg>" % (path, root.tag), output)
        if root.find(".//" + SVG + "polyline") is None and root.find(".//" + SVG + "path") is None:
            fail("%s: no polyline or path" % path, output)
    print(output)
    print("the demo ran; %d progress lines, %d figures checked" % (len(losses), len(figures)))


if __name__ == "__main__":
    main()
