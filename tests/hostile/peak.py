#!/usr/bin/env python3
"""Run a command and print what it cost, as one JSON line on stdout:
{"code": exit status or null, "signal": signal or null, "secs": wall time,
 "peak_kib": peak resident set size in KiB}.

    peak.py STDOUT_FILE STDERR_FILE [--stdin FILE] COMMAND [ARG...]

The command's stdout and stderr go to the two files (/dev/null is fine);
its stdin comes from FILE, else /dev/null.
The peak comes from wait4's rusage of the command alone. Linux starts a
process's ru_maxrss at the peak of the memory it replaced at exec, which
for a forked child is its parent's: a large parent (a test binary holding
hundreds of MiB) would show up in every figure. This launcher is a small
process (about 10 MiB), so the figure is the command's own peak, or this
launcher's, whichever is higher. Used by tests/hostile (measure.rs) and
tests/hostile/soak.sh.
"""
import json
import os
import sys
import time


def main():
    out, err, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
    stdin = "/dev/null"
    if argv[:1] == ["--stdin"]:
        stdin, argv = argv[1], argv[2:]
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 1)
            fd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 2)
            fd = os.open(stdin, os.O_RDONLY)
            os.dup2(fd, 0)
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    secs = time.monotonic() - started
    print(json.dumps({
        "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "secs": round(secs, 3),
        "peak_kib": usage.ru_maxrss,
    }))


main()
