#!/bin/bash
# Runs each fuzz target for SECONDS:
#
#   fuzz/run.sh BUILD SECONDS
#
# from the repository root. A target reads the seeds in fuzz/corpus/NAME and
# adds what it finds new to BUILD/corpus/NAME (the repository's corpus stays
# as committed); its output goes to BUILD/fuzz_NAME.log and a crashing input
# to BUILD/findings/NAME-crash-*. Exits non-zero when a target finds a crash,
# a leak, a timeout or runs out of memory.
set -uo pipefail
build=$1
seconds=$2
status=0
for name in program repl; do
  mkdir -p "$build/corpus/$name" "$build/findings"
  log="$build/fuzz_$name.log"
  if "$build/fuzz/fuzz_$name" "$build/corpus/$name" "fuzz/corpus/$name" -dict="fuzz/$name.dict" \
      -max_total_time="$seconds" -timeout=10 -artifact_prefix="$build/findings/$name-" > "$log" 2>&1; then
    echo "fuzz_$name, ${seconds}s: $(grep -aE '^Done |DONE ' "$log" | tr '\t\n' '  ')"
  else
    status=1
    tail -n 40 "$log"
    echo "fuzz_$name FOUND A CRASH: see $log and $build/findings/"
  fi
done
exit $status
