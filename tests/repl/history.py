#!/usr/bin/env python3
"""Checks rune-repl's history file. On a terminal (a pseudo-terminal here)
each line typed is appended to $RUNE_REPL_HISTORY, and the next session
recalls it (Ctrl-P, readline's previous line); with stdin not a terminal,
no history is kept. The file is a temporary one: the user's is not touched.

    history.py REPL_EXE
"""
import os
import pty
import select
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def session(repl, env, keys):
    """Runs the REPL on a pseudo-terminal, typing each of `keys` at a
    prompt; returns what it printed."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(HERE)
        os.execve(repl, [repl], env)
    out = b""
    pending = list(keys)
    while True:
        ready, _, _ = select.select([fd], [], [], 10)
        if not ready:
            os.kill(pid, 9)
            sys.exit("rune-repl did not answer; it printed:\n" + out.decode(errors="replace"))
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # (the terminal closed: the REPL left)
            break
        if not chunk:
            break
        out += chunk
        if pending and out.endswith(b"(rune) "):
            os.write(fd, pending.pop(0))
    os.waitpid(pid, 0)
    return out.decode(errors="replace")


def main():
    repl = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as folder:
        history = os.path.join(folder, "history")
        env = dict(os.environ, RUNE_REPL_HISTORY=history, TERM="dumb")
        session(repl, env, [b"load cumulative.rune\r", b"   \r", b"quit\r"])
        with open(history) as f:
            kept = f.read()
        if kept != "load cumulative.rune\nquit\n":
            sys.exit("the history file holds %r" % kept)
        # Ctrl-P twice: the line before `quit`
        out = session(repl, env, [b"\x10\x10\r", b"quit\r"])
        if "loaded cumulative.rune" not in out:
            sys.exit("the next session did not recall the load; it printed:\n" + out)
        with open(history) as f:
            kept = f.read()
        if kept != "load cumulative.rune\nquit\nload cumulative.rune\nquit\n":
            sys.exit("after the second session, the history file holds %r" % kept)
        # not a terminal: no history
        os.remove(history)
        subprocess.run([repl], input="help\n", env=env, cwd=HERE, capture_output=True, text=True, check=True)
        if os.path.exists(history):
            sys.exit("a session on a pipe wrote a history file")
    print("history: ok")


if __name__ == "__main__":
    main()
