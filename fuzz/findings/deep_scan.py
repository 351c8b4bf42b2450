#!/usr/bin/env python3
# Writes a program of DEPTH scans, each in the previous one's step (default
# 2000): the parser recurses once per level and overflows the stack (ASan
# reports stack-overflow from about 1,500 levels in the fuzz build).
#
#   python3 fuzz/findings/deep_scan.py > /tmp/deep.txt
#   build-fuzz/fuzz/fuzz_program /tmp/deep.txt
import sys

depth = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
lines = []
for level in range(depth + 1):
    p = 2 * level
    lines.append(f"program (%{p} : float64 [] at CPU)")
    if level < depth:
        lines.append(f"%{p + 1} : float64 [] at CPU = scan 1 rows, init (%{p}), xs (), captures ()")
        lines.append("step")
for level in range(depth, -1, -1):
    lines.append(f"return %{2 * level + 1}" if level < depth else f"return %{2 * level}")
sys.stdout.write("\n".join(lines) + "\n")
