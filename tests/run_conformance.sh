#!/usr/bin/env bash
# Compiles one conformance program against the library, runs it, and compares
# its standard output with the expected text exactly.
#   run_conformance.sh PROGRAM.cpp EXPECTED WORKDIR INCLUDE_DIR LIBRUNE CXX...
# The program runs twice (see below). RUNE_LINK_LIBS: libraries librune.a
# needs beyond tbb and openblas (asmjit where the machine-code tier is built).
set -euo pipefail
program=$1 expected=$2 workdir=$3 include=$4 library=$5
shift 5
mkdir -p "$workdir"
exe="$workdir/$(basename "$program" .cpp)"
"$@" -std=c++20 -O1 -I"$include" "$program" "$library" ${RUNE_LINK_LIBS:-} -ltbb -lopenblas -pthread -o "$exe"
# It runs as the environment says, then with every scan promoted to machine
# code at once (RUNE_NATIVE=eager: the third executor, where it is built).
for native in "${RUNE_NATIVE:-on}" eager; do
  actual=$(RUNE_NATIVE=$native "$exe")
  if [ "$actual" != "$(cat "$expected")" ]; then
    echo "output differs from $expected (RUNE_NATIVE=$native):"
    diff <(echo "$actual") "$expected" || true
    exit 1
  fi
done
