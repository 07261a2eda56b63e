"""Where the test suite's time goes: wall and CPU time of every test, as JSON lines.

A pytest plugin, loaded only when asked for (``-p tests.timing``, which
``ORDERDOC_TEST_TIMES=<file>`` makes scripts/run-tests.sh add). Every pytest-xdist worker
appends one line per test to ``<file>``::

    {"test": "tests/x/test_y.py::test_z", "worker": "gw0", "wall": 1.2, "cpu": 0.9}

``wall`` covers set-up, call and tear-down (so a session fixture's cost lands on the first test
that asks for it); ``cpu`` is the user + system time of the worker's process tree over the same
span: the worker, its live descendants (the Spark JVM, servers, commands run as processes)
and the children they reaped. A process that leaves the tree unreaped takes its CPU time
with it: a daemon that detaches, the JVM of a command run as a process (pyspark does not
wait for it, so it outlives its Python parent for a moment and is reaped by init), or a
server a fixture's tear-down kills with its children (the cluster tests' servers; the test
whose tear-down stops it can show 0: the figure is clamped there). For tests that start
JVMs in subprocesses the CPU figure is therefore a lower bound; in-process Spark (the
``spark`` session) is counted whole. ``scripts/test_times.py <file>`` sums it up. CPU time, unlike wall time,
hardly changes with the machine's load, so it is the number to compare between runs on a
shared machine; the longest worker's wall time is the run's critical path.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

_TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, list[str]] | None:
    """The parent pid and the fields after it of ``/proc/<pid>/stat``, or None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), fields


def tree_cpu(root: int) -> float:
    """User + system seconds of ``root``, its live descendants and the children they reaped."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        got = _stat(int(entry))
        if got is None:
            continue
        ppid, fields = got
        parents[int(entry)] = ppid
        # utime, stime, cutime, cstime are fields 14-17 of stat; fields[0] here is field 3
        times[int(entry)] = sum(int(v) for v in fields[11:15]) / _TICKS
    total = 0.0
    for pid, cpu in times.items():
        walk = pid
        while walk not in (root, 0, 1) and walk in parents:
            walk = parents[walk]
        if walk == root:
            total += cpu
    return total


class Timing:
    """Appends a line per test to the file named by ORDERDOC_TEST_TIMES."""

    def __init__(self, out: Path, worker: str) -> None:
        self.out = out
        self.worker = worker

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        wall, cpu = time.monotonic(), tree_cpu(os.getpid())
        yield
        line = {
            "test": item.nodeid,
            "worker": self.worker,
            "wall": round(time.monotonic() - wall, 3),
            "cpu": round(max(0.0, tree_cpu(os.getpid()) - cpu), 3),
        }
        with self.out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")


def pytest_configure(config: pytest.Config) -> None:
    out = os.environ.get("ORDERDOC_TEST_TIMES")
    if out:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        config.pluginmanager.register(Timing(Path(out).resolve(), worker), "orderdoc-timing")
