#!/bin/sh
# Runs rune-repl on a session file and compares what it prints with the
# expected transcript, exactly (rune-repl echoes each command after its
# prompt when stdin is not a terminal, so the transcript reads as typed).
#
#   run_session.sh REPL_EXE SESSION.in EXPECTED [REPL ARGUMENTS...]
#
# The REPL runs in this folder, so sessions name programs relative to it.
# With MASK_TIMES=1 in the environment, times ("1.234 us") and shares
# ("12.3%"), with the spaces before them, read as " T" and " P%" (a
# profile's figures vary).
set -eu
absolute() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
repl=$(absolute "$1")
session=$(absolute "$2")
expected=$(absolute "$3")
shift 3
cd "$(dirname "$0")"
actual=$(mktemp)
trap 'rm -f "$actual"' EXIT
status=0
"$repl" "$@" < "$session" > "$actual" || status=$?
if [ "${MASK_TIMES:-0}" = 1 ]; then
  sed -E -i 's/ +[0-9]+\.[0-9]+ (us|ms|s)( |$)/ T\2/g; s/ +[0-9]+\.[0-9]%/ P%/g' "$actual"
fi
if [ "$status" -ne 0 ]; then
  echo "rune-repl exited with status $status" >&2
  cat "$actual" >&2
  exit 1
fi
diff -u "$expected" "$actual"
