"""Shared helpers for benchmarks: run a command as a whole process, measure time and peak RSS."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Run:
    """Wall-clock seconds, CPU seconds (user + system) and peak resident memory (MB)."""

    seconds: float
    cpu_seconds: float
    peak_mb: float


def measure(cmd: list[str], *, env: dict[str, str] | None = None) -> Run:
    """Run ``cmd`` to completion (output discarded); raise if it fails."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        msg = f"{' '.join(cmd)} failed ({proc.returncode}): {err[-2000:]}"
        raise RuntimeError(msg)
    return Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def _tree_sample(root: int) -> tuple[float, float]:
    """(CPU seconds, resident MB) of ``root`` and its live descendants, from /proc."""
    parents: dict[int, int] = {}
    stats: dict[int, tuple[float, float]] = {}
    tick, page = os.sysconf("SC_CLK_TCK"), os.sysconf("SC_PAGE_SIZE")
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        cpu = (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) / tick
        stats[int(entry.name)] = (cpu, int(fields[21]) * page / 2**20)
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in tree]
        tree.update(children)
        frontier.extend(children)
    found = [stats[pid] for pid in tree if pid in stats]
    return sum(c for c, _ in found), sum(m for _, m in found)


def measure_tree(cmd: list[str], *, env: dict[str, str] | None = None, every: float = 0.25) -> Run:
    """Like :func:`measure`, for commands that start processes they may not reap (Spark's
    JVM): CPU and peak memory are sampled over the whole process tree every ``every``
    seconds (the sum of the tree's resident sets; CPU includes reaped children)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    peak, cpu = 0.0, 0.0
    while proc.poll() is None:
        tree_cpu, rss = _tree_sample(proc.pid)
        peak, cpu = max(peak, rss), max(cpu, tree_cpu)
        time.sleep(every)
    seconds = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        msg = f"{' '.join(cmd)} failed ({proc.returncode}): {err[-2000:]}"
        raise RuntimeError(msg)
    return Run(seconds, cpu, peak)
