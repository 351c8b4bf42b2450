#!/usr/bin/env bash
# Compiles one conformance program against the library, runs it, and compares
# its standard output with the expected text exactly.
#   run_conformance.sh PROGRAM.cpp EXPECTED WORKDIR INCLUDE_DIR LIBRUNE CXX...
set -euo pipefail
program=$1 expected=$2 workdir=$3 include=$4 library=$5
shift 5
mkdir -p "$workdir"
exe="$workdir/$(basename "$program" .cpp)"
"$@" -std=c++20 -O1 -I"$include" "$program" "$library" -ltbb -lopenblas -pthread -o "$exe"
actual=$("$exe")
if [ "$actual" != "$(cat "$expected")" ]; then
  echo "output differs from $expected:"
  diff <(echo "$actual") "$expected" || true
  exit 1
fi
