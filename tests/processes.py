"""Stopping a server a test started: politely, then for good, always bounded in time."""

from __future__ import annotations

import subprocess


def stop_process(process: subprocess.Popen, timeout: float = 10) -> None:
    """Terminate ``process`` and wait up to ``timeout`` seconds; then kill it and wait again."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)
