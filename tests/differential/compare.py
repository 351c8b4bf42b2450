#!/usr/bin/env python3
"""The differential suite (docs/reliability.md): every primitive of rune's
table against NumPy, and the float64 derivatives against PyTorch's autograd.

    compare.py --cases BUILD/tests/differential_cases --known known.txt --out cases.jsonl

runs differential_cases (tests/differential/cases.cpp), which writes each
case with its operands, parameters, eager result and (where its bits differ)
compiled result, then recomputes every case here (reference.py) and compares:

- exact bits where the answer is exact or correctly rounded (arithmetic,
  sqrt, comparisons, casts, integer and layout operations, rounding);
- within the ulp bounds of docs/accuracy.md for the transcendental
  functions, and within an error bound for sums, products and linear algebra;
- NaN-ness, infinities and the signs of zeros exactly, everywhere but the
  signs of zero results of sums and of linear algebra (their order of
  additions is theirs to choose);
- compiled results bit for bit equal to eager ones.

A mismatch listed in known.txt (each line citing its issue) is reported and
tolerated; any other fails the test. Exits 77 (meson's skip) when no python3
with NumPy is found; the derivative part is skipped with a message where
PyTorch is absent.
"""
import argparse
import importlib
import os
import subprocess
import sys


def find_numpy():
    """This interpreter if it has NumPy, else the system's python3 (a
    virtual environment may hide the system's packages), else None."""
    try:
        importlib.import_module('numpy')
        return sys.executable
    except ImportError:
        pass
    system = '/usr/bin/python3'
    if os.path.exists(system) and os.path.realpath(system) != os.path.realpath(sys.executable):
        if subprocess.run([system, '-c', 'import numpy'], capture_output=True).returncode == 0:
            return system
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--cases', required=True, help='the differential_cases program')
    parser.add_argument('--known', required=True, help='the list of known discrepancies')
    parser.add_argument('--out', required=True, help='where the cases are written')
    parser.add_argument('--verbose', action='store_true', help='every mismatch, known ones too')
    args = parser.parse_args()
    python = find_numpy()
    if python is None:
        print('skipped: python3-numpy is absent')
        return 77
    if python != sys.executable:  # run again under the python that has NumPy
        return subprocess.run([python] + sys.argv).returncode
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import check
    run = subprocess.run([args.cases, args.out], capture_output=True, text=True)
    sys.stdout.write(run.stdout)
    if run.returncode != 0:
        sys.stderr.write(run.stderr)
        print('differential: differential_cases failed')
        return 1
    return check.check_file(args.out, args.known, args.verbose)


if __name__ == '__main__':
    sys.exit(main())
