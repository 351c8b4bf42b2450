#!/usr/bin/env python3
"""Runs a job (mpiexec ...) and checks how it ended: its exit status, zero
or not, and lines its output (stdout and stderr together) must hold.

    expect_job.py ok|fails [--line TEXT]... -- COMMAND...
"""
import subprocess
import sys


def main():
    args = sys.argv[1:]
    split = args.index("--")
    status, options, command = args[0], args[1:split], args[split + 1:]
    lines = [options[i + 1] for i in range(0, len(options), 2) if options[i] == "--line"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=100)
    output = run.stdout + run.stderr
    failed = []
    if (run.returncode == 0) != (status == "ok"):
        failed.append("the job exited with %d (expected %s)" % (run.returncode, status))
    failed += ["no line holds: %s" % want for want in lines if not any(want in line for line in output.splitlines())]
    if failed:
        print("\n".join(failed) + "\n--- the job's output\n" + output)
        sys.exit(1)
    print("ok: %s" % " ".join(command))


if __name__ == "__main__":
    main()
