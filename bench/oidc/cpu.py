#!/usr/bin/env python3
"""CPU seconds (user + system) spent so far by the given processes and all
their live descendants, from /proc: one number. A process that exited
between two readings takes its time with it, so give long-lived ones
(trifactord, PostgreSQL's postmaster with its pooled backends, gunicorn's
master with its workers, nginx's master with its workers).

Usage: cpu.py PID...
"""
import os
import sys

TICK = os.sysconf("SC_CLK_TCK")


def children():
    kids = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(entry))
    return kids


def cpu(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


kids = children()
seen, todo, total = set(), [int(p) for p in sys.argv[1:] if p], 0.0
while todo:
    pid = todo.pop()
    if pid in seen:
        continue
    seen.add(pid)
    total += cpu(pid)
    todo.extend(kids.get(pid, []))
print(f"{total:.2f}")
