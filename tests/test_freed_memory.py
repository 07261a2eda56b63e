"""Freed memory kept for reuse (diagnostics.freed_memory): a freed 16 MB column stays with
the process for the next one instead of going back to the kernel; only the commands that
replay one capture many times ask for it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from diagnostics.cli import COMMANDS, KEEP_FREED_MEMORY

_CHILD = """
import sys
import numpy as np
from diagnostics.freed_memory import keep_freed_memory

def rss_kb():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmRSS:"))

applied = keep_freed_memory() if sys.argv[1] == "keep" else False
column = np.ones(2_000_000, dtype=np.int64)  # 16 MB, every page touched
held = rss_kb()
del column
print(applied, held - rss_kb())
"""


def _freed_kb(mode: str) -> tuple[bool, int]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, mode], capture_output=True, text=True, check=True
    )
    applied, freed = done.stdout.split()
    return applied == "True", int(freed)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator only")
def test_a_freed_column_is_kept_for_the_next_one() -> None:
    applied, kept_back = _freed_kb("keep")
    assert applied
    _, given_back = _freed_kb("default")
    assert given_back > 12_000, "by default a freed 16 MB column goes back to the kernel"
    assert kept_back < 2_000, "kept for reuse, a freed column stays with the process"


def test_only_commands_that_replay_many_times_keep_freed_memory() -> None:
    assert set(COMMANDS) >= KEEP_FREED_MEMORY
    assert "replay" not in KEEP_FREED_MEMORY  # its peak would rise (docs/performance.md)
