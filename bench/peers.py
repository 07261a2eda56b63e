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
